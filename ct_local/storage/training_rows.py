"""The training rows of one server: one row per finished fwd_bwd and step of a training sub-job.

Each app holds one :class:`TrainingRows` (``ServerState.training_rows``): per sub-job, the step the
next fwd_bwd counts toward, that call's number within the step, and the row sequence; and the
server's ``seq_epoch``, fresh per app, so the sequence restarting at 0 after a restart (or in a
second app of the same process) is told apart from the one before. Nothing here is shared between
apps. ct_local.http.artifacts stages the rows and uploads them with the rest of a run's artifacts.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

#: A training row keeps at most this many metrics, with names of at most this many bytes.
MAX_ROW_METRICS = 256
MAX_METRIC_NAME_BYTES = 200
#: Record version of the training rows.
TRAINING_RECORD_VERSION = 2


def sample_ts(now: float | None = None) -> str:
    """RFC 3339 UTC with nanoseconds: when a row was sampled."""
    ns = time.time_ns() if now is None else int(now * 1e9)
    seconds, frac = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}Z"


def _finite_numbers(values: Any) -> dict[str, float | int]:
    found: dict[str, float | int] = {}
    if not isinstance(values, dict):
        return found
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        if len(str(key).encode()) > MAX_METRIC_NAME_BYTES:
            continue
        found[str(key)] = value
    return found


@dataclass
class _Counters:
    """Per sub-job: the step the next fwd_bwd counts toward, its call number, and the row seq."""

    last_step: int | None = None
    calls: int = 0
    seq: int = 0


@dataclass
class TrainingRows:
    """The row counters of one app's training sub-jobs, and the app's sequence epoch."""

    seq_epoch: str = field(default_factory=lambda: uuid.uuid4().hex)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _counters: dict[str, _Counters] = field(default_factory=dict, repr=False)

    def row(
        self, sub_job_id: str, kind: str, request_id: str, result: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The training row of a finished request; None for a kind without one (a load resets the step)."""
        with self._lock:
            counters = self._counters.setdefault(sub_job_id, _Counters())
            if kind == "load":
                counters.last_step, counters.calls = None, 0
                return None
            if kind == "forward-backward":
                counters.calls += 1
                metrics = {**_finite_numbers(result.get("metrics")), **_finite_numbers(result)}
                op, step, call = (
                    "fwd_bwd",
                    None if counters.last_step is None else counters.last_step + 1,
                    counters.calls,
                )
            elif kind == "step":
                metrics = _finite_numbers(result)
                global_steps = metrics.get("global_steps")
                step = int(global_steps) if global_steps is not None else None
                counters.last_step, counters.calls = step, 0
                op, call = "step", None
            else:
                return None
            seq = counters.seq
            counters.seq += 1
        kept = dict(list(metrics.items())[:MAX_ROW_METRICS])
        return {
            "kind": "training",
            "record_version": TRAINING_RECORD_VERSION,
            "sub_job_id": sub_job_id,
            "sample_ts": sample_ts(),
            "seq": seq,
            "seq_epoch": self.seq_epoch,
            "op": op,
            "step": step,
            "call": call,
            "request_id": request_id,
            "metrics": kept,
        }
