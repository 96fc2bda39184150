from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="MicroBatchSpec")


@_attrs_define
class MicroBatchSpec:
    """
    Attributes:
        max_tokens_per_mb (int | None | Unset): Most real tokens packed into one model call (service default 10240).
    """

    max_tokens_per_mb: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        max_tokens_per_mb: int | None | Unset
        if isinstance(self.max_tokens_per_mb, Unset):
            max_tokens_per_mb = UNSET
        else:
            max_tokens_per_mb = self.max_tokens_per_mb

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if max_tokens_per_mb is not UNSET:
            field_dict["max_tokens_per_mb"] = max_tokens_per_mb

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_max_tokens_per_mb(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_tokens_per_mb = _parse_max_tokens_per_mb(d.pop("max_tokens_per_mb", UNSET))

        micro_batch_spec = cls(
            max_tokens_per_mb=max_tokens_per_mb,
        )

        micro_batch_spec.additional_properties = d
        return micro_batch_spec

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
