from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="WeightSyncPayload")


@_attrs_define
class WeightSyncPayload:
    """
    Attributes:
        source_sub_job_id (str):
        target_sub_job_ids (list[str] | Unset):
        weight_format (str | Unset): vllm (service default), hf, or lora for adapter-only syncs.
    """

    source_sub_job_id: str
    target_sub_job_ids: list[str] | Unset = UNSET
    weight_format: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        source_sub_job_id = self.source_sub_job_id

        target_sub_job_ids: list[str] | Unset = UNSET
        if not isinstance(self.target_sub_job_ids, Unset):
            target_sub_job_ids = self.target_sub_job_ids

        weight_format = self.weight_format

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "source_sub_job_id": source_sub_job_id,
            }
        )
        if target_sub_job_ids is not UNSET:
            field_dict["target_sub_job_ids"] = target_sub_job_ids
        if weight_format is not UNSET:
            field_dict["weight_format"] = weight_format

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        source_sub_job_id = d.pop("source_sub_job_id")

        target_sub_job_ids = cast(list[str], d.pop("target_sub_job_ids", UNSET))

        weight_format = d.pop("weight_format", UNSET)

        weight_sync_payload = cls(
            source_sub_job_id=source_sub_job_id,
            target_sub_job_ids=target_sub_job_ids,
            weight_format=weight_format,
        )

        weight_sync_payload.additional_properties = d
        return weight_sync_payload

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
