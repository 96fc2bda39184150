from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.peak_memory import PeakMemory


T = TypeVar("T", bound="StepResult")


@_attrs_define
class StepResult:
    """
    Attributes:
        global_steps (float | int | Unset):
        last_lr (float | list[float] | None | Unset):
        peak_memory (None | PeakMemory | Unset):
    """

    global_steps: float | int | Unset = UNSET
    last_lr: float | list[float] | None | Unset = UNSET
    peak_memory: None | PeakMemory | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.peak_memory import PeakMemory  # noqa: PLC0415

        global_steps: float | int | Unset
        if isinstance(self.global_steps, Unset):
            global_steps = UNSET
        else:
            global_steps = self.global_steps

        last_lr: float | list[float] | None | Unset
        if isinstance(self.last_lr, Unset):
            last_lr = UNSET
        elif isinstance(self.last_lr, list):
            last_lr = self.last_lr

        else:
            last_lr = self.last_lr

        peak_memory: dict[str, Any] | None | Unset
        if isinstance(self.peak_memory, Unset):
            peak_memory = UNSET
        elif isinstance(self.peak_memory, PeakMemory):
            peak_memory = self.peak_memory.to_dict()
        else:
            peak_memory = self.peak_memory

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if global_steps is not UNSET:
            field_dict["global_steps"] = global_steps
        if last_lr is not UNSET:
            field_dict["last_lr"] = last_lr
        if peak_memory is not UNSET:
            field_dict["peak_memory"] = peak_memory

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.peak_memory import PeakMemory  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_global_steps(data: object) -> float | int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(float | int | Unset, data)

        global_steps = _parse_global_steps(d.pop("global_steps", UNSET))

        def _parse_last_lr(data: object) -> float | list[float] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                last_lr_type_1 = cast(list[float], data)

                return last_lr_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(float | list[float] | None | Unset, data)

        last_lr = _parse_last_lr(d.pop("last_lr", UNSET))

        def _parse_peak_memory(data: object) -> None | PeakMemory | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                peak_memory_type_0 = PeakMemory.from_dict(data)

                return peak_memory_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PeakMemory | Unset, data)

        peak_memory = _parse_peak_memory(d.pop("peak_memory", UNSET))

        step_result = cls(
            global_steps=global_steps,
            last_lr=last_lr,
            peak_memory=peak_memory,
        )

        step_result.additional_properties = d
        return step_result

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
