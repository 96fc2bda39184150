"""The training driver of a run, one per service process: the parts it is made of, and the Run JSON.

A run is driven by a DBOS workflow (ct_runs.workflows) through this :class:`Engine`, which holds
the parts, each a module of its own:

- ct_runs.lifecycle: queued → running, the run's jobs (create, read, end), lost jobs;
- ct_runs.training: one segment, from the committed checkpoint to the next (why segments, and why
  a resumed run is exact, is told there);
- ct_runs.validation: the validation loss and per-label accuracy of the live job;
- ct_runs.checkpoints: saving and committing a resumable checkpoint, and retention;
- ct_runs.finalize: the terminal write, exactly once, and the registered model;
- ct_runs.progress: the typed progress of a run (its stored state) and what is pending a write;
- ct_runs.run_data: the rows, examples and batches of a run, packed once per process.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from ct_runs.finalize import Finalizer
from ct_runs.lifecycle import Jobs, RunFailed
from ct_runs.lifecycle import mark_running as _mark_running
from ct_runs.progress import Progress, new_state
from ct_runs.run_data import RunData
from ct_runs.store import Store, rfc3339
from ct_runs.training import Trainer

__all__ = ["Engine", "RunFailed", "new_state", "public_run"]


class Engine:
    """Drives runs for one service process; `client_for(owner, database, schema)` gives a client."""

    def __init__(
        self, store: Store, client_for: Callable[[str, str, str], Any], *, executor_id: str | None = None
    ) -> None:
        self.store = store
        self.client_for = client_for
        #: The DBOS executor this engine runs in, named in the logs of what it starts and resumes.
        self.executor_id = executor_id
        self.data = RunData(store)
        self.jobs = Jobs(store)
        self.trainer = Trainer(store, self.jobs, self.data, executor_id)
        self.finalizer = Finalizer(store, client_for, self.jobs)

    def mark_running(self, run_id: str) -> bool:
        """queued → running; False when the run is no longer queued (cancelled meanwhile)."""
        return _mark_running(self.store, run_id, self.executor_id)

    def run_segment(self, run_id: str) -> dict[str, Any]:
        """Train from the committed checkpoint to the next checkpoint; returns {"done": bool, ...}."""
        return self.trainer.run_segment(run_id, self.client_for)

    def finalize(
        self, run_id: str, outcome: str, error: str | None = None, *, by: str = "workflow"
    ) -> dict[str, Any]:
        """Make the run terminal, exactly once (ct_runs.finalize); returns the public run."""
        self.finalizer.finalize(run_id, outcome, error, by=by)
        return self.public(run_id)

    def save_cancelled(self, run_id: str) -> dict[str, Any]:
        """Export the best checkpoint of a cancelled run, the first step of its registration."""
        return self.finalizer.save_cancelled(run_id)

    def record_cancelled(self, run_id: str, model: dict[str, Any]) -> dict[str, Any]:
        """Register the exported model as the run's, the second step of its registration."""
        return self.finalizer.record_cancelled(run_id, model)

    def public(self, run_id: str) -> dict[str, Any]:
        row = self.store.run_row(run_id)
        if row is None:
            raise RunFailed(f"run {run_id} does not exist")
        return public_run(row)


def public_run(row: Any) -> dict[str, Any]:
    """The Run JSON of docs/runs.md from a stored row."""
    record = json.loads(row.record)
    progress = Progress.load(row.state)
    early = progress.early_stop or {}
    stop = (
        {"step": early["stop_step"], "reason": early.get("reason")}
        if early.get("stop_step") is not None
        else None
    )
    checkpoints = [
        {k: c.get(k) for k in ("checkpoint_id", "job_id", "step", "reasons", "val_loss", "manifest_sha256")}
        for c in progress.checkpoints
    ]
    lowest = progress.lowest_val or {}
    best_val = lowest.get("loss")
    return {
        "run_id": record["run_id"],
        "status": row.status,
        "config_fingerprint": record["config_fingerprint"],
        "dataset_id": record["dataset_id"],
        "dataset_fingerprint": record["dataset_fingerprint"],
        "model_config_tier": record["model_config_tier"],
        "model_name": record["model_name"],
        "model": record.get("model", record["model_name"]),
        "validation_dataset_id": record.get("validation_dataset_id"),
        "labels": record["labels"],
        "seed": record["seed"],
        "overrides": record["overrides"],
        "trainer": record["trainer"],
        "total_steps": record["total_steps"],
        "steps_per_epoch": record["steps_per_epoch"],
        "step": progress.step,
        "epoch": progress.epoch,
        "best_val_loss": best_val if best_val is None or math.isfinite(best_val) else None,
        "best_step": lowest.get("step"),
        "early_stop": stop,
        "checkpoints": checkpoints,
        "best_checkpoint_id": progress.best_checkpoint_id,
        "gpu_seconds": progress.gpu_seconds,
        "usage": {"training_gpu_seconds": progress.gpu_seconds},
        "model_id": progress.model_id,
        "job_ids": progress.job_ids,
        "cancel_requested": bool(row.cancel_requested),
        "error": progress.error,
        "created_at": rfc3339(record["created_ts"]),
        "started_at": rfc3339(progress.started_ts),
        "finished_at": rfc3339(progress.finished_ts),
    }
