from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="LoadRequest")


@_attrs_define
class LoadRequest:
    """
    Attributes:
        checkpoint_id (str):
        source_job_id (str | Unset):
        target_sub_job_id (str | Unset): A training sub-job of this job ({job_id}:training:{index}).
    """

    checkpoint_id: str
    source_job_id: str | Unset = UNSET
    target_sub_job_id: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        checkpoint_id = self.checkpoint_id

        source_job_id = self.source_job_id

        target_sub_job_id = self.target_sub_job_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "checkpoint_id": checkpoint_id,
            }
        )
        if source_job_id is not UNSET:
            field_dict["source_job_id"] = source_job_id
        if target_sub_job_id is not UNSET:
            field_dict["target_sub_job_id"] = target_sub_job_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoint_id = d.pop("checkpoint_id")

        source_job_id = d.pop("source_job_id", UNSET)

        target_sub_job_id = d.pop("target_sub_job_id", UNSET)

        load_request = cls(
            checkpoint_id=checkpoint_id,
            source_job_id=source_job_id,
            target_sub_job_id=target_sub_job_id,
        )

        return load_request
