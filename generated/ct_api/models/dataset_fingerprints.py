from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="DatasetFingerprints")


@_attrs_define
class DatasetFingerprints:
    """SHA-256 hex digests of the source file and of each split's canonical form.

    Attributes:
        source (None | str | Unset):
        train (None | str | Unset):
        validation (None | str | Unset):
    """

    source: None | str | Unset = UNSET
    train: None | str | Unset = UNSET
    validation: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        source: None | str | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        else:
            source = self.source

        train: None | str | Unset
        if isinstance(self.train, Unset):
            train = UNSET
        else:
            train = self.train

        validation: None | str | Unset
        if isinstance(self.validation, Unset):
            validation = UNSET
        else:
            validation = self.validation

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if source is not UNSET:
            field_dict["source"] = source
        if train is not UNSET:
            field_dict["train"] = train
        if validation is not UNSET:
            field_dict["validation"] = validation

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_source(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source = _parse_source(d.pop("source", UNSET))

        def _parse_train(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        train = _parse_train(d.pop("train", UNSET))

        def _parse_validation(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        validation = _parse_validation(d.pop("validation", UNSET))

        dataset_fingerprints = cls(
            source=source,
            train=train,
            validation=validation,
        )

        dataset_fingerprints.additional_properties = d
        return dataset_fingerprints

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
