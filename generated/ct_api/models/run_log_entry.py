from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.log_severity import LogSeverity
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.early_stop import EarlyStop


T = TypeVar("T", bound="RunLogEntry")


@_attrs_define
class RunLogEntry:
    """timestamp, severity and message always; with structured=true also seq, step, epoch and event, and where known the
    losses, throughput, learning rate, checkpoint and early stop.

        Attributes:
            timestamp (str | Unset): RFC 3339 UTC.
            severity (LogSeverity | Unset):
            message (str | Unset):
            seq (int | None | Unset):
            step (int | None | Unset):
            epoch (float | None | Unset):
            event (None | str | Unset):
            train_loss (float | None | Unset):
            val_loss (float | None | Unset):
            tokens_per_s (float | None | Unset):
            lr (float | None | Unset):
            checkpoint_id (None | str | Unset):
            worker (None | str | Unset): The executor that wrote the entry
            early_stop (EarlyStop | None | Unset):
    """

    timestamp: str | Unset = UNSET
    severity: LogSeverity | Unset = UNSET
    message: str | Unset = UNSET
    seq: int | None | Unset = UNSET
    step: int | None | Unset = UNSET
    epoch: float | None | Unset = UNSET
    event: None | str | Unset = UNSET
    train_loss: float | None | Unset = UNSET
    val_loss: float | None | Unset = UNSET
    tokens_per_s: float | None | Unset = UNSET
    lr: float | None | Unset = UNSET
    checkpoint_id: None | str | Unset = UNSET
    worker: None | str | Unset = UNSET
    early_stop: EarlyStop | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.early_stop import EarlyStop  # noqa: PLC0415

        timestamp = self.timestamp

        severity: str | Unset = UNSET
        if not isinstance(self.severity, Unset):
            severity = self.severity.value

        message = self.message

        seq: int | None | Unset
        if isinstance(self.seq, Unset):
            seq = UNSET
        else:
            seq = self.seq

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

        event: None | str | Unset
        if isinstance(self.event, Unset):
            event = UNSET
        else:
            event = self.event

        train_loss: float | None | Unset
        if isinstance(self.train_loss, Unset):
            train_loss = UNSET
        else:
            train_loss = self.train_loss

        val_loss: float | None | Unset
        if isinstance(self.val_loss, Unset):
            val_loss = UNSET
        else:
            val_loss = self.val_loss

        tokens_per_s: float | None | Unset
        if isinstance(self.tokens_per_s, Unset):
            tokens_per_s = UNSET
        else:
            tokens_per_s = self.tokens_per_s

        lr: float | None | Unset
        if isinstance(self.lr, Unset):
            lr = UNSET
        else:
            lr = self.lr

        checkpoint_id: None | str | Unset
        if isinstance(self.checkpoint_id, Unset):
            checkpoint_id = UNSET
        else:
            checkpoint_id = self.checkpoint_id

        worker: None | str | Unset
        if isinstance(self.worker, Unset):
            worker = UNSET
        else:
            worker = self.worker

        early_stop: dict[str, Any] | None | Unset
        if isinstance(self.early_stop, Unset):
            early_stop = UNSET
        elif isinstance(self.early_stop, EarlyStop):
            early_stop = self.early_stop.to_dict()
        else:
            early_stop = self.early_stop

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if timestamp is not UNSET:
            field_dict["timestamp"] = timestamp
        if severity is not UNSET:
            field_dict["severity"] = severity
        if message is not UNSET:
            field_dict["message"] = message
        if seq is not UNSET:
            field_dict["seq"] = seq
        if step is not UNSET:
            field_dict["step"] = step
        if epoch is not UNSET:
            field_dict["epoch"] = epoch
        if event is not UNSET:
            field_dict["event"] = event
        if train_loss is not UNSET:
            field_dict["train_loss"] = train_loss
        if val_loss is not UNSET:
            field_dict["val_loss"] = val_loss
        if tokens_per_s is not UNSET:
            field_dict["tokens_per_s"] = tokens_per_s
        if lr is not UNSET:
            field_dict["lr"] = lr
        if checkpoint_id is not UNSET:
            field_dict["checkpoint_id"] = checkpoint_id
        if worker is not UNSET:
            field_dict["worker"] = worker
        if early_stop is not UNSET:
            field_dict["early_stop"] = early_stop

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.early_stop import EarlyStop  # noqa: PLC0415

        d = dict(src_dict)
        timestamp = d.pop("timestamp", UNSET)

        _severity = d.pop("severity", UNSET)
        severity: LogSeverity | Unset
        if isinstance(_severity, Unset):
            severity = UNSET
        else:
            severity = LogSeverity(_severity)

        message = d.pop("message", UNSET)

        def _parse_seq(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        seq = _parse_seq(d.pop("seq", UNSET))

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

        def _parse_event(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        event = _parse_event(d.pop("event", UNSET))

        def _parse_train_loss(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        train_loss = _parse_train_loss(d.pop("train_loss", UNSET))

        def _parse_val_loss(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        val_loss = _parse_val_loss(d.pop("val_loss", UNSET))

        def _parse_tokens_per_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        tokens_per_s = _parse_tokens_per_s(d.pop("tokens_per_s", UNSET))

        def _parse_lr(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        lr = _parse_lr(d.pop("lr", UNSET))

        def _parse_checkpoint_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        checkpoint_id = _parse_checkpoint_id(d.pop("checkpoint_id", UNSET))

        def _parse_worker(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        worker = _parse_worker(d.pop("worker", UNSET))

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

        run_log_entry = cls(
            timestamp=timestamp,
            severity=severity,
            message=message,
            seq=seq,
            step=step,
            epoch=epoch,
            event=event,
            train_loss=train_loss,
            val_loss=val_loss,
            tokens_per_s=tokens_per_s,
            lr=lr,
            checkpoint_id=checkpoint_id,
            worker=worker,
            early_stop=early_stop,
        )

        run_log_entry.additional_properties = d
        return run_log_entry

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
