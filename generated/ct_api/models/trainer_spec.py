from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.lr_schedule import LrSchedule
from ..types import UNSET, Unset

T = TypeVar("T", bound="TrainerSpec")


@_attrs_define
class TrainerSpec:
    """The trainer. Every key is optional in a spec; a run echoes every key resolved. Early stopping (the default)
    validates at the nominal cadence and at each epoch boundary and, after `patience` validations without an improvement
    of `min_delta`, runs the cooldown of the WSD schedule (`cooldown_ratio` of the steps) and ends succeeded.

        Attributes:
            epochs (int | None | Unset): Default 10.
            batch_tokens (int | None | Unset): Tokens per optimizer step.
            learning_rate (float | None | Unset): The peak learning rate.
            checkpoint_every_steps (int | None | Unset):
            val_every_steps (int | None | Unset):
            n_gpus (int | None | Unset):
            early_stopping (bool | None | Unset): Default true.
            patience (int | None | Unset): Default 5.
            min_delta (float | None | Unset): Default 0.0001.
            cooldown_ratio (float | None | Unset): Default 0.2.
            lr_schedule (LrSchedule | None | Unset):
    """

    epochs: int | None | Unset = UNSET
    batch_tokens: int | None | Unset = UNSET
    learning_rate: float | None | Unset = UNSET
    checkpoint_every_steps: int | None | Unset = UNSET
    val_every_steps: int | None | Unset = UNSET
    n_gpus: int | None | Unset = UNSET
    early_stopping: bool | None | Unset = UNSET
    patience: int | None | Unset = UNSET
    min_delta: float | None | Unset = UNSET
    cooldown_ratio: float | None | Unset = UNSET
    lr_schedule: LrSchedule | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        epochs: int | None | Unset
        if isinstance(self.epochs, Unset):
            epochs = UNSET
        else:
            epochs = self.epochs

        batch_tokens: int | None | Unset
        if isinstance(self.batch_tokens, Unset):
            batch_tokens = UNSET
        else:
            batch_tokens = self.batch_tokens

        learning_rate: float | None | Unset
        if isinstance(self.learning_rate, Unset):
            learning_rate = UNSET
        else:
            learning_rate = self.learning_rate

        checkpoint_every_steps: int | None | Unset
        if isinstance(self.checkpoint_every_steps, Unset):
            checkpoint_every_steps = UNSET
        else:
            checkpoint_every_steps = self.checkpoint_every_steps

        val_every_steps: int | None | Unset
        if isinstance(self.val_every_steps, Unset):
            val_every_steps = UNSET
        else:
            val_every_steps = self.val_every_steps

        n_gpus: int | None | Unset
        if isinstance(self.n_gpus, Unset):
            n_gpus = UNSET
        else:
            n_gpus = self.n_gpus

        early_stopping: bool | None | Unset
        if isinstance(self.early_stopping, Unset):
            early_stopping = UNSET
        else:
            early_stopping = self.early_stopping

        patience: int | None | Unset
        if isinstance(self.patience, Unset):
            patience = UNSET
        else:
            patience = self.patience

        min_delta: float | None | Unset
        if isinstance(self.min_delta, Unset):
            min_delta = UNSET
        else:
            min_delta = self.min_delta

        cooldown_ratio: float | None | Unset
        if isinstance(self.cooldown_ratio, Unset):
            cooldown_ratio = UNSET
        else:
            cooldown_ratio = self.cooldown_ratio

        lr_schedule: None | str | Unset
        if isinstance(self.lr_schedule, Unset):
            lr_schedule = UNSET
        elif isinstance(self.lr_schedule, LrSchedule):
            lr_schedule = self.lr_schedule.value
        else:
            lr_schedule = self.lr_schedule

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if epochs is not UNSET:
            field_dict["epochs"] = epochs
        if batch_tokens is not UNSET:
            field_dict["batch_tokens"] = batch_tokens
        if learning_rate is not UNSET:
            field_dict["learning_rate"] = learning_rate
        if checkpoint_every_steps is not UNSET:
            field_dict["checkpoint_every_steps"] = checkpoint_every_steps
        if val_every_steps is not UNSET:
            field_dict["val_every_steps"] = val_every_steps
        if n_gpus is not UNSET:
            field_dict["n_gpus"] = n_gpus
        if early_stopping is not UNSET:
            field_dict["early_stopping"] = early_stopping
        if patience is not UNSET:
            field_dict["patience"] = patience
        if min_delta is not UNSET:
            field_dict["min_delta"] = min_delta
        if cooldown_ratio is not UNSET:
            field_dict["cooldown_ratio"] = cooldown_ratio
        if lr_schedule is not UNSET:
            field_dict["lr_schedule"] = lr_schedule

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_epochs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        epochs = _parse_epochs(d.pop("epochs", UNSET))

        def _parse_batch_tokens(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        batch_tokens = _parse_batch_tokens(d.pop("batch_tokens", UNSET))

        def _parse_learning_rate(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        learning_rate = _parse_learning_rate(d.pop("learning_rate", UNSET))

        def _parse_checkpoint_every_steps(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        checkpoint_every_steps = _parse_checkpoint_every_steps(d.pop("checkpoint_every_steps", UNSET))

        def _parse_val_every_steps(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        val_every_steps = _parse_val_every_steps(d.pop("val_every_steps", UNSET))

        def _parse_n_gpus(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        n_gpus = _parse_n_gpus(d.pop("n_gpus", UNSET))

        def _parse_early_stopping(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        early_stopping = _parse_early_stopping(d.pop("early_stopping", UNSET))

        def _parse_patience(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        patience = _parse_patience(d.pop("patience", UNSET))

        def _parse_min_delta(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        min_delta = _parse_min_delta(d.pop("min_delta", UNSET))

        def _parse_cooldown_ratio(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        cooldown_ratio = _parse_cooldown_ratio(d.pop("cooldown_ratio", UNSET))

        def _parse_lr_schedule(data: object) -> LrSchedule | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                lr_schedule_type_0 = LrSchedule(data)

                return lr_schedule_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LrSchedule | None | Unset, data)

        lr_schedule = _parse_lr_schedule(d.pop("lr_schedule", UNSET))

        trainer_spec = cls(
            epochs=epochs,
            batch_tokens=batch_tokens,
            learning_rate=learning_rate,
            checkpoint_every_steps=checkpoint_every_steps,
            val_every_steps=val_every_steps,
            n_gpus=n_gpus,
            early_stopping=early_stopping,
            patience=patience,
            min_delta=min_delta,
            cooldown_ratio=cooldown_ratio,
            lr_schedule=lr_schedule,
        )

        return trainer_spec
