from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SaveResult")


@_attrs_define
class SaveResult:
    """The durable checkpoint id is the cp_<uuid> segment of stage_path.

    Attributes:
        job_id (str | Unset):
        stage_path (str | Unset):
        checkpoint_path (str | Unset):
        checkpoint_tag (str | Unset):
        version (float | Unset):
    """

    job_id: str | Unset = UNSET
    stage_path: str | Unset = UNSET
    checkpoint_path: str | Unset = UNSET
    checkpoint_tag: str | Unset = UNSET
    version: float | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        job_id = self.job_id

        stage_path = self.stage_path

        checkpoint_path = self.checkpoint_path

        checkpoint_tag = self.checkpoint_tag

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if job_id is not UNSET:
            field_dict["job_id"] = job_id
        if stage_path is not UNSET:
            field_dict["stage_path"] = stage_path
        if checkpoint_path is not UNSET:
            field_dict["checkpoint_path"] = checkpoint_path
        if checkpoint_tag is not UNSET:
            field_dict["checkpoint_tag"] = checkpoint_tag
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        job_id = d.pop("job_id", UNSET)

        stage_path = d.pop("stage_path", UNSET)

        checkpoint_path = d.pop("checkpoint_path", UNSET)

        checkpoint_tag = d.pop("checkpoint_tag", UNSET)

        version = d.pop("version", UNSET)

        save_result = cls(
            job_id=job_id,
            stage_path=stage_path,
            checkpoint_path=checkpoint_path,
            checkpoint_tag=checkpoint_tag,
            version=version,
        )

        save_result.additional_properties = d
        return save_result

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
