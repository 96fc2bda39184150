from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.run_log_entry import RunLogEntry


T = TypeVar("T", bound="RunLogs")


@_attrs_define
class RunLogs:
    """Log entries in order; `cursor` is the last entry's seq (pass it as `after`).

    Attributes:
        logs (list[RunLogEntry] | None | Unset):
        cursor (int | Unset):
    """

    logs: list[RunLogEntry] | None | Unset = UNSET
    cursor: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        logs: list[dict[str, Any]] | None | Unset
        if isinstance(self.logs, Unset):
            logs = UNSET
        elif isinstance(self.logs, list):
            logs = []
            for logs_type_0_item_data in self.logs:
                logs_type_0_item = logs_type_0_item_data.to_dict()
                logs.append(logs_type_0_item)

        else:
            logs = self.logs

        cursor = self.cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if logs is not UNSET:
            field_dict["logs"] = logs
        if cursor is not UNSET:
            field_dict["cursor"] = cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_log_entry import RunLogEntry  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_logs(data: object) -> list[RunLogEntry] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                logs_type_0 = []
                _logs_type_0 = data
                for logs_type_0_item_data in _logs_type_0:
                    logs_type_0_item = RunLogEntry.from_dict(logs_type_0_item_data)

                    logs_type_0.append(logs_type_0_item)

                return logs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[RunLogEntry] | None | Unset, data)

        logs = _parse_logs(d.pop("logs", UNSET))

        cursor = d.pop("cursor", UNSET)

        run_logs = cls(
            logs=logs,
            cursor=cursor,
        )

        run_logs.additional_properties = d
        return run_logs

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
