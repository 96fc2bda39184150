from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="BootstrapRouterReplayResult")


@_attrs_define
class BootstrapRouterReplayResult:
    """
    Attributes:
        sampling_job_id (str | Unset): The sampling zone id to put in router_replay metadata.
    """

    sampling_job_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        sampling_job_id = self.sampling_job_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if sampling_job_id is not UNSET:
            field_dict["sampling_job_id"] = sampling_job_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        sampling_job_id = d.pop("sampling_job_id", UNSET)

        bootstrap_router_replay_result = cls(
            sampling_job_id=sampling_job_id,
        )

        bootstrap_router_replay_result.additional_properties = d
        return bootstrap_router_replay_result

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
