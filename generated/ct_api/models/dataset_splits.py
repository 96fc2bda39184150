from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.split_size import SplitSize


T = TypeVar("T", bound="DatasetSplits")


@_attrs_define
class DatasetSplits:
    """
    Attributes:
        train (None | SplitSize | Unset):
        validation (None | SplitSize | Unset):
    """

    train: None | SplitSize | Unset = UNSET
    validation: None | SplitSize | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.split_size import SplitSize  # noqa: PLC0415

        train: dict[str, Any] | None | Unset
        if isinstance(self.train, Unset):
            train = UNSET
        elif isinstance(self.train, SplitSize):
            train = self.train.to_dict()
        else:
            train = self.train

        validation: dict[str, Any] | None | Unset
        if isinstance(self.validation, Unset):
            validation = UNSET
        elif isinstance(self.validation, SplitSize):
            validation = self.validation.to_dict()
        else:
            validation = self.validation

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if train is not UNSET:
            field_dict["train"] = train
        if validation is not UNSET:
            field_dict["validation"] = validation

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.split_size import SplitSize  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_train(data: object) -> None | SplitSize | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                train_type_0 = SplitSize.from_dict(data)

                return train_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SplitSize | Unset, data)

        train = _parse_train(d.pop("train", UNSET))

        def _parse_validation(data: object) -> None | SplitSize | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                validation_type_0 = SplitSize.from_dict(data)

                return validation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SplitSize | Unset, data)

        validation = _parse_validation(d.pop("validation", UNSET))

        dataset_splits = cls(
            train=train,
            validation=validation,
        )

        dataset_splits.additional_properties = d
        return dataset_splits

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
