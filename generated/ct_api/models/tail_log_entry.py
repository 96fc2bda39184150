from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="TailLogEntry")


@_attrs_define
class TailLogEntry:
    """
    Attributes:
        field_raw (str | Unset): `<RFC 3339 time> <line>` as the container runtime received it.
        ts (str | Unset):
        line (str | Unset):
    """

    field_raw: str | Unset = UNSET
    ts: str | Unset = UNSET
    line: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        field_raw = self.field_raw

        ts = self.ts

        line = self.line

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if field_raw is not UNSET:
            field_dict["_raw"] = field_raw
        if ts is not UNSET:
            field_dict["ts"] = ts
        if line is not UNSET:
            field_dict["line"] = line

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        field_raw = d.pop("_raw", UNSET)

        ts = d.pop("ts", UNSET)

        line = d.pop("line", UNSET)

        tail_log_entry = cls(
            field_raw=field_raw,
            ts=ts,
            line=line,
        )

        tail_log_entry.additional_properties = d
        return tail_log_entry

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
