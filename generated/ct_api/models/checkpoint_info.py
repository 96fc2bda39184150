from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CheckpointInfo")


@_attrs_define
class CheckpointInfo:
    """
    Attributes:
        checkpoint_id (str | Unset):
        global_steps (float | int | None | Unset):
        avg_loss (float | None | Unset):
        created_at (None | str | Unset):
        checkpoint_type (None | str | Unset): resumable or weights-only.
    """

    checkpoint_id: str | Unset = UNSET
    global_steps: float | int | None | Unset = UNSET
    avg_loss: float | None | Unset = UNSET
    created_at: None | str | Unset = UNSET
    checkpoint_type: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        checkpoint_id = self.checkpoint_id

        global_steps: float | int | None | Unset
        if isinstance(self.global_steps, Unset):
            global_steps = UNSET
        else:
            global_steps = self.global_steps

        avg_loss: float | None | Unset
        if isinstance(self.avg_loss, Unset):
            avg_loss = UNSET
        else:
            avg_loss = self.avg_loss

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        else:
            created_at = self.created_at

        checkpoint_type: None | str | Unset
        if isinstance(self.checkpoint_type, Unset):
            checkpoint_type = UNSET
        else:
            checkpoint_type = self.checkpoint_type

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if checkpoint_id is not UNSET:
            field_dict["checkpoint_id"] = checkpoint_id
        if global_steps is not UNSET:
            field_dict["global_steps"] = global_steps
        if avg_loss is not UNSET:
            field_dict["avg_loss"] = avg_loss
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if checkpoint_type is not UNSET:
            field_dict["checkpoint_type"] = checkpoint_type

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoint_id = d.pop("checkpoint_id", UNSET)

        def _parse_global_steps(data: object) -> float | int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | int | None | Unset, data)

        global_steps = _parse_global_steps(d.pop("global_steps", UNSET))

        def _parse_avg_loss(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        avg_loss = _parse_avg_loss(d.pop("avg_loss", UNSET))

        def _parse_created_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        def _parse_checkpoint_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        checkpoint_type = _parse_checkpoint_type(d.pop("checkpoint_type", UNSET))

        checkpoint_info = cls(
            checkpoint_id=checkpoint_id,
            global_steps=global_steps,
            avg_loss=avg_loss,
            created_at=created_at,
            checkpoint_type=checkpoint_type,
        )

        checkpoint_info.additional_properties = d
        return checkpoint_info

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
