from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.checkpoint_info import CheckpointInfo


T = TypeVar("T", bound="CheckpointList")


@_attrs_define
class CheckpointList:
    """
    Attributes:
        checkpoints (list[CheckpointInfo] | None | Unset):
    """

    checkpoints: list[CheckpointInfo] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        checkpoints: list[dict[str, Any]] | None | Unset
        if isinstance(self.checkpoints, Unset):
            checkpoints = UNSET
        elif isinstance(self.checkpoints, list):
            checkpoints = []
            for checkpoints_type_0_item_data in self.checkpoints:
                checkpoints_type_0_item = checkpoints_type_0_item_data.to_dict()
                checkpoints.append(checkpoints_type_0_item)

        else:
            checkpoints = self.checkpoints

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if checkpoints is not UNSET:
            field_dict["checkpoints"] = checkpoints

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.checkpoint_info import CheckpointInfo  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_checkpoints(data: object) -> list[CheckpointInfo] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                checkpoints_type_0 = []
                _checkpoints_type_0 = data
                for checkpoints_type_0_item_data in _checkpoints_type_0:
                    checkpoints_type_0_item = CheckpointInfo.from_dict(checkpoints_type_0_item_data)

                    checkpoints_type_0.append(checkpoints_type_0_item)

                return checkpoints_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[CheckpointInfo] | None | Unset, data)

        checkpoints = _parse_checkpoints(d.pop("checkpoints", UNSET))

        checkpoint_list = cls(
            checkpoints=checkpoints,
        )

        checkpoint_list.additional_properties = d
        return checkpoint_list

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
