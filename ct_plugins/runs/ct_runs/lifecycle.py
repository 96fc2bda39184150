"""A run's jobs and its passage from queued to running, and what happens when a job is lost.

A run holds at most one live training job. :class:`Jobs` creates it (from the base model, from a
registered model's weights, or from the run's committed checkpoint), records its GPU time in the
run's job table, reads its status and ends it. :func:`mark_running` starts a queued run; a lost
job (:func:`lost`) counts as an attempt without progress, and a run gives up after
``MAX_ATTEMPTS_WITHOUT_PROGRESS`` of those in a row.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from ct_core.errors import JobTerminalError
from ct_runs.progress import Pending, Progress
from ct_runs.store import Store

log = logging.getLogger("ct_runs.lifecycle")

#: A run fails after this many segments in a row that made no progress (job failures).
MAX_ATTEMPTS_WITHOUT_PROGRESS = 4
#: How long a job the run leaves behind may idle before the service reclaims it.
JOB_IDLE_TIMEOUT_S = 900
#: The longest pause before a lost segment is tried again (the pause doubles with each attempt).
MAX_RETRY_AFTER_S = 30.0


class RunFailed(Exception):
    """The run cannot continue; the message says why (it becomes the run's error)."""


class SegmentLost(Exception):
    """The segment's job failed or was lost; the next segment resumes from the checkpoint."""


def load_run(store: Store, run_id: str) -> tuple[Any, dict[str, Any], Progress]:
    """The run's row, its record (what it was started with) and its progress."""
    row = store.run_row(run_id)
    if row is None:
        raise RunFailed(f"run {run_id} does not exist")
    return row, json.loads(row.record), Progress.load(row.state)


class Jobs:
    """The training jobs of runs: create, read, end."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def create(
        self, client: Any, run_id: str, record: Mapping[str, Any], resume: Mapping[str, Any] | None
    ) -> str:
        """A running job for the run: from ``resume`` (a committed checkpoint, optimizer states
        included) or, without one, from the model the run starts from."""
        body = json.loads(json.dumps(record["create_body"]))
        body.setdefault("experiment_name", run_id)
        body["idle_timeout_seconds"] = JOB_IDLE_TIMEOUT_S
        sub_job = body["sub_job_configs"][0]
        if resume is None and record.get("init_checkpoint"):
            # A run that continues a registered model starts from its weights-only export, with
            # a fresh optimizer (the export holds no optimizer states).
            init = record["init_checkpoint"]
            sub_job["source_checkpoint_info"] = {
                "checkpoint_id": init["checkpoint_id"],
                "source_job_id": init["job_id"],
            }
            sub_job.setdefault("training_config", {})["load_optimizer_states"] = False
        if resume is not None:
            sub_job["source_checkpoint_info"] = {
                "checkpoint_id": resume["checkpoint_id"],
                "source_job_id": resume["job_id"],
            }
            # The data-parallel size of a run never changes, so the optimizer states always load.
            sub_job.setdefault("training_config", {})["load_optimizer_states"] = True
        answer = client.create_job_from_body(body)
        job_id = str(answer["job_id"])
        self.store.add_job(run_id, job_id, int(record["trainer"]["n_gpus"]))
        try:
            client.wait_for_job(job_id)
        except JobTerminalError as exc:
            self.store.job_ended(run_id, job_id, time.time())
            raise SegmentLost(f"job {job_id} ended before it ran: {exc}") from exc
        self.store.job_running(run_id, job_id, time.time())
        return job_id

    def end(self, client: Any, run_id: str, job_id: str | None) -> None:
        if not job_id:
            return
        try:
            client.cancel_job(job_id)
        except Exception as exc:
            log.info("cancelling job %s of run %s: %s", job_id, run_id, exc)
        self.store.job_ended(run_id, job_id, time.time())

    @staticmethod
    def status(client: Any, job_id: str) -> str:
        """The job's status in lower case, or "unknown" when it cannot be read."""
        try:
            job = client.get_job(job_id)
        except Exception:
            return "unknown"
        return str(job.get("status", "")).lower() or "unknown"

    def alive(self, client: Any, job_id: str) -> bool:
        return self.status(client, job_id) == "running"


def mark_running(store: Store, run_id: str, executor_id: str | None) -> bool:
    """queued → running; False when the run is no longer queued (cancelled meanwhile)."""
    row, record, progress = load_run(store, run_id)
    if row.status == "running":
        return True
    if row.status != "queued":
        return False
    progress.started_ts = time.time()
    pending = Pending()
    pending.log(
        "INFO",
        f"run started: {record['total_steps']} steps at most",
        event="started",
        worker=executor_id,
    )
    _, entries = pending.take()
    return store.write_state(
        run_id, progress.to_dict(), status="running", log_entries=entries, only_if_status=("queued",)
    )


def lost(store: Store, run_id: str, why: str) -> dict[str, Any]:
    """Record a lost segment: the next one starts a new job from the committed checkpoint, after a
    pause; the run fails (RunFailed) after too many in a row."""
    _, _, progress = load_run(store, run_id)
    progress.attempts_without_progress += 1
    progress.live_job_id = None
    attempts = progress.attempts_without_progress
    pending = Pending()
    if attempts >= MAX_ATTEMPTS_WITHOUT_PROGRESS:
        pending.log("ERROR", f"giving up after {attempts} failed attempts: {why}", event="failed")
        _, entries = pending.take()
        store.write_state(run_id, progress.to_dict(), log_entries=entries)
        raise RunFailed(f"the run's jobs failed {attempts} times in a row; last: {why}")
    pending.log(
        "WARNING",
        f"the training job was lost ({why}); resuming from step {progress.committed_step}",
        event="job_lost",
        step=progress.committed_step,
    )
    _, entries = pending.take()
    store.write_state(run_id, progress.to_dict(), log_entries=entries)
    return {"done": False, "retry_after_s": min(MAX_RETRY_AFTER_S, 2.0**attempts)}
