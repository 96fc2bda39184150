from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.capacity_breakdown import CapacityBreakdown


T = TypeVar("T", bound="Capacity")


@_attrs_define
class Capacity:
    """Proto3 JSON omits false and zero values, so every key may be absent.

    Attributes:
        has_reservation (bool | Unset):  Default: False.
        max_total_gpus (int | Unset): -1 means no ceiling, 0 a real quota of zero. Default: 0.
        reserved_gpus (int | Unset):  Default: 0.
        in_use_gpus (int | Unset):  Default: 0.
        pending_gpus (int | Unset):  Default: 0.
        available_gpus (int | Unset):  Default: 0.
        breakdown (CapacityBreakdown | None | Unset):
    """

    has_reservation: bool | Unset = False
    max_total_gpus: int | Unset = 0
    reserved_gpus: int | Unset = 0
    in_use_gpus: int | Unset = 0
    pending_gpus: int | Unset = 0
    available_gpus: int | Unset = 0
    breakdown: CapacityBreakdown | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.capacity_breakdown import CapacityBreakdown  # noqa: PLC0415

        has_reservation = self.has_reservation

        max_total_gpus = self.max_total_gpus

        reserved_gpus = self.reserved_gpus

        in_use_gpus = self.in_use_gpus

        pending_gpus = self.pending_gpus

        available_gpus = self.available_gpus

        breakdown: dict[str, Any] | None | Unset
        if isinstance(self.breakdown, Unset):
            breakdown = UNSET
        elif isinstance(self.breakdown, CapacityBreakdown):
            breakdown = self.breakdown.to_dict()
        else:
            breakdown = self.breakdown

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if has_reservation is not UNSET:
            field_dict["has_reservation"] = has_reservation
        if max_total_gpus is not UNSET:
            field_dict["max_total_gpus"] = max_total_gpus
        if reserved_gpus is not UNSET:
            field_dict["reserved_gpus"] = reserved_gpus
        if in_use_gpus is not UNSET:
            field_dict["in_use_gpus"] = in_use_gpus
        if pending_gpus is not UNSET:
            field_dict["pending_gpus"] = pending_gpus
        if available_gpus is not UNSET:
            field_dict["available_gpus"] = available_gpus
        if breakdown is not UNSET:
            field_dict["breakdown"] = breakdown

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.capacity_breakdown import CapacityBreakdown  # noqa: PLC0415

        d = dict(src_dict)
        has_reservation = d.pop("has_reservation", UNSET)

        max_total_gpus = d.pop("max_total_gpus", UNSET)

        reserved_gpus = d.pop("reserved_gpus", UNSET)

        in_use_gpus = d.pop("in_use_gpus", UNSET)

        pending_gpus = d.pop("pending_gpus", UNSET)

        available_gpus = d.pop("available_gpus", UNSET)

        def _parse_breakdown(data: object) -> CapacityBreakdown | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                breakdown_type_0 = CapacityBreakdown.from_dict(data)

                return breakdown_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CapacityBreakdown | None | Unset, data)

        breakdown = _parse_breakdown(d.pop("breakdown", UNSET))

        capacity = cls(
            has_reservation=has_reservation,
            max_total_gpus=max_total_gpus,
            reserved_gpus=reserved_gpus,
            in_use_gpus=in_use_gpus,
            pending_gpus=pending_gpus,
            available_gpus=available_gpus,
            breakdown=breakdown,
        )

        capacity.additional_properties = d
        return capacity

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
