from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RegisteredModel")


@_attrs_define
class RegisteredModel:
    """A model version registered by a succeeded run, from its best checkpoint exported weights-only (the newest
    checkpoint, flagged `fallback`, when validation never ran).

        Attributes:
            model_id (str | Unset): mdl_<ULID>.
            status (None | str | Unset):
            run_id (None | str | Unset):
            model_name (None | str | Unset):
            job_id (None | str | Unset):
            checkpoint_id (None | str | Unset): The weights-only export.
            source_checkpoint_id (None | str | Unset): The resumable checkpoint it was exported from.
            step (int | None | Unset):
            val_loss (float | None | Unset):
            fallback (bool | None | Unset):
            config_fingerprint (None | str | Unset):
            created_at (None | str | Unset):
    """

    model_id: str | Unset = UNSET
    status: None | str | Unset = UNSET
    run_id: None | str | Unset = UNSET
    model_name: None | str | Unset = UNSET
    job_id: None | str | Unset = UNSET
    checkpoint_id: None | str | Unset = UNSET
    source_checkpoint_id: None | str | Unset = UNSET
    step: int | None | Unset = UNSET
    val_loss: float | None | Unset = UNSET
    fallback: bool | None | Unset = UNSET
    config_fingerprint: None | str | Unset = UNSET
    created_at: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        model_id = self.model_id

        status: None | str | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        else:
            status = self.status

        run_id: None | str | Unset
        if isinstance(self.run_id, Unset):
            run_id = UNSET
        else:
            run_id = self.run_id

        model_name: None | str | Unset
        if isinstance(self.model_name, Unset):
            model_name = UNSET
        else:
            model_name = self.model_name

        job_id: None | str | Unset
        if isinstance(self.job_id, Unset):
            job_id = UNSET
        else:
            job_id = self.job_id

        checkpoint_id: None | str | Unset
        if isinstance(self.checkpoint_id, Unset):
            checkpoint_id = UNSET
        else:
            checkpoint_id = self.checkpoint_id

        source_checkpoint_id: None | str | Unset
        if isinstance(self.source_checkpoint_id, Unset):
            source_checkpoint_id = UNSET
        else:
            source_checkpoint_id = self.source_checkpoint_id

        step: int | None | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        else:
            step = self.step

        val_loss: float | None | Unset
        if isinstance(self.val_loss, Unset):
            val_loss = UNSET
        else:
            val_loss = self.val_loss

        fallback: bool | None | Unset
        if isinstance(self.fallback, Unset):
            fallback = UNSET
        else:
            fallback = self.fallback

        config_fingerprint: None | str | Unset
        if isinstance(self.config_fingerprint, Unset):
            config_fingerprint = UNSET
        else:
            config_fingerprint = self.config_fingerprint

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        else:
            created_at = self.created_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if model_id is not UNSET:
            field_dict["model_id"] = model_id
        if status is not UNSET:
            field_dict["status"] = status
        if run_id is not UNSET:
            field_dict["run_id"] = run_id
        if model_name is not UNSET:
            field_dict["model_name"] = model_name
        if job_id is not UNSET:
            field_dict["job_id"] = job_id
        if checkpoint_id is not UNSET:
            field_dict["checkpoint_id"] = checkpoint_id
        if source_checkpoint_id is not UNSET:
            field_dict["source_checkpoint_id"] = source_checkpoint_id
        if step is not UNSET:
            field_dict["step"] = step
        if val_loss is not UNSET:
            field_dict["val_loss"] = val_loss
        if fallback is not UNSET:
            field_dict["fallback"] = fallback
        if config_fingerprint is not UNSET:
            field_dict["config_fingerprint"] = config_fingerprint
        if created_at is not UNSET:
            field_dict["created_at"] = created_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        model_id = d.pop("model_id", UNSET)

        def _parse_status(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        def _parse_run_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run_id = _parse_run_id(d.pop("run_id", UNSET))

        def _parse_model_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_name = _parse_model_name(d.pop("model_name", UNSET))

        def _parse_job_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        job_id = _parse_job_id(d.pop("job_id", UNSET))

        def _parse_checkpoint_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        checkpoint_id = _parse_checkpoint_id(d.pop("checkpoint_id", UNSET))

        def _parse_source_checkpoint_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_checkpoint_id = _parse_source_checkpoint_id(d.pop("source_checkpoint_id", UNSET))

        def _parse_step(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        step = _parse_step(d.pop("step", UNSET))

        def _parse_val_loss(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        val_loss = _parse_val_loss(d.pop("val_loss", UNSET))

        def _parse_fallback(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        fallback = _parse_fallback(d.pop("fallback", UNSET))

        def _parse_config_fingerprint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        config_fingerprint = _parse_config_fingerprint(d.pop("config_fingerprint", UNSET))

        def _parse_created_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        registered_model = cls(
            model_id=model_id,
            status=status,
            run_id=run_id,
            model_name=model_name,
            job_id=job_id,
            checkpoint_id=checkpoint_id,
            source_checkpoint_id=source_checkpoint_id,
            step=step,
            val_loss=val_loss,
            fallback=fallback,
            config_fingerprint=config_fingerprint,
            created_at=created_at,
        )

        registered_model.additional_properties = d
        return registered_model

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
