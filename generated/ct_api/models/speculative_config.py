from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SpeculativeConfig")


@_attrs_define
class SpeculativeConfig:
    """vLLM speculative decoding; name the draft by model or by from_source_checkpoint, not both.

    Attributes:
        method (None | str | Unset):
        model (None | str | Unset):
        num_speculative_tokens (int | None | Unset):
        from_source_checkpoint (bool | None | Unset):
    """

    method: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    num_speculative_tokens: int | None | Unset = UNSET
    from_source_checkpoint: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        method: None | str | Unset
        if isinstance(self.method, Unset):
            method = UNSET
        else:
            method = self.method

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        num_speculative_tokens: int | None | Unset
        if isinstance(self.num_speculative_tokens, Unset):
            num_speculative_tokens = UNSET
        else:
            num_speculative_tokens = self.num_speculative_tokens

        from_source_checkpoint: bool | None | Unset
        if isinstance(self.from_source_checkpoint, Unset):
            from_source_checkpoint = UNSET
        else:
            from_source_checkpoint = self.from_source_checkpoint

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if method is not UNSET:
            field_dict["method"] = method
        if model is not UNSET:
            field_dict["model"] = model
        if num_speculative_tokens is not UNSET:
            field_dict["num_speculative_tokens"] = num_speculative_tokens
        if from_source_checkpoint is not UNSET:
            field_dict["from_source_checkpoint"] = from_source_checkpoint

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_method(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        method = _parse_method(d.pop("method", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_num_speculative_tokens(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        num_speculative_tokens = _parse_num_speculative_tokens(d.pop("num_speculative_tokens", UNSET))

        def _parse_from_source_checkpoint(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        from_source_checkpoint = _parse_from_source_checkpoint(d.pop("from_source_checkpoint", UNSET))

        speculative_config = cls(
            method=method,
            model=model,
            num_speculative_tokens=num_speculative_tokens,
            from_source_checkpoint=from_source_checkpoint,
        )

        speculative_config.additional_properties = d
        return speculative_config

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
