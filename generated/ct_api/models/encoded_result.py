from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.metrics import Metrics


T = TypeVar("T", bound="EncodedResult")


@_attrs_define
class EncodedResult:
    """A DSSST1 result frame carried inside poll JSON.

    Attributes:
        content_type (str | Unset):
        encoding (str | Unset):
        wire_format (str | Unset):
        payload_b64 (str | Unset):
        metrics (Metrics | None | Unset):
    """

    content_type: str | Unset = UNSET
    encoding: str | Unset = UNSET
    wire_format: str | Unset = UNSET
    payload_b64: str | Unset = UNSET
    metrics: Metrics | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.metrics import Metrics  # noqa: PLC0415

        content_type = self.content_type

        encoding = self.encoding

        wire_format = self.wire_format

        payload_b64 = self.payload_b64

        metrics: dict[str, Any] | None | Unset
        if isinstance(self.metrics, Unset):
            metrics = UNSET
        elif isinstance(self.metrics, Metrics):
            metrics = self.metrics.to_dict()
        else:
            metrics = self.metrics

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if content_type is not UNSET:
            field_dict["content_type"] = content_type
        if encoding is not UNSET:
            field_dict["encoding"] = encoding
        if wire_format is not UNSET:
            field_dict["wire_format"] = wire_format
        if payload_b64 is not UNSET:
            field_dict["payload_b64"] = payload_b64
        if metrics is not UNSET:
            field_dict["metrics"] = metrics

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.metrics import Metrics  # noqa: PLC0415

        d = dict(src_dict)
        content_type = d.pop("content_type", UNSET)

        encoding = d.pop("encoding", UNSET)

        wire_format = d.pop("wire_format", UNSET)

        payload_b64 = d.pop("payload_b64", UNSET)

        def _parse_metrics(data: object) -> Metrics | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metrics_type_0 = Metrics.from_dict(data)

                return metrics_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Metrics | None | Unset, data)

        metrics = _parse_metrics(d.pop("metrics", UNSET))

        encoded_result = cls(
            content_type=content_type,
            encoding=encoding,
            wire_format=wire_format,
            payload_b64=payload_b64,
            metrics=metrics,
        )

        encoded_result.additional_properties = d
        return encoded_result

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
