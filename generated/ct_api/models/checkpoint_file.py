from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CheckpointFile")


@_attrs_define
class CheckpointFile:
    """
    Attributes:
        filename (str | Unset):
        url (str | Unset): A short-lived presigned HTTPS link.
        size_bytes (int | str | Unset): A non-negative integer, or a decimal string of one.
    """

    filename: str | Unset = UNSET
    url: str | Unset = UNSET
    size_bytes: int | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        filename = self.filename

        url = self.url

        size_bytes: int | str | Unset
        if isinstance(self.size_bytes, Unset):
            size_bytes = UNSET
        else:
            size_bytes = self.size_bytes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if filename is not UNSET:
            field_dict["filename"] = filename
        if url is not UNSET:
            field_dict["url"] = url
        if size_bytes is not UNSET:
            field_dict["size_bytes"] = size_bytes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        filename = d.pop("filename", UNSET)

        url = d.pop("url", UNSET)

        def _parse_size_bytes(data: object) -> int | str | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | str | Unset, data)

        size_bytes = _parse_size_bytes(d.pop("size_bytes", UNSET))

        checkpoint_file = cls(
            filename=filename,
            url=url,
            size_bytes=size_bytes,
        )

        checkpoint_file.additional_properties = d
        return checkpoint_file

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
