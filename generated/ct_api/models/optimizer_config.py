from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="OptimizerConfig")


@_attrs_define
class OptimizerConfig:
    """The canonical optimizer block (name, lr, weight_decay, betas, eps, fused). Raw bodies are forwarded as given, so
    other keys pass through.

        Attributes:
            name (None | str | Unset):
            lr (float | None | Unset):
            weight_decay (float | None | Unset):
            betas (list[float] | None | Unset):
            eps (float | None | Unset):
            fused (bool | None | Unset):
    """

    name: None | str | Unset = UNSET
    lr: float | None | Unset = UNSET
    weight_decay: float | None | Unset = UNSET
    betas: list[float] | None | Unset = UNSET
    eps: float | None | Unset = UNSET
    fused: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        lr: float | None | Unset
        if isinstance(self.lr, Unset):
            lr = UNSET
        else:
            lr = self.lr

        weight_decay: float | None | Unset
        if isinstance(self.weight_decay, Unset):
            weight_decay = UNSET
        else:
            weight_decay = self.weight_decay

        betas: list[float] | None | Unset
        if isinstance(self.betas, Unset):
            betas = UNSET
        elif isinstance(self.betas, list):
            betas = self.betas

        else:
            betas = self.betas

        eps: float | None | Unset
        if isinstance(self.eps, Unset):
            eps = UNSET
        else:
            eps = self.eps

        fused: bool | None | Unset
        if isinstance(self.fused, Unset):
            fused = UNSET
        else:
            fused = self.fused

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if lr is not UNSET:
            field_dict["lr"] = lr
        if weight_decay is not UNSET:
            field_dict["weight_decay"] = weight_decay
        if betas is not UNSET:
            field_dict["betas"] = betas
        if eps is not UNSET:
            field_dict["eps"] = eps
        if fused is not UNSET:
            field_dict["fused"] = fused

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_lr(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        lr = _parse_lr(d.pop("lr", UNSET))

        def _parse_weight_decay(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        weight_decay = _parse_weight_decay(d.pop("weight_decay", UNSET))

        def _parse_betas(data: object) -> list[float] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                betas_type_0 = cast(list[float], data)

                return betas_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[float] | None | Unset, data)

        betas = _parse_betas(d.pop("betas", UNSET))

        def _parse_eps(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        eps = _parse_eps(d.pop("eps", UNSET))

        def _parse_fused(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        fused = _parse_fused(d.pop("fused", UNSET))

        optimizer_config = cls(
            name=name,
            lr=lr,
            weight_decay=weight_decay,
            betas=betas,
            eps=eps,
            fused=fused,
        )

        optimizer_config.additional_properties = d
        return optimizer_config

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
