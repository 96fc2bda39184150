from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.checkpoint_type import CheckpointType
from ..types import UNSET, Unset

T = TypeVar("T", bound="SaveRequest")


@_attrs_define
class SaveRequest:
    """checkpoint_id is not honoured by the service; use the id from the save result's stage_path.

    Attributes:
        checkpoint_id (str | Unset):
        checkpoint_type (CheckpointType | Unset): resumable (weights plus optimizer state, the service default) or
            weights-only.
    """

    checkpoint_id: str | Unset = UNSET
    checkpoint_type: CheckpointType | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        checkpoint_id = self.checkpoint_id

        checkpoint_type: str | Unset = UNSET
        if not isinstance(self.checkpoint_type, Unset):
            checkpoint_type = self.checkpoint_type.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if checkpoint_id is not UNSET:
            field_dict["checkpoint_id"] = checkpoint_id
        if checkpoint_type is not UNSET:
            field_dict["checkpoint_type"] = checkpoint_type

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoint_id = d.pop("checkpoint_id", UNSET)

        _checkpoint_type = d.pop("checkpoint_type", UNSET)
        checkpoint_type: CheckpointType | Unset
        if isinstance(_checkpoint_type, Unset):
            checkpoint_type = UNSET
        else:
            checkpoint_type = CheckpointType(_checkpoint_type)

        save_request = cls(
            checkpoint_id=checkpoint_id,
            checkpoint_type=checkpoint_type,
        )

        return save_request
