from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="StatementRequest")


@_attrs_define
class StatementRequest:
    """
    Attributes:
        statement (str):
        timeout (int | Unset):
        database (str | Unset):
        schema (str | Unset):
        warehouse (str | Unset):
        role (str | Unset):
    """

    statement: str
    timeout: int | Unset = UNSET
    database: str | Unset = UNSET
    schema: str | Unset = UNSET
    warehouse: str | Unset = UNSET
    role: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        statement = self.statement

        timeout = self.timeout

        database = self.database

        schema = self.schema

        warehouse = self.warehouse

        role = self.role

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "statement": statement,
            }
        )
        if timeout is not UNSET:
            field_dict["timeout"] = timeout
        if database is not UNSET:
            field_dict["database"] = database
        if schema is not UNSET:
            field_dict["schema"] = schema
        if warehouse is not UNSET:
            field_dict["warehouse"] = warehouse
        if role is not UNSET:
            field_dict["role"] = role

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        statement = d.pop("statement")

        timeout = d.pop("timeout", UNSET)

        database = d.pop("database", UNSET)

        schema = d.pop("schema", UNSET)

        warehouse = d.pop("warehouse", UNSET)

        role = d.pop("role", UNSET)

        statement_request = cls(
            statement=statement,
            timeout=timeout,
            database=database,
            schema=schema,
            warehouse=warehouse,
            role=role,
        )

        statement_request.additional_properties = d
        return statement_request

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
