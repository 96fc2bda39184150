from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RunUsage")


@_attrs_define
class RunUsage:
    """What the run has used so far, as metered.

    Attributes:
        training_gpu_seconds (float | None | Unset):
    """

    training_gpu_seconds: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        training_gpu_seconds: float | None | Unset
        if isinstance(self.training_gpu_seconds, Unset):
            training_gpu_seconds = UNSET
        else:
            training_gpu_seconds = self.training_gpu_seconds

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if training_gpu_seconds is not UNSET:
            field_dict["training_gpu_seconds"] = training_gpu_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_training_gpu_seconds(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        training_gpu_seconds = _parse_training_gpu_seconds(d.pop("training_gpu_seconds", UNSET))

        run_usage = cls(
            training_gpu_seconds=training_gpu_seconds,
        )

        run_usage.additional_properties = d
        return run_usage

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
