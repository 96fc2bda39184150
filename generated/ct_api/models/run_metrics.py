from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.metric_series import MetricSeries


T = TypeVar("T", bound="RunMetrics")


@_attrs_define
class RunMetrics:
    """Metric series by name (train_loss, val_loss, lr, epoch, tokens_per_s, and val_accuracy/<label field> per label).
    `cursor` is the highest step returned, or the after_step asked for when nothing is new.

        Attributes:
            series (MetricSeries | None | Unset):
            cursor (int | Unset):
    """

    series: MetricSeries | None | Unset = UNSET
    cursor: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.metric_series import MetricSeries  # noqa: PLC0415

        series: dict[str, Any] | None | Unset
        if isinstance(self.series, Unset):
            series = UNSET
        elif isinstance(self.series, MetricSeries):
            series = self.series.to_dict()
        else:
            series = self.series

        cursor = self.cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if series is not UNSET:
            field_dict["series"] = series
        if cursor is not UNSET:
            field_dict["cursor"] = cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.metric_series import MetricSeries  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_series(data: object) -> MetricSeries | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                series_type_0 = MetricSeries.from_dict(data)

                return series_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MetricSeries | None | Unset, data)

        series = _parse_series(d.pop("series", UNSET))

        cursor = d.pop("cursor", UNSET)

        run_metrics = cls(
            series=series,
            cursor=cursor,
        )

        run_metrics.additional_properties = d
        return run_metrics

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
