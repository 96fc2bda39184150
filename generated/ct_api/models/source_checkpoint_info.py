from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SourceCheckpointInfo")


@_attrs_define
class SourceCheckpointInfo:
    """Create-time initialization: checkpoint_id (with source_job_id for another job's checkpoint), or external_stage_path
    alone. The service stamps stage credentials itself.

        Attributes:
            checkpoint_id (None | str | Unset):
            source_job_id (None | str | Unset):
            external_stage_path (None | str | Unset):
    """

    checkpoint_id: None | str | Unset = UNSET
    source_job_id: None | str | Unset = UNSET
    external_stage_path: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        checkpoint_id: None | str | Unset
        if isinstance(self.checkpoint_id, Unset):
            checkpoint_id = UNSET
        else:
            checkpoint_id = self.checkpoint_id

        source_job_id: None | str | Unset
        if isinstance(self.source_job_id, Unset):
            source_job_id = UNSET
        else:
            source_job_id = self.source_job_id

        external_stage_path: None | str | Unset
        if isinstance(self.external_stage_path, Unset):
            external_stage_path = UNSET
        else:
            external_stage_path = self.external_stage_path

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if checkpoint_id is not UNSET:
            field_dict["checkpoint_id"] = checkpoint_id
        if source_job_id is not UNSET:
            field_dict["source_job_id"] = source_job_id
        if external_stage_path is not UNSET:
            field_dict["external_stage_path"] = external_stage_path

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_checkpoint_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        checkpoint_id = _parse_checkpoint_id(d.pop("checkpoint_id", UNSET))

        def _parse_source_job_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_job_id = _parse_source_job_id(d.pop("source_job_id", UNSET))

        def _parse_external_stage_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        external_stage_path = _parse_external_stage_path(d.pop("external_stage_path", UNSET))

        source_checkpoint_info = cls(
            checkpoint_id=checkpoint_id,
            source_job_id=source_job_id,
            external_stage_path=external_stage_path,
        )

        source_checkpoint_info.additional_properties = d
        return source_checkpoint_info

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
