from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="JobTypeGroup")


@_attrs_define
class JobTypeGroup:
    """
    Attributes:
        job_type (str | Unset):
        in_use_gpus (int | Unset):
        pending_gpus (int | Unset):
        sub_job_count (int | Unset):
    """

    job_type: str | Unset = UNSET
    in_use_gpus: int | Unset = UNSET
    pending_gpus: int | Unset = UNSET
    sub_job_count: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        job_type = self.job_type

        in_use_gpus = self.in_use_gpus

        pending_gpus = self.pending_gpus

        sub_job_count = self.sub_job_count

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if job_type is not UNSET:
            field_dict["job_type"] = job_type
        if in_use_gpus is not UNSET:
            field_dict["in_use_gpus"] = in_use_gpus
        if pending_gpus is not UNSET:
            field_dict["pending_gpus"] = pending_gpus
        if sub_job_count is not UNSET:
            field_dict["sub_job_count"] = sub_job_count

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        job_type = d.pop("job_type", UNSET)

        in_use_gpus = d.pop("in_use_gpus", UNSET)

        pending_gpus = d.pop("pending_gpus", UNSET)

        sub_job_count = d.pop("sub_job_count", UNSET)

        job_type_group = cls(
            job_type=job_type,
            in_use_gpus=in_use_gpus,
            pending_gpus=pending_gpus,
            sub_job_count=sub_job_count,
        )

        job_type_group.additional_properties = d
        return job_type_group

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
