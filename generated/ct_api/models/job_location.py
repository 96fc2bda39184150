from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="JobLocation")


@_attrs_define
class JobLocation:
    """Where an account-level list entry lives.

    Attributes:
        database_name (str | Unset):
        schema_name (str | Unset):
    """

    database_name: str | Unset = UNSET
    schema_name: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        database_name = self.database_name

        schema_name = self.schema_name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if database_name is not UNSET:
            field_dict["database_name"] = database_name
        if schema_name is not UNSET:
            field_dict["schema_name"] = schema_name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        database_name = d.pop("database_name", UNSET)

        schema_name = d.pop("schema_name", UNSET)

        job_location = cls(
            database_name=database_name,
            schema_name=schema_name,
        )

        job_location.additional_properties = d
        return job_location

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
