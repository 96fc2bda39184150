from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.result_set_column import ResultSetColumn


T = TypeVar("T", bound="ResultSetMetaData")


@_attrs_define
class ResultSetMetaData:
    """
    Attributes:
        num_rows (int | Unset):
        format_ (str | Unset):
        row_type (list[ResultSetColumn] | Unset):
    """

    num_rows: int | Unset = UNSET
    format_: str | Unset = UNSET
    row_type: list[ResultSetColumn] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        num_rows = self.num_rows

        format_ = self.format_

        row_type: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.row_type, Unset):
            row_type = []
            for row_type_item_data in self.row_type:
                row_type_item = row_type_item_data.to_dict()
                row_type.append(row_type_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if num_rows is not UNSET:
            field_dict["numRows"] = num_rows
        if format_ is not UNSET:
            field_dict["format"] = format_
        if row_type is not UNSET:
            field_dict["rowType"] = row_type

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.result_set_column import ResultSetColumn  # noqa: PLC0415

        d = dict(src_dict)
        num_rows = d.pop("numRows", UNSET)

        format_ = d.pop("format", UNSET)

        _row_type = d.pop("rowType", UNSET)
        row_type: list[ResultSetColumn] | Unset = UNSET
        if _row_type is not UNSET:
            row_type = []
            for row_type_item_data in _row_type:
                row_type_item = ResultSetColumn.from_dict(row_type_item_data)

                row_type.append(row_type_item)

        result_set_meta_data = cls(
            num_rows=num_rows,
            format_=format_,
            row_type=row_type,
        )

        result_set_meta_data.additional_properties = d
        return result_set_meta_data

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
