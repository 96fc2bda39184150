from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.create_job_debug_options import CreateJobDebugOptions
    from ..models.sub_job_config import SubJobConfig


T = TypeVar("T", bound="CreateJobRequest")


@_attrs_define
class CreateJobRequest:
    """The create-job body. Keys beyond the named ones are forwarded unchanged (the service rejects job_id). hardware stays
    a plain string here because raw bodies are forwarded as given and the service rejects an unknown value itself.

        Attributes:
            sub_job_configs (list[SubJobConfig]):
            experiment_name (None | str | Unset):
            hardware (None | str | Unset): H200, B200 or B300 (see Hardware); omitted means H200.
            comment (None | str | Unset):
            idle_timeout_seconds (int | None | Unset): 0 disables idle reclamation; otherwise 300 to 604800. Omitted means
                1800.
            pending_timeout_seconds (int | None | Unset): 300 to 604800; omitted means 86400.
            debug (CreateJobDebugOptions | None | Unset): Internal-only debug options, refused by clients unless explicitly
                enabled.
    """

    sub_job_configs: list[SubJobConfig]
    experiment_name: None | str | Unset = UNSET
    hardware: None | str | Unset = UNSET
    comment: None | str | Unset = UNSET
    idle_timeout_seconds: int | None | Unset = UNSET
    pending_timeout_seconds: int | None | Unset = UNSET
    debug: CreateJobDebugOptions | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.create_job_debug_options import CreateJobDebugOptions  # noqa: PLC0415

        sub_job_configs = []
        for sub_job_configs_item_data in self.sub_job_configs:
            sub_job_configs_item = sub_job_configs_item_data.to_dict()
            sub_job_configs.append(sub_job_configs_item)

        experiment_name: None | str | Unset
        if isinstance(self.experiment_name, Unset):
            experiment_name = UNSET
        else:
            experiment_name = self.experiment_name

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

        idle_timeout_seconds: int | None | Unset
        if isinstance(self.idle_timeout_seconds, Unset):
            idle_timeout_seconds = UNSET
        else:
            idle_timeout_seconds = self.idle_timeout_seconds

        pending_timeout_seconds: int | None | Unset
        if isinstance(self.pending_timeout_seconds, Unset):
            pending_timeout_seconds = UNSET
        else:
            pending_timeout_seconds = self.pending_timeout_seconds

        debug: dict[str, Any] | None | Unset
        if isinstance(self.debug, Unset):
            debug = UNSET
        elif isinstance(self.debug, CreateJobDebugOptions):
            debug = self.debug.to_dict()
        else:
            debug = self.debug

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "sub_job_configs": sub_job_configs,
            }
        )
        if experiment_name is not UNSET:
            field_dict["experiment_name"] = experiment_name
        if hardware is not UNSET:
            field_dict["hardware"] = hardware
        if comment is not UNSET:
            field_dict["comment"] = comment
        if idle_timeout_seconds is not UNSET:
            field_dict["idle_timeout_seconds"] = idle_timeout_seconds
        if pending_timeout_seconds is not UNSET:
            field_dict["pending_timeout_seconds"] = pending_timeout_seconds
        if debug is not UNSET:
            field_dict["debug"] = debug

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.create_job_debug_options import CreateJobDebugOptions  # noqa: PLC0415
        from ..models.sub_job_config import SubJobConfig  # noqa: PLC0415

        d = dict(src_dict)
        sub_job_configs = []
        _sub_job_configs = d.pop("sub_job_configs")
        for sub_job_configs_item_data in _sub_job_configs:
            sub_job_configs_item = SubJobConfig.from_dict(sub_job_configs_item_data)

            sub_job_configs.append(sub_job_configs_item)

        def _parse_experiment_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        experiment_name = _parse_experiment_name(d.pop("experiment_name", UNSET))

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

        def _parse_idle_timeout_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        idle_timeout_seconds = _parse_idle_timeout_seconds(d.pop("idle_timeout_seconds", UNSET))

        def _parse_pending_timeout_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        pending_timeout_seconds = _parse_pending_timeout_seconds(d.pop("pending_timeout_seconds", UNSET))

        def _parse_debug(data: object) -> CreateJobDebugOptions | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                debug_type_0 = CreateJobDebugOptions.from_dict(data)

                return debug_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CreateJobDebugOptions | None | Unset, data)

        debug = _parse_debug(d.pop("debug", UNSET))

        create_job_request = cls(
            sub_job_configs=sub_job_configs,
            experiment_name=experiment_name,
            hardware=hardware,
            comment=comment,
            idle_timeout_seconds=idle_timeout_seconds,
            pending_timeout_seconds=pending_timeout_seconds,
            debug=debug,
        )

        create_job_request.additional_properties = d
        return create_job_request

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
