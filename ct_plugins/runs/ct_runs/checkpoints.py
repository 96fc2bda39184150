"""A run's resumable checkpoints: saving one, committing it with the run's progress, retention.

A segment ends by saving a resumable checkpoint on its job (:func:`save`) and committing it
(:func:`commit`): in one transaction, the checkpoint joins the run's list, becomes the point a new
job restarts from (data position, schedule, early-stop state and lowest validation loss), and the
segment's metric points and log lines are written. Only then are the checkpoints retention drops
deleted on the service: the newest ``KEEP_LAST_CHECKPOINTS`` and the best (lowest validation
loss) stay. Each checkpoint carries a fingerprinted manifest of what a resume needs.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ct_core.errors import APIError
from ct_runs import schedule
from ct_runs.progress import Pending, Progress
from ct_runs.store import Store

log = logging.getLogger("ct_runs.checkpoints")

#: Retention: the newest this many checkpoints are kept, plus the best one.
KEEP_LAST_CHECKPOINTS = 3
#: What a new job restarts from, copied from the committed checkpoint into the run's progress.
RESUME_KEYS = ("checkpoint_id", "job_id", "step", "data_position", "schedule", "early_stop", "lowest_val")


@dataclass(frozen=True)
class Schedule:
    """Where a segment leaves the run's schedule: the early-stop state, the cooldown's first step
    (None while no early stop has begun one) and the step the run ends at."""

    early: schedule.EarlyStop
    cooldown_start: int | None
    end: int


def plan_of(record: Mapping[str, Any]) -> schedule.SchedulePlan:
    return schedule.SchedulePlan.from_dict(record["plan"])


def best_of(checkpoints: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The checkpoint of the lowest validation loss (the earlier on a tie); None when none has one."""
    scored = [c for c in checkpoints if c.get("val_loss") is not None]
    if not scored:
        return None
    return min(scored, key=lambda c: (c["val_loss"], c["step"]))


def manifest_for(
    record: Mapping[str, Any], entry: Mapping[str, Any], files: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The fingerprinted manifest of one resumable checkpoint: what a resume needs, and its files."""
    return {
        "run_id": record["run_id"],
        "config_fingerprint": record["config_fingerprint"],
        "checkpoint_id": entry["checkpoint_id"],
        "job_id": entry["job_id"],
        "step": entry["step"],
        "data_position": entry["data_position"],
        "schedule": entry["schedule"],
        "early_stop": entry["early_stop"],
        "files": sorted(
            (
                {"filename": f.get("filename"), "size_bytes": f.get("size_bytes"), "etag": f.get("etag")}
                for f in files
            ),
            key=lambda f: str(f["filename"]),
        ),
    }


def sha256_json(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def save(
    client: Any,
    job_id: str,
    record: Mapping[str, Any],
    step: int,
    reasons: Sequence[str],
    val_loss: float | None,
    where: Schedule,
    lowest: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Save a resumable checkpoint of the job at ``step``; its entry (with manifest), uncommitted."""
    result = client.poll_request(job_id, client.save(job_id, checkpoint_type="resumable"))
    checkpoint_id = client.checkpoint_id_from_save_result(result)
    steps_per_epoch = int(record["steps_per_epoch"])
    entry: dict[str, Any] = {
        "checkpoint_id": checkpoint_id,
        "job_id": job_id,
        "step": step,
        "reasons": sorted(set(reasons)),
        "val_loss": val_loss,
        "data_position": {
            "epoch": step // steps_per_epoch,
            "batch": step % steps_per_epoch,
            "seed": record["seed"],
        },
        "schedule": {
            "cooldown_start": where.cooldown_start,
            "end_step": schedule.end_step(plan_of(record), where.cooldown_start),
        },
        "early_stop": where.early.to_dict(),
    }
    try:
        files = client.export_checkpoint(job_id, checkpoint_id).get("files") or []
    except APIError:
        files = []
    manifest = manifest_for(record, entry, files)
    entry["manifest"] = manifest
    entry["manifest_sha256"] = sha256_json(manifest)
    entry["lowest_val"] = dict(lowest) if lowest is not None else None
    return entry


def commit(
    store: Store,
    client: Any,
    record: Mapping[str, Any],
    progress: Progress,
    pending: Pending,
    entry: dict[str, Any] | None,
    where: Schedule,
    *,
    cancelled: bool,
) -> dict[str, Any]:
    """Commit the segment: ``entry`` (None: no new checkpoint), the schedule, the pending points and
    lines, in one write; then delete what retention drops. Returns the segment's outcome."""
    run_id = record["run_id"]
    to_delete: list[dict[str, Any]] = []
    if entry is not None:
        checkpoints = [*progress.checkpoints, entry]
        best = best_of(checkpoints)
        keep = {c["checkpoint_id"] for c in checkpoints[-KEEP_LAST_CHECKPOINTS:]}
        if best is not None:
            keep.add(best["checkpoint_id"])
        to_delete = [c for c in checkpoints if c["checkpoint_id"] not in keep]
        progress.checkpoints = [c for c in checkpoints if c["checkpoint_id"] in keep]
        progress.best_checkpoint_id = best["checkpoint_id"] if best is not None else None
        progress.resume = {key: entry.get(key) for key in RESUME_KEYS}
        progress.lowest_val = entry.get("lowest_val")
        progress.committed_step = entry["step"]
        progress.step = entry["step"]
        pending.log(
            "INFO",
            f"checkpoint {entry['checkpoint_id']} at step {entry['step']} ({', '.join(entry['reasons'])})",
            event="checkpoint",
            step=entry["step"],
            checkpoint_id=entry["checkpoint_id"],
            checkpoint={
                k: entry[k] for k in ("checkpoint_id", "step", "reasons", "val_loss", "manifest_sha256")
            },
        )
    progress.early_stop = where.early.to_dict()
    progress.cooldown_start = where.cooldown_start
    progress.end_step = where.end
    progress.segment_open = False
    progress.attempts_without_progress = 0
    progress.gpu_seconds = store.gpu_seconds(run_id)
    points, entries = pending.take()
    store.write_state(run_id, progress.to_dict(), metric_points=points, log_entries=entries)
    for old in to_delete:
        try:
            client.delete_checkpoint(old["job_id"], old["checkpoint_id"])
        except APIError as exc:
            log.info("deleting checkpoint %s of run %s: %s", old["checkpoint_id"], run_id, exc)
    done = cancelled or progress.committed_step >= where.end
    return {"done": done, "cancelled": cancelled}
