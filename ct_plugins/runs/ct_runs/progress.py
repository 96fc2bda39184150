"""A run's progress as the engine keeps it: one typed record, stored as JSON in the run's row.

:class:`Progress` is what the run's ``state`` column holds. Every part of the engine reads it with
:meth:`Progress.load` and writes it with :meth:`Progress.to_dict` through ct_runs.store, which
stores it with sorted keys, so the text of a state is a function of its values (the finalizers'
compare-and-swap compares that text). A state written before a field existed reads as that
field's default. :class:`Pending` holds the metric points and log lines a part has produced and
not yet written: they go out in the same transaction as the state they belong to.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import Any

from ct_runs import schedule

#: A metric point (series name, step, value) and a log line (time, severity, message, context).
Point = tuple[str, int, float]
Entry = tuple[float, str, str, dict[str, Any]]


@dataclass
class Progress:
    """Where a run stands: steps, the committed checkpoint, its jobs, and how it ended."""

    #: The step the run has reached (a segment in flight moves it before it commits).
    step: int = 0
    epoch: float = 0.0
    #: The step of the newest committed checkpoint: where a segment starts.
    committed_step: int = 0
    #: The committed checkpoint a new job restarts from (checkpoint_id, job_id, step, data position,
    #: schedule, early stop, lowest validation loss); None before the first one.
    resume: dict[str, Any] | None = None
    early_stop: dict[str, Any] = field(default_factory=lambda: schedule.EarlyStop().to_dict())
    cooldown_start: int | None = None
    #: The retained checkpoints, oldest first (see ct_runs.checkpoints).
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    best_checkpoint_id: str | None = None
    #: The run's live training job, and whether a segment on it is open (sent steps it has not
    #: committed: then the job is never reused).
    live_job_id: str | None = None
    segment_open: bool = False
    job_ids: list[str] = field(default_factory=list)
    attempts_without_progress: int = 0
    started_ts: float | None = None
    finished_ts: float | None = None
    error: str | None = None
    model_id: str | None = None
    gpu_seconds: float = 0.0
    end_step: int | None = None
    #: The lowest validation loss so far and its step (``{"loss", "step"}``).
    lowest_val: dict[str, Any] | None = None
    #: Which finalizer ended the run ("workflow" or "cancel"): only that one sends the webhook.
    finalized_by: str | None = None
    #: How many workflows after the first have driven the run: resumes asked for by the caller and
    #: carry-overs of a run an older version left in flight (the service's start-up sweep), each one
    #: a new ``run_….resume-N``; and the DBOS workflow that drives the run now (None: the first one,
    #: named by the run id).
    resumes: int = 0
    workflow_id: str | None = None

    @classmethod
    def load(cls, text: str | dict[str, Any]) -> Progress:
        """The progress of a stored state (its JSON text, or the decoded object)."""
        data = json.loads(text) if isinstance(text, str) else dict(text)
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def new_state() -> dict[str, Any]:
    """The state of a run that has not started."""
    return Progress().to_dict()


@dataclass
class Pending:
    """What a part of the engine has produced and not yet written."""

    points: list[Point] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)

    def log(self, severity: str, message: str, **context: Any) -> None:
        self.entries.append((time.time(), severity, message, context))

    def take(self) -> tuple[list[Point], list[Entry]]:
        points, entries = self.points, self.entries
        self.points, self.entries = [], []
        return points, entries
