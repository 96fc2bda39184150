from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.dataset_status import DatasetStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.dataset_fingerprints import DatasetFingerprints
    from ..models.dataset_label import DatasetLabel
    from ..models.dataset_source import DatasetSource
    from ..models.dataset_splits import DatasetSplits
    from ..models.leakage_violation import LeakageViolation


T = TypeVar("T", bound="Dataset")


@_attrs_define
class Dataset:
    """A dataset build.

    Attributes:
        dataset_id (str | Unset): ds_<ULID>.
        status (DatasetStatus | Unset): A build is `building` until it settles; a leakage violation fails it.
        name (None | str | Unset):
        created_at (None | str | Unset): RFC 3339 UTC.
        finished_at (None | str | Unset): When the build settled.
        source (DatasetSource | None | Unset):
        text_field (None | str | Unset):
        label_fields (list[str] | None | Unset):
        val_fraction (float | None | Unset):
        seed (int | None | Unset):
        splits (DatasetSplits | None | Unset):
        fingerprints (DatasetFingerprints | None | Unset):
        labels (list[DatasetLabel] | None | Unset):
        violations (list[LeakageViolation] | None | Unset):
        error (None | str | Unset): Why the build failed
    """

    dataset_id: str | Unset = UNSET
    status: DatasetStatus | Unset = UNSET
    name: None | str | Unset = UNSET
    created_at: None | str | Unset = UNSET
    finished_at: None | str | Unset = UNSET
    source: DatasetSource | None | Unset = UNSET
    text_field: None | str | Unset = UNSET
    label_fields: list[str] | None | Unset = UNSET
    val_fraction: float | None | Unset = UNSET
    seed: int | None | Unset = UNSET
    splits: DatasetSplits | None | Unset = UNSET
    fingerprints: DatasetFingerprints | None | Unset = UNSET
    labels: list[DatasetLabel] | None | Unset = UNSET
    violations: list[LeakageViolation] | None | Unset = UNSET
    error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.dataset_fingerprints import DatasetFingerprints  # noqa: PLC0415
        from ..models.dataset_source import DatasetSource  # noqa: PLC0415
        from ..models.dataset_splits import DatasetSplits  # noqa: PLC0415

        dataset_id = self.dataset_id

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        else:
            created_at = self.created_at

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        else:
            finished_at = self.finished_at

        source: dict[str, Any] | None | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        elif isinstance(self.source, DatasetSource):
            source = self.source.to_dict()
        else:
            source = self.source

        text_field: None | str | Unset
        if isinstance(self.text_field, Unset):
            text_field = UNSET
        else:
            text_field = self.text_field

        label_fields: list[str] | None | Unset
        if isinstance(self.label_fields, Unset):
            label_fields = UNSET
        elif isinstance(self.label_fields, list):
            label_fields = self.label_fields

        else:
            label_fields = self.label_fields

        val_fraction: float | None | Unset
        if isinstance(self.val_fraction, Unset):
            val_fraction = UNSET
        else:
            val_fraction = self.val_fraction

        seed: int | None | Unset
        if isinstance(self.seed, Unset):
            seed = UNSET
        else:
            seed = self.seed

        splits: dict[str, Any] | None | Unset
        if isinstance(self.splits, Unset):
            splits = UNSET
        elif isinstance(self.splits, DatasetSplits):
            splits = self.splits.to_dict()
        else:
            splits = self.splits

        fingerprints: dict[str, Any] | None | Unset
        if isinstance(self.fingerprints, Unset):
            fingerprints = UNSET
        elif isinstance(self.fingerprints, DatasetFingerprints):
            fingerprints = self.fingerprints.to_dict()
        else:
            fingerprints = self.fingerprints

        labels: list[dict[str, Any]] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, list):
            labels = []
            for labels_type_0_item_data in self.labels:
                labels_type_0_item = labels_type_0_item_data.to_dict()
                labels.append(labels_type_0_item)

        else:
            labels = self.labels

        violations: list[dict[str, Any]] | None | Unset
        if isinstance(self.violations, Unset):
            violations = UNSET
        elif isinstance(self.violations, list):
            violations = []
            for violations_type_0_item_data in self.violations:
                violations_type_0_item = violations_type_0_item_data.to_dict()
                violations.append(violations_type_0_item)

        else:
            violations = self.violations

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if dataset_id is not UNSET:
            field_dict["dataset_id"] = dataset_id
        if status is not UNSET:
            field_dict["status"] = status
        if name is not UNSET:
            field_dict["name"] = name
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if source is not UNSET:
            field_dict["source"] = source
        if text_field is not UNSET:
            field_dict["text_field"] = text_field
        if label_fields is not UNSET:
            field_dict["label_fields"] = label_fields
        if val_fraction is not UNSET:
            field_dict["val_fraction"] = val_fraction
        if seed is not UNSET:
            field_dict["seed"] = seed
        if splits is not UNSET:
            field_dict["splits"] = splits
        if fingerprints is not UNSET:
            field_dict["fingerprints"] = fingerprints
        if labels is not UNSET:
            field_dict["labels"] = labels
        if violations is not UNSET:
            field_dict["violations"] = violations
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dataset_fingerprints import DatasetFingerprints  # noqa: PLC0415
        from ..models.dataset_label import DatasetLabel  # noqa: PLC0415
        from ..models.dataset_source import DatasetSource  # noqa: PLC0415
        from ..models.dataset_splits import DatasetSplits  # noqa: PLC0415
        from ..models.leakage_violation import LeakageViolation  # noqa: PLC0415

        d = dict(src_dict)
        dataset_id = d.pop("dataset_id", UNSET)

        _status = d.pop("status", UNSET)
        status: DatasetStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = DatasetStatus(_status)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_created_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        def _parse_finished_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        def _parse_source(data: object) -> DatasetSource | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                source_type_0 = DatasetSource.from_dict(data)

                return source_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DatasetSource | None | Unset, data)

        source = _parse_source(d.pop("source", UNSET))

        def _parse_text_field(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        text_field = _parse_text_field(d.pop("text_field", UNSET))

        def _parse_label_fields(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                label_fields_type_0 = cast(list[str], data)

                return label_fields_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        label_fields = _parse_label_fields(d.pop("label_fields", UNSET))

        def _parse_val_fraction(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        val_fraction = _parse_val_fraction(d.pop("val_fraction", UNSET))

        def _parse_seed(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        seed = _parse_seed(d.pop("seed", UNSET))

        def _parse_splits(data: object) -> DatasetSplits | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                splits_type_0 = DatasetSplits.from_dict(data)

                return splits_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DatasetSplits | None | Unset, data)

        splits = _parse_splits(d.pop("splits", UNSET))

        def _parse_fingerprints(data: object) -> DatasetFingerprints | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                fingerprints_type_0 = DatasetFingerprints.from_dict(data)

                return fingerprints_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DatasetFingerprints | None | Unset, data)

        fingerprints = _parse_fingerprints(d.pop("fingerprints", UNSET))

        def _parse_labels(data: object) -> list[DatasetLabel] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                labels_type_0 = []
                _labels_type_0 = data
                for labels_type_0_item_data in _labels_type_0:
                    labels_type_0_item = DatasetLabel.from_dict(labels_type_0_item_data)

                    labels_type_0.append(labels_type_0_item)

                return labels_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[DatasetLabel] | None | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))

        def _parse_violations(data: object) -> list[LeakageViolation] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                violations_type_0 = []
                _violations_type_0 = data
                for violations_type_0_item_data in _violations_type_0:
                    violations_type_0_item = LeakageViolation.from_dict(violations_type_0_item_data)

                    violations_type_0.append(violations_type_0_item)

                return violations_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[LeakageViolation] | None | Unset, data)

        violations = _parse_violations(d.pop("violations", UNSET))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        dataset = cls(
            dataset_id=dataset_id,
            status=status,
            name=name,
            created_at=created_at,
            finished_at=finished_at,
            source=source,
            text_field=text_field,
            label_fields=label_fields,
            val_fraction=val_fraction,
            seed=seed,
            splits=splits,
            fingerprints=fingerprints,
            labels=labels,
            violations=violations,
            error=error,
        )

        dataset.additional_properties = d
        return dataset

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
