from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="MetricSeries")


@_attrs_define
class MetricSeries:
    """Series name to its points, in step order."""

    additional_properties: dict[str, list[list[float]]] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            field_dict[prop_name] = []
            for componentsschemas_metric_points_item_data in prop:
                componentsschemas_metric_points_item = componentsschemas_metric_points_item_data

                field_dict[prop_name].append(componentsschemas_metric_points_item)

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        metric_series = cls()

        additional_properties = {}
        for prop_name, prop_dict in d.items():
            additional_property = []
            _additional_property = prop_dict
            for componentsschemas_metric_points_item_data in _additional_property:
                componentsschemas_metric_points_item = cast(list[float], componentsschemas_metric_points_item_data)

                additional_property.append(componentsschemas_metric_points_item)

            additional_properties[prop_name] = additional_property

        metric_series.additional_properties = additional_properties
        return metric_series

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> list[list[float]]:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: list[list[float]]) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
