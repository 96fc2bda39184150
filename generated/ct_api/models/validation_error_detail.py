from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ValidationErrorDetail")


@_attrs_define
class ValidationErrorDetail:
    """
    Attributes:
        loc (list[int | str] | Unset):
        msg (str | Unset):
        type_ (str | Unset):
    """

    loc: list[int | str] | Unset = UNSET
    msg: str | Unset = UNSET
    type_: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        loc: list[int | str] | Unset = UNSET
        if not isinstance(self.loc, Unset):
            loc = []
            for loc_item_data in self.loc:
                loc_item: int | str
                loc_item = loc_item_data
                loc.append(loc_item)

        msg = self.msg

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if loc is not UNSET:
            field_dict["loc"] = loc
        if msg is not UNSET:
            field_dict["msg"] = msg
        if type_ is not UNSET:
            field_dict["type"] = type_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _loc = d.pop("loc", UNSET)
        loc: list[int | str] | Unset = UNSET
        if _loc is not UNSET:
            loc = []
            for loc_item_data in _loc:

                def _parse_loc_item(data: object) -> int | str:
                    return cast(int | str, data)

                loc_item = _parse_loc_item(loc_item_data)

                loc.append(loc_item)

        msg = d.pop("msg", UNSET)

        type_ = d.pop("type", UNSET)

        validation_error_detail = cls(
            loc=loc,
            msg=msg,
            type_=type_,
        )

        validation_error_detail.additional_properties = d
        return validation_error_detail

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
