from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.checkpoint_reason import CheckpointReason
from ..types import UNSET, Unset

T = TypeVar("T", bound="RunCheckpoint")


@_attrs_define
class RunCheckpoint:
    """A retained checkpoint of a run (resumable; its manifest fingerprints every part).

    Attributes:
        checkpoint_id (str | Unset):
        job_id (None | str | Unset): The Cortex Training job that saved it.
        step (int | None | Unset):
        reasons (list[CheckpointReason] | None | Unset):
        val_loss (float | None | Unset):
        manifest_sha256 (None | str | Unset):
    """

    checkpoint_id: str | Unset = UNSET
    job_id: None | str | Unset = UNSET
    step: int | None | Unset = UNSET
    reasons: list[CheckpointReason] | None | Unset = UNSET
    val_loss: float | None | Unset = UNSET
    manifest_sha256: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        checkpoint_id = self.checkpoint_id

        job_id: None | str | Unset
        if isinstance(self.job_id, Unset):
            job_id = UNSET
        else:
            job_id = self.job_id

        step: int | None | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        else:
            step = self.step

        reasons: list[str] | None | Unset
        if isinstance(self.reasons, Unset):
            reasons = UNSET
        elif isinstance(self.reasons, list):
            reasons = []
            for reasons_type_0_item_data in self.reasons:
                reasons_type_0_item = reasons_type_0_item_data.value
                reasons.append(reasons_type_0_item)

        else:
            reasons = self.reasons

        val_loss: float | None | Unset
        if isinstance(self.val_loss, Unset):
            val_loss = UNSET
        else:
            val_loss = self.val_loss

        manifest_sha256: None | str | Unset
        if isinstance(self.manifest_sha256, Unset):
            manifest_sha256 = UNSET
        else:
            manifest_sha256 = self.manifest_sha256

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if checkpoint_id is not UNSET:
            field_dict["checkpoint_id"] = checkpoint_id
        if job_id is not UNSET:
            field_dict["job_id"] = job_id
        if step is not UNSET:
            field_dict["step"] = step
        if reasons is not UNSET:
            field_dict["reasons"] = reasons
        if val_loss is not UNSET:
            field_dict["val_loss"] = val_loss
        if manifest_sha256 is not UNSET:
            field_dict["manifest_sha256"] = manifest_sha256

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoint_id = d.pop("checkpoint_id", UNSET)

        def _parse_job_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        job_id = _parse_job_id(d.pop("job_id", UNSET))

        def _parse_step(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        step = _parse_step(d.pop("step", UNSET))

        def _parse_reasons(data: object) -> list[CheckpointReason] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                reasons_type_0 = []
                _reasons_type_0 = data
                for reasons_type_0_item_data in _reasons_type_0:
                    reasons_type_0_item = CheckpointReason(reasons_type_0_item_data)

                    reasons_type_0.append(reasons_type_0_item)

                return reasons_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[CheckpointReason] | None | Unset, data)

        reasons = _parse_reasons(d.pop("reasons", UNSET))

        def _parse_val_loss(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        val_loss = _parse_val_loss(d.pop("val_loss", UNSET))

        def _parse_manifest_sha256(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        manifest_sha256 = _parse_manifest_sha256(d.pop("manifest_sha256", UNSET))

        run_checkpoint = cls(
            checkpoint_id=checkpoint_id,
            job_id=job_id,
            step=step,
            reasons=reasons,
            val_loss=val_loss,
            manifest_sha256=manifest_sha256,
        )

        run_checkpoint.additional_properties = d
        return run_checkpoint

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
