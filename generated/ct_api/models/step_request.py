from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="StepRequest")


@_attrs_define
class StepRequest:
    """
    Attributes:
        learning_rate (float | Unset): Omitted, the job's own optimizer learning rate applies.
    """

    learning_rate: float | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        learning_rate = self.learning_rate

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if learning_rate is not UNSET:
            field_dict["learning_rate"] = learning_rate

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        learning_rate = d.pop("learning_rate", UNSET)

        step_request = cls(
            learning_rate=learning_rate,
        )

        return step_request
