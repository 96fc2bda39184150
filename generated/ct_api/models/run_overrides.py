from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RunOverrides")


@_attrs_define
class RunOverrides:
    """Settings of the tier's preset tuned within validated bounds; the service refuses an unknown key or a value out of
    bounds with invalid_argument naming it (for example overrides.max_seq_len).

        Attributes:
            max_seq_len (int | None | Unset): The packed row length in tokens.
            weight_decay (float | None | Unset):
            gradient_clipping (float | None | Unset):
            warmup_steps (int | None | Unset):
            min_lr_ratio (float | None | Unset):
            adam_beta1 (float | None | Unset):
            adam_beta2 (float | None | Unset):
    """

    max_seq_len: int | None | Unset = UNSET
    weight_decay: float | None | Unset = UNSET
    gradient_clipping: float | None | Unset = UNSET
    warmup_steps: int | None | Unset = UNSET
    min_lr_ratio: float | None | Unset = UNSET
    adam_beta1: float | None | Unset = UNSET
    adam_beta2: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        max_seq_len: int | None | Unset
        if isinstance(self.max_seq_len, Unset):
            max_seq_len = UNSET
        else:
            max_seq_len = self.max_seq_len

        weight_decay: float | None | Unset
        if isinstance(self.weight_decay, Unset):
            weight_decay = UNSET
        else:
            weight_decay = self.weight_decay

        gradient_clipping: float | None | Unset
        if isinstance(self.gradient_clipping, Unset):
            gradient_clipping = UNSET
        else:
            gradient_clipping = self.gradient_clipping

        warmup_steps: int | None | Unset
        if isinstance(self.warmup_steps, Unset):
            warmup_steps = UNSET
        else:
            warmup_steps = self.warmup_steps

        min_lr_ratio: float | None | Unset
        if isinstance(self.min_lr_ratio, Unset):
            min_lr_ratio = UNSET
        else:
            min_lr_ratio = self.min_lr_ratio

        adam_beta1: float | None | Unset
        if isinstance(self.adam_beta1, Unset):
            adam_beta1 = UNSET
        else:
            adam_beta1 = self.adam_beta1

        adam_beta2: float | None | Unset
        if isinstance(self.adam_beta2, Unset):
            adam_beta2 = UNSET
        else:
            adam_beta2 = self.adam_beta2

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if max_seq_len is not UNSET:
            field_dict["max_seq_len"] = max_seq_len
        if weight_decay is not UNSET:
            field_dict["weight_decay"] = weight_decay
        if gradient_clipping is not UNSET:
            field_dict["gradient_clipping"] = gradient_clipping
        if warmup_steps is not UNSET:
            field_dict["warmup_steps"] = warmup_steps
        if min_lr_ratio is not UNSET:
            field_dict["min_lr_ratio"] = min_lr_ratio
        if adam_beta1 is not UNSET:
            field_dict["adam_beta1"] = adam_beta1
        if adam_beta2 is not UNSET:
            field_dict["adam_beta2"] = adam_beta2

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_max_seq_len(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_seq_len = _parse_max_seq_len(d.pop("max_seq_len", UNSET))

        def _parse_weight_decay(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        weight_decay = _parse_weight_decay(d.pop("weight_decay", UNSET))

        def _parse_gradient_clipping(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        gradient_clipping = _parse_gradient_clipping(d.pop("gradient_clipping", UNSET))

        def _parse_warmup_steps(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        warmup_steps = _parse_warmup_steps(d.pop("warmup_steps", UNSET))

        def _parse_min_lr_ratio(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        min_lr_ratio = _parse_min_lr_ratio(d.pop("min_lr_ratio", UNSET))

        def _parse_adam_beta1(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        adam_beta1 = _parse_adam_beta1(d.pop("adam_beta1", UNSET))

        def _parse_adam_beta2(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        adam_beta2 = _parse_adam_beta2(d.pop("adam_beta2", UNSET))

        run_overrides = cls(
            max_seq_len=max_seq_len,
            weight_decay=weight_decay,
            gradient_clipping=gradient_clipping,
            warmup_steps=warmup_steps,
            min_lr_ratio=min_lr_ratio,
            adam_beta1=adam_beta1,
            adam_beta2=adam_beta2,
        )

        run_overrides.additional_properties = d
        return run_overrides

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
