from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SubmitterGroup")


@_attrs_define
class SubmitterGroup:
    """
    Attributes:
        kind (str | Unset): USER, OTHER or UNATTRIBUTED.
        submitted_by (None | str | Unset):
        is_caller (bool | None | Unset):
        in_use_gpus (int | Unset):
        pending_gpus (int | Unset):
        job_count (int | Unset):
    """

    kind: str | Unset = UNSET
    submitted_by: None | str | Unset = UNSET
    is_caller: bool | None | Unset = UNSET
    in_use_gpus: int | Unset = UNSET
    pending_gpus: int | Unset = UNSET
    job_count: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        submitted_by: None | str | Unset
        if isinstance(self.submitted_by, Unset):
            submitted_by = UNSET
        else:
            submitted_by = self.submitted_by

        is_caller: bool | None | Unset
        if isinstance(self.is_caller, Unset):
            is_caller = UNSET
        else:
            is_caller = self.is_caller

        in_use_gpus = self.in_use_gpus

        pending_gpus = self.pending_gpus

        job_count = self.job_count

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if kind is not UNSET:
            field_dict["kind"] = kind
        if submitted_by is not UNSET:
            field_dict["submitted_by"] = submitted_by
        if is_caller is not UNSET:
            field_dict["is_caller"] = is_caller
        if in_use_gpus is not UNSET:
            field_dict["in_use_gpus"] = in_use_gpus
        if pending_gpus is not UNSET:
            field_dict["pending_gpus"] = pending_gpus
        if job_count is not UNSET:
            field_dict["job_count"] = job_count

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = d.pop("kind", UNSET)

        def _parse_submitted_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        submitted_by = _parse_submitted_by(d.pop("submitted_by", UNSET))

        def _parse_is_caller(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        is_caller = _parse_is_caller(d.pop("is_caller", UNSET))

        in_use_gpus = d.pop("in_use_gpus", UNSET)

        pending_gpus = d.pop("pending_gpus", UNSET)

        job_count = d.pop("job_count", UNSET)

        submitter_group = cls(
            kind=kind,
            submitted_by=submitted_by,
            is_caller=is_caller,
            in_use_gpus=in_use_gpus,
            pending_gpus=pending_gpus,
            job_count=job_count,
        )

        submitter_group.additional_properties = d
        return submitter_group

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
