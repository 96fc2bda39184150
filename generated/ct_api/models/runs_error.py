from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.runs_error_code import RunsErrorCode
from ..types import UNSET, Unset

T = TypeVar("T", bound="RunsError")


@_attrs_define
class RunsError:
    """The error body of the runs service, such as `{"message": "...", "code": "invalid_argument", "field":
    "trainer.epochs"}`.

        Attributes:
            message (str):
            code (RunsErrorCode): gRPC-style reason of a refusal; each maps to one HTTP status (see RunsClientError).
            field (None | str | Unset): The input the refusal is about, as a dotted path into the request (for example
                overrides.d_model).
    """

    message: str
    code: RunsErrorCode
    field: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        code = self.code.value

        field: None | str | Unset
        if isinstance(self.field, Unset):
            field = UNSET
        else:
            field = self.field

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message": message,
                "code": code,
            }
        )
        if field is not UNSET:
            field_dict["field"] = field

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        message = d.pop("message")

        code = RunsErrorCode(d.pop("code"))

        def _parse_field(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field = _parse_field(d.pop("field", UNSET))

        runs_error = cls(
            message=message,
            code=code,
            field=field,
        )

        runs_error.additional_properties = d
        return runs_error

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
