from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RequestEvent")


@_attrs_define
class RequestEvent:
    """An opaque backend event. Streaming generation sends result, error and done events; large results arrive as
    result_chunk events with payload_b64 and payload_sha256.

        Attributes:
            type_ (str | Unset):
            index (int | None | Unset):
            result (Any | Unset):
            error (Any | Unset):
            completed (int | None | Unset):
            failed (int | None | Unset):
            payload_b64 (None | str | Unset):
            payload_sha256 (None | str | Unset):
    """

    type_: str | Unset = UNSET
    index: int | None | Unset = UNSET
    result: Any | Unset = UNSET
    error: Any | Unset = UNSET
    completed: int | None | Unset = UNSET
    failed: int | None | Unset = UNSET
    payload_b64: None | str | Unset = UNSET
    payload_sha256: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        index: int | None | Unset
        if isinstance(self.index, Unset):
            index = UNSET
        else:
            index = self.index

        result = self.result

        error = self.error

        completed: int | None | Unset
        if isinstance(self.completed, Unset):
            completed = UNSET
        else:
            completed = self.completed

        failed: int | None | Unset
        if isinstance(self.failed, Unset):
            failed = UNSET
        else:
            failed = self.failed

        payload_b64: None | str | Unset
        if isinstance(self.payload_b64, Unset):
            payload_b64 = UNSET
        else:
            payload_b64 = self.payload_b64

        payload_sha256: None | str | Unset
        if isinstance(self.payload_sha256, Unset):
            payload_sha256 = UNSET
        else:
            payload_sha256 = self.payload_sha256

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if type_ is not UNSET:
            field_dict["type"] = type_
        if index is not UNSET:
            field_dict["index"] = index
        if result is not UNSET:
            field_dict["result"] = result
        if error is not UNSET:
            field_dict["error"] = error
        if completed is not UNSET:
            field_dict["completed"] = completed
        if failed is not UNSET:
            field_dict["failed"] = failed
        if payload_b64 is not UNSET:
            field_dict["payload_b64"] = payload_b64
        if payload_sha256 is not UNSET:
            field_dict["payload_sha256"] = payload_sha256

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = d.pop("type", UNSET)

        def _parse_index(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        index = _parse_index(d.pop("index", UNSET))

        result = d.pop("result", UNSET)

        error = d.pop("error", UNSET)

        def _parse_completed(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        completed = _parse_completed(d.pop("completed", UNSET))

        def _parse_failed(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        failed = _parse_failed(d.pop("failed", UNSET))

        def _parse_payload_b64(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        payload_b64 = _parse_payload_b64(d.pop("payload_b64", UNSET))

        def _parse_payload_sha256(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        payload_sha256 = _parse_payload_sha256(d.pop("payload_sha256", UNSET))

        request_event = cls(
            type_=type_,
            index=index,
            result=result,
            error=error,
            completed=completed,
            failed=failed,
            payload_b64=payload_b64,
            payload_sha256=payload_sha256,
        )

        request_event.additional_properties = d
        return request_event

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
