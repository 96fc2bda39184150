from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.sub_job_record import SubJobRecord


T = TypeVar("T", bound="AccountJobRecord")


@_attrs_define
class AccountJobRecord:
    """A per-schema job record plus its database and schema.

    Attributes:
        job_id (str | Unset):
        status (str | Unset): pending, placing, initializing, running, cancelling, cancelled, terminated, failed (or a
            legacy name).
        reason (None | str | Unset):
        reason_details (None | str | Unset):
        created_at (None | str | Unset):
        updated_at (None | str | Unset):
        state_changed_at (None | str | Unset):
        submitted_by (None | str | Unset):
        owner_role (None | str | Unset):
        hardware (None | str | Unset):
        comment (None | str | Unset):
        image_tag (None | str | Unset):
        idle_timeout_seconds (float | int | None | Unset):
        pending_timeout_seconds (float | int | None | Unset):
        sub_jobs (list[SubJobRecord] | None | Unset):
        database_name (str | Unset):
        schema_name (str | Unset):
    """

    job_id: str | Unset = UNSET
    status: str | Unset = UNSET
    reason: None | str | Unset = UNSET
    reason_details: None | str | Unset = UNSET
    created_at: None | str | Unset = UNSET
    updated_at: None | str | Unset = UNSET
    state_changed_at: None | str | Unset = UNSET
    submitted_by: None | str | Unset = UNSET
    owner_role: None | str | Unset = UNSET
    hardware: None | str | Unset = UNSET
    comment: None | str | Unset = UNSET
    image_tag: None | str | Unset = UNSET
    idle_timeout_seconds: float | int | None | Unset = UNSET
    pending_timeout_seconds: float | int | None | Unset = UNSET
    sub_jobs: list[SubJobRecord] | None | Unset = UNSET
    database_name: str | Unset = UNSET
    schema_name: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        job_id = self.job_id

        status = self.status

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        reason_details: None | str | Unset
        if isinstance(self.reason_details, Unset):
            reason_details = UNSET
        else:
            reason_details = self.reason_details

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        else:
            created_at = self.created_at

        updated_at: None | str | Unset
        if isinstance(self.updated_at, Unset):
            updated_at = UNSET
        else:
            updated_at = self.updated_at

        state_changed_at: None | str | Unset
        if isinstance(self.state_changed_at, Unset):
            state_changed_at = UNSET
        else:
            state_changed_at = self.state_changed_at

        submitted_by: None | str | Unset
        if isinstance(self.submitted_by, Unset):
            submitted_by = UNSET
        else:
            submitted_by = self.submitted_by

        owner_role: None | str | Unset
        if isinstance(self.owner_role, Unset):
            owner_role = UNSET
        else:
            owner_role = self.owner_role

        hardware: None | str | Unset
        if isinstance(self.hardware, Unset):
            hardware = UNSET
        else:
            hardware = self.hardware

        comment: None | str | Unset
        if isinstance(self.comment, Unset):
            comment = UNSET
        else:
            comment = self.comment

        image_tag: None | str | Unset
        if isinstance(self.image_tag, Unset):
            image_tag = UNSET
        else:
            image_tag = self.image_tag

        idle_timeout_seconds: float | int | None | Unset
        if isinstance(self.idle_timeout_seconds, Unset):
            idle_timeout_seconds = UNSET
        else:
            idle_timeout_seconds = self.idle_timeout_seconds

        pending_timeout_seconds: float | int | None | Unset
        if isinstance(self.pending_timeout_seconds, Unset):
            pending_timeout_seconds = UNSET
        else:
            pending_timeout_seconds = self.pending_timeout_seconds

        sub_jobs: list[dict[str, Any]] | None | Unset
        if isinstance(self.sub_jobs, Unset):
            sub_jobs = UNSET
        elif isinstance(self.sub_jobs, list):
            sub_jobs = []
            for sub_jobs_type_0_item_data in self.sub_jobs:
                sub_jobs_type_0_item = sub_jobs_type_0_item_data.to_dict()
                sub_jobs.append(sub_jobs_type_0_item)

        else:
            sub_jobs = self.sub_jobs

        database_name = self.database_name

        schema_name = self.schema_name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if job_id is not UNSET:
            field_dict["job_id"] = job_id
        if status is not UNSET:
            field_dict["status"] = status
        if reason is not UNSET:
            field_dict["reason"] = reason
        if reason_details is not UNSET:
            field_dict["reason_details"] = reason_details
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if updated_at is not UNSET:
            field_dict["updated_at"] = updated_at
        if state_changed_at is not UNSET:
            field_dict["state_changed_at"] = state_changed_at
        if submitted_by is not UNSET:
            field_dict["submitted_by"] = submitted_by
        if owner_role is not UNSET:
            field_dict["owner_role"] = owner_role
        if hardware is not UNSET:
            field_dict["hardware"] = hardware
        if comment is not UNSET:
            field_dict["comment"] = comment
        if image_tag is not UNSET:
            field_dict["image_tag"] = image_tag
        if idle_timeout_seconds is not UNSET:
            field_dict["idle_timeout_seconds"] = idle_timeout_seconds
        if pending_timeout_seconds is not UNSET:
            field_dict["pending_timeout_seconds"] = pending_timeout_seconds
        if sub_jobs is not UNSET:
            field_dict["sub_jobs"] = sub_jobs
        if database_name is not UNSET:
            field_dict["database_name"] = database_name
        if schema_name is not UNSET:
            field_dict["schema_name"] = schema_name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sub_job_record import SubJobRecord  # noqa: PLC0415

        d = dict(src_dict)
        job_id = d.pop("job_id", UNSET)

        status = d.pop("status", UNSET)

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        def _parse_reason_details(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason_details = _parse_reason_details(d.pop("reason_details", UNSET))

        def _parse_created_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        def _parse_updated_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        updated_at = _parse_updated_at(d.pop("updated_at", UNSET))

        def _parse_state_changed_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        state_changed_at = _parse_state_changed_at(d.pop("state_changed_at", UNSET))

        def _parse_submitted_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        submitted_by = _parse_submitted_by(d.pop("submitted_by", UNSET))

        def _parse_owner_role(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        owner_role = _parse_owner_role(d.pop("owner_role", UNSET))

        def _parse_hardware(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        hardware = _parse_hardware(d.pop("hardware", UNSET))

        def _parse_comment(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        comment = _parse_comment(d.pop("comment", UNSET))

        def _parse_image_tag(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_tag = _parse_image_tag(d.pop("image_tag", UNSET))

        def _parse_idle_timeout_seconds(data: object) -> float | int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | int | None | Unset, data)

        idle_timeout_seconds = _parse_idle_timeout_seconds(d.pop("idle_timeout_seconds", UNSET))

        def _parse_pending_timeout_seconds(data: object) -> float | int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | int | None | Unset, data)

        pending_timeout_seconds = _parse_pending_timeout_seconds(d.pop("pending_timeout_seconds", UNSET))

        def _parse_sub_jobs(data: object) -> list[SubJobRecord] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sub_jobs_type_0 = []
                _sub_jobs_type_0 = data
                for sub_jobs_type_0_item_data in _sub_jobs_type_0:
                    sub_jobs_type_0_item = SubJobRecord.from_dict(sub_jobs_type_0_item_data)

                    sub_jobs_type_0.append(sub_jobs_type_0_item)

                return sub_jobs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[SubJobRecord] | None | Unset, data)

        sub_jobs = _parse_sub_jobs(d.pop("sub_jobs", UNSET))

        database_name = d.pop("database_name", UNSET)

        schema_name = d.pop("schema_name", UNSET)

        account_job_record = cls(
            job_id=job_id,
            status=status,
            reason=reason,
            reason_details=reason_details,
            created_at=created_at,
            updated_at=updated_at,
            state_changed_at=state_changed_at,
            submitted_by=submitted_by,
            owner_role=owner_role,
            hardware=hardware,
            comment=comment,
            image_tag=image_tag,
            idle_timeout_seconds=idle_timeout_seconds,
            pending_timeout_seconds=pending_timeout_seconds,
            sub_jobs=sub_jobs,
            database_name=database_name,
            schema_name=schema_name,
        )

        account_job_record.additional_properties = d
        return account_job_record

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
