from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.leakage_gate import LeakageGate
from ..types import UNSET, Unset

T = TypeVar("T", bound="LeakageViolation")


@_attrs_define
class LeakageViolation:
    """A train row and a validation row that are (nearly) the same text.

    Attributes:
        gate (LeakageGate | Unset): exact_duplicate (the same normalized text in both splits) or near_duplicate (n-gram
            overlap above the threshold).
        train_row (int | None | Unset):
        validation_row (int | None | Unset):
        similarity (float | None | Unset):
    """

    gate: LeakageGate | Unset = UNSET
    train_row: int | None | Unset = UNSET
    validation_row: int | None | Unset = UNSET
    similarity: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        gate: str | Unset = UNSET
        if not isinstance(self.gate, Unset):
            gate = self.gate.value

        train_row: int | None | Unset
        if isinstance(self.train_row, Unset):
            train_row = UNSET
        else:
            train_row = self.train_row

        validation_row: int | None | Unset
        if isinstance(self.validation_row, Unset):
            validation_row = UNSET
        else:
            validation_row = self.validation_row

        similarity: float | None | Unset
        if isinstance(self.similarity, Unset):
            similarity = UNSET
        else:
            similarity = self.similarity

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if gate is not UNSET:
            field_dict["gate"] = gate
        if train_row is not UNSET:
            field_dict["train_row"] = train_row
        if validation_row is not UNSET:
            field_dict["validation_row"] = validation_row
        if similarity is not UNSET:
            field_dict["similarity"] = similarity

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _gate = d.pop("gate", UNSET)
        gate: LeakageGate | Unset
        if isinstance(_gate, Unset):
            gate = UNSET
        else:
            gate = LeakageGate(_gate)

        def _parse_train_row(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        train_row = _parse_train_row(d.pop("train_row", UNSET))

        def _parse_validation_row(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        validation_row = _parse_validation_row(d.pop("validation_row", UNSET))

        def _parse_similarity(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        similarity = _parse_similarity(d.pop("similarity", UNSET))

        leakage_violation = cls(
            gate=gate,
            train_row=train_row,
            validation_row=validation_row,
            similarity=similarity,
        )

        leakage_violation.additional_properties = d
        return leakage_violation

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
