from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PeftConfig")


@_attrs_define
class PeftConfig:
    """A PEFT LoraConfig-compatible block; peft_type is exactly "Lora".

    Attributes:
        peft_type (None | str | Unset):
        r (int | None | Unset):
        lora_alpha (float | None | Unset):
        lora_dropout (float | None | Unset):
        bias (None | str | Unset):
        target_modules (list[str] | None | str | Unset):
        target_parameters (list[str] | None | Unset):
    """

    peft_type: None | str | Unset = UNSET
    r: int | None | Unset = UNSET
    lora_alpha: float | None | Unset = UNSET
    lora_dropout: float | None | Unset = UNSET
    bias: None | str | Unset = UNSET
    target_modules: list[str] | None | str | Unset = UNSET
    target_parameters: list[str] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        peft_type: None | str | Unset
        if isinstance(self.peft_type, Unset):
            peft_type = UNSET
        else:
            peft_type = self.peft_type

        r: int | None | Unset
        if isinstance(self.r, Unset):
            r = UNSET
        else:
            r = self.r

        lora_alpha: float | None | Unset
        if isinstance(self.lora_alpha, Unset):
            lora_alpha = UNSET
        else:
            lora_alpha = self.lora_alpha

        lora_dropout: float | None | Unset
        if isinstance(self.lora_dropout, Unset):
            lora_dropout = UNSET
        else:
            lora_dropout = self.lora_dropout

        bias: None | str | Unset
        if isinstance(self.bias, Unset):
            bias = UNSET
        else:
            bias = self.bias

        target_modules: list[str] | None | str | Unset
        if isinstance(self.target_modules, Unset):
            target_modules = UNSET
        elif isinstance(self.target_modules, list):
            target_modules = self.target_modules

        else:
            target_modules = self.target_modules

        target_parameters: list[str] | None | Unset
        if isinstance(self.target_parameters, Unset):
            target_parameters = UNSET
        elif isinstance(self.target_parameters, list):
            target_parameters = self.target_parameters

        else:
            target_parameters = self.target_parameters

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if peft_type is not UNSET:
            field_dict["peft_type"] = peft_type
        if r is not UNSET:
            field_dict["r"] = r
        if lora_alpha is not UNSET:
            field_dict["lora_alpha"] = lora_alpha
        if lora_dropout is not UNSET:
            field_dict["lora_dropout"] = lora_dropout
        if bias is not UNSET:
            field_dict["bias"] = bias
        if target_modules is not UNSET:
            field_dict["target_modules"] = target_modules
        if target_parameters is not UNSET:
            field_dict["target_parameters"] = target_parameters

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_peft_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        peft_type = _parse_peft_type(d.pop("peft_type", UNSET))

        def _parse_r(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        r = _parse_r(d.pop("r", UNSET))

        def _parse_lora_alpha(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        lora_alpha = _parse_lora_alpha(d.pop("lora_alpha", UNSET))

        def _parse_lora_dropout(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        lora_dropout = _parse_lora_dropout(d.pop("lora_dropout", UNSET))

        def _parse_bias(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        bias = _parse_bias(d.pop("bias", UNSET))

        def _parse_target_modules(data: object) -> list[str] | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                target_modules_type_0 = cast(list[str], data)

                return target_modules_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | str | Unset, data)

        target_modules = _parse_target_modules(d.pop("target_modules", UNSET))

        def _parse_target_parameters(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                target_parameters_type_0 = cast(list[str], data)

                return target_parameters_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        target_parameters = _parse_target_parameters(d.pop("target_parameters", UNSET))

        peft_config = cls(
            peft_type=peft_type,
            r=r,
            lora_alpha=lora_alpha,
            lora_dropout=lora_dropout,
            bias=bias,
            target_modules=target_modules,
            target_parameters=target_parameters,
        )

        peft_config.additional_properties = d
        return peft_config

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
