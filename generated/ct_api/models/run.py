from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_status import RunStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.early_stop import EarlyStop
    from ..models.run_checkpoint import RunCheckpoint
    from ..models.run_overrides import RunOverrides
    from ..models.run_trainer import RunTrainer
    from ..models.run_usage import RunUsage


T = TypeVar("T", bound="Run")


@_attrs_define
class Run:
    """A training run.

    Attributes:
        run_id (str | Unset): run_<ULID>.
        status (RunStatus | Unset): queued, then running, then one of the terminal succeeded, failed or cancelled.
        config_fingerprint (None | str | Unset): SHA-256 hex of the canonical run config.
        dataset_id (None | str | Unset):
        dataset_fingerprint (None | str | Unset):
        model_config_tier (None | str | Unset):
        model_name (None | str | Unset): The catalog model the tier resolved to.
        labels (list[str] | None | Unset):
        seed (int | None | Unset):
        overrides (None | RunOverrides | Unset):
        trainer (None | RunTrainer | Unset):
        total_steps (int | None | Unset): The immutable maximum
        steps_per_epoch (int | None | Unset):
        step (int | None | Unset): Optimizer steps done.
        epoch (float | None | Unset):
        best_val_loss (float | None | Unset):
        best_step (int | None | Unset):
        early_stop (EarlyStop | None | Unset):
        checkpoints (list[RunCheckpoint] | None | Unset):
        best_checkpoint_id (None | str | Unset):
        gpu_seconds (float | None | Unset): GPUs times running seconds
        usage (None | RunUsage | Unset):
        model_id (None | str | Unset): The registered model
        job_ids (list[str] | None | Unset):
        cancel_requested (bool | None | Unset):
        error (None | str | Unset): Why the run failed
        created_at (None | str | Unset): RFC 3339 UTC.
        started_at (None | str | Unset):
        finished_at (None | str | Unset):
    """

    run_id: str | Unset = UNSET
    status: RunStatus | Unset = UNSET
    config_fingerprint: None | str | Unset = UNSET
    dataset_id: None | str | Unset = UNSET
    dataset_fingerprint: None | str | Unset = UNSET
    model_config_tier: None | str | Unset = UNSET
    model_name: None | str | Unset = UNSET
    labels: list[str] | None | Unset = UNSET
    seed: int | None | Unset = UNSET
    overrides: None | RunOverrides | Unset = UNSET
    trainer: None | RunTrainer | Unset = UNSET
    total_steps: int | None | Unset = UNSET
    steps_per_epoch: int | None | Unset = UNSET
    step: int | None | Unset = UNSET
    epoch: float | None | Unset = UNSET
    best_val_loss: float | None | Unset = UNSET
    best_step: int | None | Unset = UNSET
    early_stop: EarlyStop | None | Unset = UNSET
    checkpoints: list[RunCheckpoint] | None | Unset = UNSET
    best_checkpoint_id: None | str | Unset = UNSET
    gpu_seconds: float | None | Unset = UNSET
    usage: None | RunUsage | Unset = UNSET
    model_id: None | str | Unset = UNSET
    job_ids: list[str] | None | Unset = UNSET
    cancel_requested: bool | None | Unset = UNSET
    error: None | str | Unset = UNSET
    created_at: None | str | Unset = UNSET
    started_at: None | str | Unset = UNSET
    finished_at: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.early_stop import EarlyStop  # noqa: PLC0415
        from ..models.run_overrides import RunOverrides  # noqa: PLC0415
        from ..models.run_trainer import RunTrainer  # noqa: PLC0415
        from ..models.run_usage import RunUsage  # noqa: PLC0415

        run_id = self.run_id

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        config_fingerprint: None | str | Unset
        if isinstance(self.config_fingerprint, Unset):
            config_fingerprint = UNSET
        else:
            config_fingerprint = self.config_fingerprint

        dataset_id: None | str | Unset
        if isinstance(self.dataset_id, Unset):
            dataset_id = UNSET
        else:
            dataset_id = self.dataset_id

        dataset_fingerprint: None | str | Unset
        if isinstance(self.dataset_fingerprint, Unset):
            dataset_fingerprint = UNSET
        else:
            dataset_fingerprint = self.dataset_fingerprint

        model_config_tier: None | str | Unset
        if isinstance(self.model_config_tier, Unset):
            model_config_tier = UNSET
        else:
            model_config_tier = self.model_config_tier

        model_name: None | str | Unset
        if isinstance(self.model_name, Unset):
            model_name = UNSET
        else:
            model_name = self.model_name

        labels: list[str] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, list):
            labels = self.labels

        else:
            labels = self.labels

        seed: int | None | Unset
        if isinstance(self.seed, Unset):
            seed = UNSET
        else:
            seed = self.seed

        overrides: dict[str, Any] | None | Unset
        if isinstance(self.overrides, Unset):
            overrides = UNSET
        elif isinstance(self.overrides, RunOverrides):
            overrides = self.overrides.to_dict()
        else:
            overrides = self.overrides

        trainer: dict[str, Any] | None | Unset
        if isinstance(self.trainer, Unset):
            trainer = UNSET
        elif isinstance(self.trainer, RunTrainer):
            trainer = self.trainer.to_dict()
        else:
            trainer = self.trainer

        total_steps: int | None | Unset
        if isinstance(self.total_steps, Unset):
            total_steps = UNSET
        else:
            total_steps = self.total_steps

        steps_per_epoch: int | None | Unset
        if isinstance(self.steps_per_epoch, Unset):
            steps_per_epoch = UNSET
        else:
            steps_per_epoch = self.steps_per_epoch

        step: int | None | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        else:
            step = self.step

        epoch: float | None | Unset
        if isinstance(self.epoch, Unset):
            epoch = UNSET
        else:
            epoch = self.epoch

        best_val_loss: float | None | Unset
        if isinstance(self.best_val_loss, Unset):
            best_val_loss = UNSET
        else:
            best_val_loss = self.best_val_loss

        best_step: int | None | Unset
        if isinstance(self.best_step, Unset):
            best_step = UNSET
        else:
            best_step = self.best_step

        early_stop: dict[str, Any] | None | Unset
        if isinstance(self.early_stop, Unset):
            early_stop = UNSET
        elif isinstance(self.early_stop, EarlyStop):
            early_stop = self.early_stop.to_dict()
        else:
            early_stop = self.early_stop

        checkpoints: list[dict[str, Any]] | None | Unset
        if isinstance(self.checkpoints, Unset):
            checkpoints = UNSET
        elif isinstance(self.checkpoints, list):
            checkpoints = []
            for checkpoints_type_0_item_data in self.checkpoints:
                checkpoints_type_0_item = checkpoints_type_0_item_data.to_dict()
                checkpoints.append(checkpoints_type_0_item)

        else:
            checkpoints = self.checkpoints

        best_checkpoint_id: None | str | Unset
        if isinstance(self.best_checkpoint_id, Unset):
            best_checkpoint_id = UNSET
        else:
            best_checkpoint_id = self.best_checkpoint_id

        gpu_seconds: float | None | Unset
        if isinstance(self.gpu_seconds, Unset):
            gpu_seconds = UNSET
        else:
            gpu_seconds = self.gpu_seconds

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, RunUsage):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        model_id: None | str | Unset
        if isinstance(self.model_id, Unset):
            model_id = UNSET
        else:
            model_id = self.model_id

        job_ids: list[str] | None | Unset
        if isinstance(self.job_ids, Unset):
            job_ids = UNSET
        elif isinstance(self.job_ids, list):
            job_ids = self.job_ids

        else:
            job_ids = self.job_ids

        cancel_requested: bool | None | Unset
        if isinstance(self.cancel_requested, Unset):
            cancel_requested = UNSET
        else:
            cancel_requested = self.cancel_requested

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        else:
            created_at = self.created_at

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        else:
            started_at = self.started_at

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        else:
            finished_at = self.finished_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if run_id is not UNSET:
            field_dict["run_id"] = run_id
        if status is not UNSET:
            field_dict["status"] = status
        if config_fingerprint is not UNSET:
            field_dict["config_fingerprint"] = config_fingerprint
        if dataset_id is not UNSET:
            field_dict["dataset_id"] = dataset_id
        if dataset_fingerprint is not UNSET:
            field_dict["dataset_fingerprint"] = dataset_fingerprint
        if model_config_tier is not UNSET:
            field_dict["model_config_tier"] = model_config_tier
        if model_name is not UNSET:
            field_dict["model_name"] = model_name
        if labels is not UNSET:
            field_dict["labels"] = labels
        if seed is not UNSET:
            field_dict["seed"] = seed
        if overrides is not UNSET:
            field_dict["overrides"] = overrides
        if trainer is not UNSET:
            field_dict["trainer"] = trainer
        if total_steps is not UNSET:
            field_dict["total_steps"] = total_steps
        if steps_per_epoch is not UNSET:
            field_dict["steps_per_epoch"] = steps_per_epoch
        if step is not UNSET:
            field_dict["step"] = step
        if epoch is not UNSET:
            field_dict["epoch"] = epoch
        if best_val_loss is not UNSET:
            field_dict["best_val_loss"] = best_val_loss
        if best_step is not UNSET:
            field_dict["best_step"] = best_step
        if early_stop is not UNSET:
            field_dict["early_stop"] = early_stop
        if checkpoints is not UNSET:
            field_dict["checkpoints"] = checkpoints
        if best_checkpoint_id is not UNSET:
            field_dict["best_checkpoint_id"] = best_checkpoint_id
        if gpu_seconds is not UNSET:
            field_dict["gpu_seconds"] = gpu_seconds
        if usage is not UNSET:
            field_dict["usage"] = usage
        if model_id is not UNSET:
            field_dict["model_id"] = model_id
        if job_ids is not UNSET:
            field_dict["job_ids"] = job_ids
        if cancel_requested is not UNSET:
            field_dict["cancel_requested"] = cancel_requested
        if error is not UNSET:
            field_dict["error"] = error
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if started_at is not UNSET:
            field_dict["started_at"] = started_at
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.early_stop import EarlyStop  # noqa: PLC0415
        from ..models.run_checkpoint import RunCheckpoint  # noqa: PLC0415
        from ..models.run_overrides import RunOverrides  # noqa: PLC0415
        from ..models.run_trainer import RunTrainer  # noqa: PLC0415
        from ..models.run_usage import RunUsage  # noqa: PLC0415

        d = dict(src_dict)
        run_id = d.pop("run_id", UNSET)

        _status = d.pop("status", UNSET)
        status: RunStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = RunStatus(_status)

        def _parse_config_fingerprint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        config_fingerprint = _parse_config_fingerprint(d.pop("config_fingerprint", UNSET))

        def _parse_dataset_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dataset_id = _parse_dataset_id(d.pop("dataset_id", UNSET))

        def _parse_dataset_fingerprint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dataset_fingerprint = _parse_dataset_fingerprint(d.pop("dataset_fingerprint", UNSET))

        def _parse_model_config_tier(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_config_tier = _parse_model_config_tier(d.pop("model_config_tier", UNSET))

        def _parse_model_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_name = _parse_model_name(d.pop("model_name", UNSET))

        def _parse_labels(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                labels_type_0 = cast(list[str], data)

                return labels_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))

        def _parse_seed(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        seed = _parse_seed(d.pop("seed", UNSET))

        def _parse_overrides(data: object) -> None | RunOverrides | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                overrides_type_0 = RunOverrides.from_dict(data)

                return overrides_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunOverrides | Unset, data)

        overrides = _parse_overrides(d.pop("overrides", UNSET))

        def _parse_trainer(data: object) -> None | RunTrainer | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                trainer_type_0 = RunTrainer.from_dict(data)

                return trainer_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunTrainer | Unset, data)

        trainer = _parse_trainer(d.pop("trainer", UNSET))

        def _parse_total_steps(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        total_steps = _parse_total_steps(d.pop("total_steps", UNSET))

        def _parse_steps_per_epoch(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        steps_per_epoch = _parse_steps_per_epoch(d.pop("steps_per_epoch", UNSET))

        def _parse_step(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        step = _parse_step(d.pop("step", UNSET))

        def _parse_epoch(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        epoch = _parse_epoch(d.pop("epoch", UNSET))

        def _parse_best_val_loss(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        best_val_loss = _parse_best_val_loss(d.pop("best_val_loss", UNSET))

        def _parse_best_step(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        best_step = _parse_best_step(d.pop("best_step", UNSET))

        def _parse_early_stop(data: object) -> EarlyStop | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                early_stop_type_0 = EarlyStop.from_dict(data)

                return early_stop_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EarlyStop | None | Unset, data)

        early_stop = _parse_early_stop(d.pop("early_stop", UNSET))

        def _parse_checkpoints(data: object) -> list[RunCheckpoint] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                checkpoints_type_0 = []
                _checkpoints_type_0 = data
                for checkpoints_type_0_item_data in _checkpoints_type_0:
                    checkpoints_type_0_item = RunCheckpoint.from_dict(checkpoints_type_0_item_data)

                    checkpoints_type_0.append(checkpoints_type_0_item)

                return checkpoints_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[RunCheckpoint] | None | Unset, data)

        checkpoints = _parse_checkpoints(d.pop("checkpoints", UNSET))

        def _parse_best_checkpoint_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        best_checkpoint_id = _parse_best_checkpoint_id(d.pop("best_checkpoint_id", UNSET))

        def _parse_gpu_seconds(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        gpu_seconds = _parse_gpu_seconds(d.pop("gpu_seconds", UNSET))

        def _parse_usage(data: object) -> None | RunUsage | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_0 = RunUsage.from_dict(data)

                return usage_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunUsage | Unset, data)

        usage = _parse_usage(d.pop("usage", UNSET))

        def _parse_model_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_id = _parse_model_id(d.pop("model_id", UNSET))

        def _parse_job_ids(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                job_ids_type_0 = cast(list[str], data)

                return job_ids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        job_ids = _parse_job_ids(d.pop("job_ids", UNSET))

        def _parse_cancel_requested(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        cancel_requested = _parse_cancel_requested(d.pop("cancel_requested", UNSET))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_created_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        def _parse_started_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        def _parse_finished_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        run = cls(
            run_id=run_id,
            status=status,
            config_fingerprint=config_fingerprint,
            dataset_id=dataset_id,
            dataset_fingerprint=dataset_fingerprint,
            model_config_tier=model_config_tier,
            model_name=model_name,
            labels=labels,
            seed=seed,
            overrides=overrides,
            trainer=trainer,
            total_steps=total_steps,
            steps_per_epoch=steps_per_epoch,
            step=step,
            epoch=epoch,
            best_val_loss=best_val_loss,
            best_step=best_step,
            early_stop=early_stop,
            checkpoints=checkpoints,
            best_checkpoint_id=best_checkpoint_id,
            gpu_seconds=gpu_seconds,
            usage=usage,
            model_id=model_id,
            job_ids=job_ids,
            cancel_requested=cancel_requested,
            error=error,
            created_at=created_at,
            started_at=started_at,
            finished_at=finished_at,
        )

        run.additional_properties = d
        return run

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
