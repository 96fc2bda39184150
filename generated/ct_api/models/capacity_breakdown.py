from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_type_breakdown import JobTypeBreakdown
    from ..models.submitter_breakdown import SubmitterBreakdown


T = TypeVar("T", bound="CapacityBreakdown")


@_attrs_define
class CapacityBreakdown:
    """
    Attributes:
        unsupported_dimensions (list[str] | None | Unset):
        job_count (int | None | Unset):
        truncated (bool | None | Unset):
        by_job_type (JobTypeBreakdown | None | Unset):
        by_submitted_by (None | SubmitterBreakdown | Unset):
    """

    unsupported_dimensions: list[str] | None | Unset = UNSET
    job_count: int | None | Unset = UNSET
    truncated: bool | None | Unset = UNSET
    by_job_type: JobTypeBreakdown | None | Unset = UNSET
    by_submitted_by: None | SubmitterBreakdown | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_type_breakdown import JobTypeBreakdown  # noqa: PLC0415
        from ..models.submitter_breakdown import SubmitterBreakdown  # noqa: PLC0415

        unsupported_dimensions: list[str] | None | Unset
        if isinstance(self.unsupported_dimensions, Unset):
            unsupported_dimensions = UNSET
        elif isinstance(self.unsupported_dimensions, list):
            unsupported_dimensions = self.unsupported_dimensions

        else:
            unsupported_dimensions = self.unsupported_dimensions

        job_count: int | None | Unset
        if isinstance(self.job_count, Unset):
            job_count = UNSET
        else:
            job_count = self.job_count

        truncated: bool | None | Unset
        if isinstance(self.truncated, Unset):
            truncated = UNSET
        else:
            truncated = self.truncated

        by_job_type: dict[str, Any] | None | Unset
        if isinstance(self.by_job_type, Unset):
            by_job_type = UNSET
        elif isinstance(self.by_job_type, JobTypeBreakdown):
            by_job_type = self.by_job_type.to_dict()
        else:
            by_job_type = self.by_job_type

        by_submitted_by: dict[str, Any] | None | Unset
        if isinstance(self.by_submitted_by, Unset):
            by_submitted_by = UNSET
        elif isinstance(self.by_submitted_by, SubmitterBreakdown):
            by_submitted_by = self.by_submitted_by.to_dict()
        else:
            by_submitted_by = self.by_submitted_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if unsupported_dimensions is not UNSET:
            field_dict["unsupported_dimensions"] = unsupported_dimensions
        if job_count is not UNSET:
            field_dict["job_count"] = job_count
        if truncated is not UNSET:
            field_dict["truncated"] = truncated
        if by_job_type is not UNSET:
            field_dict["by_job_type"] = by_job_type
        if by_submitted_by is not UNSET:
            field_dict["by_submitted_by"] = by_submitted_by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_type_breakdown import JobTypeBreakdown  # noqa: PLC0415
        from ..models.submitter_breakdown import SubmitterBreakdown  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_unsupported_dimensions(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                unsupported_dimensions_type_0 = cast(list[str], data)

                return unsupported_dimensions_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        unsupported_dimensions = _parse_unsupported_dimensions(d.pop("unsupported_dimensions", UNSET))

        def _parse_job_count(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        job_count = _parse_job_count(d.pop("job_count", UNSET))

        def _parse_truncated(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        truncated = _parse_truncated(d.pop("truncated", UNSET))

        def _parse_by_job_type(data: object) -> JobTypeBreakdown | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                by_job_type_type_0 = JobTypeBreakdown.from_dict(data)

                return by_job_type_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobTypeBreakdown | None | Unset, data)

        by_job_type = _parse_by_job_type(d.pop("by_job_type", UNSET))

        def _parse_by_submitted_by(data: object) -> None | SubmitterBreakdown | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                by_submitted_by_type_0 = SubmitterBreakdown.from_dict(data)

                return by_submitted_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SubmitterBreakdown | Unset, data)

        by_submitted_by = _parse_by_submitted_by(d.pop("by_submitted_by", UNSET))

        capacity_breakdown = cls(
            unsupported_dimensions=unsupported_dimensions,
            job_count=job_count,
            truncated=truncated,
            by_job_type=by_job_type,
            by_submitted_by=by_submitted_by,
        )

        capacity_breakdown.additional_properties = d
        return capacity_breakdown

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
