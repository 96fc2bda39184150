"""Start-up after any stop: what each running job carries on from, and which requests end failed.

Run once by :meth:`TrainingDataPlane.start`, before any worker starts, while the state-dir lock
(ct_local.runtime) guarantees no other server writes the same files. In order:

1. Staging folders and temporary files of interrupted writes go (ct_local.storage.snapshots).
2. Whether the last stop was graceful is read from the ``meta`` table (a graceful stop writes
   ``clean_shutdown = 1`` once every worker has finished; start-up sets it back to 0).
3. Each training sub-job of a running job is checked against its state snapshot: the snapshot
   must be the state after the sub-job's last ``done`` state-changing request. A request the
   snapshot says it already holds, but whose row still says ``running`` (the server was killed
   between the two writes), is finished from the result kept in the snapshot. A sampling
   sub-job that had received a weight sync must still have the synced weights.
4. Requests left ``running`` end failed. After a crash every ``pending`` one does too (a queued
   step must never run on a state its forward-backward did not produce); after a graceful stop
   only those queued behind an interrupted request of the same sub-job.
5. A job whose state could not be brought back exactly is failed with reason ``state_lost``,
   and the reason names the newest checkpoint to resume from. Nothing continues from a state the
   caller did not produce.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from ct_local.http import artifacts
from ct_local.state import ServerState
from ct_local.storage.requests import DataPlaneStore, RequestRow
from ct_local.storage.snapshots import (
    STATE_KINDS,
    read_description,
    remove_staging_leftovers,
    snapshot_path,
    synced_weights_path,
)
from ct_local.storage.store import JobRow

log = logging.getLogger(__name__)

#: The meta key a graceful stop sets to "1" and every start-up to "0".
CLEAN_SHUTDOWN_KEY = "clean_shutdown"
#: The job reason of a job failed because its state could not be restored.
REASON_STATE_LOST = "state_lost"

INTERRUPTED_MESSAGE = "the local server stopped while this request was running; submit it again"
CRASH_RUNNING_MESSAGE = (
    "the local server stopped abruptly (killed or crashed) while this request ran; nothing it did was "
    "kept (the sub-job carries on from its last completed request), so submit it again"
)
CRASH_RUNNING_SAVE_MESSAGE = (
    "the local server stopped abruptly (killed or crashed) while this request ran; a checkpoint it "
    "wrote may still be listed by GET checkpoints, otherwise submit it again"
)
CRASH_QUEUED_MESSAGE = (
    "the local server stopped abruptly (killed or crashed) before this request ran; it was not run, "
    "so submit it again"
)


def _behind(request_id: str) -> str:
    return (
        f"the local server stopped while request {request_id}, queued before this one, was running; "
        "this one was not run, so submit both again"
    )


class Recovery:
    """One start-up's reconciliation (see the module docstring)."""

    def __init__(self, state: ServerState, dp: DataPlaneStore, state_dir: Path) -> None:
        self.state = state
        self.store = state.store
        self.dp = dp
        self.state_dir = state_dir

    def run(self) -> None:
        remove_staging_leftovers(self.state_dir)
        clean = self.store.get_meta(CLEAN_SHUTDOWN_KEY) != "0"
        self.store.set_meta(CLEAN_SHUTDOWN_KEY, "0")
        running = {row.request_id: row for row in self.dp.with_status("running")}
        lost: dict[str, list[str]] = {}
        for job in self.store.jobs_with_status(["running"]):
            for sub in job.sub_jobs:
                if sub.get("job_type") == "training":
                    problem = self._training(job, str(sub["sub_job_id"]), running)
                elif sub.get("job_type") == "sampling":
                    problem = self._sampler(job, str(sub["sub_job_id"]))
                else:
                    problem = None
                if problem is not None:
                    lost.setdefault(job.job_id, []).append(problem)
        self._end_unfinished(clean)
        for job_id, problems in lost.items():
            fresh = self.store.get_job(job_id)
            if fresh is not None and fresh.status == "running":
                details = self._lost_details(fresh, problems, clean)
                log.warning("job %s failed at start-up: %s", job_id, details)
                self.state.lifecycle.force(fresh, "failed", REASON_STATE_LOST, details)

    # --- sub-jobs -------------------------------------------------------------------------------

    def _training(self, job: JobRow, sub_id: str, running: dict[str, RequestRow]) -> str | None:
        description = read_description(snapshot_path(self.state_dir, job.job_id, sub_id))
        found = description.get("marker") if description is not None else None
        marker: dict[str, Any] | None = found if isinstance(found, dict) else None
        if marker is not None and "delivery" in marker:
            applied = running.get(str(marker.get("request_id")))
            if applied is not None:
                self._finish_from_snapshot(applied, marker)
        last = self.dp.last_done(sub_id, STATE_KINDS)
        has_state = description is not None and "trainer" in description
        holds = marker.get("request_id") if marker is not None else None
        if description is None and last is None:
            return None  # never changed: it starts again from its initial weights, as it did
        if has_state and last is not None and holds == last.request_id:
            return None
        if last is None:
            return f"{sub_id} has a state snapshot of request {holds}, which never completed"
        if description is not None and isinstance(description.get("skipped"), dict):
            skipped = description["skipped"]
            why = (
                f"its training state of {skipped.get('nbytes')} bytes is above the state snapshot limit "
                f"of {skipped.get('limit')} bytes (--state-snapshot-max-bytes), so it is kept at graceful "
                "shutdowns only"
            )
        elif description is None:
            why = "no state snapshot of it was found"
        else:
            why = f"its newest state snapshot is the state after request {holds}"
        return f"{sub_id}, whose last completed request is {last.kind} {last.request_id}: {why}"

    def _finish_from_snapshot(self, row: RequestRow, marker: dict[str, Any]) -> None:
        """The snapshot holds this request's effect: its row says done, with the result kept there."""
        self.dp.finish_request(
            row.request_id,
            "done",
            result_json=marker.get("result_json"),
            result_path=marker.get("result_path"),
            delivery=marker.get("delivery"),
        )
        if row.input_path:
            Path(row.input_path).unlink(missing_ok=True)
        if isinstance(marker.get("result"), dict):
            artifacts.record_training_call(self.state, row, marker["result"])
        log.warning("request %s had run when the server stopped; its result was kept", row.request_id)

    def _sampler(self, job: JobRow, sub_id: str) -> str | None:
        syncs = [
            r
            for r in self.dp.done_of_kind(job.job_id, "weight-sync")
            if sub_id in (r.params.get("targets") or [])
        ]
        if not syncs or synced_weights_path(self.state_dir, job.job_id, sub_id).is_file():
            return None
        return (
            f"{sub_id} had received a weight sync (request {syncs[-1].request_id}) and the synced weights "
            "were not kept, so it would sample from its initial weights"
        )

    # --- requests and jobs ----------------------------------------------------------------------

    def _end_unfinished(self, clean: bool) -> None:
        interrupted: dict[str, str] = {}
        for row in self.dp.with_status("running"):
            if clean:
                message = INTERRUPTED_MESSAGE
            else:
                message = CRASH_RUNNING_SAVE_MESSAGE if row.kind == "save" else CRASH_RUNNING_MESSAGE
            self._fail(row, message)
            interrupted.setdefault(row.sub_job_id, row.request_id)
            log.warning("request %s was interrupted by the last shutdown", row.request_id)
        for row in self.dp.with_status("pending"):
            if not clean:
                self._fail(row, CRASH_QUEUED_MESSAGE)
            elif row.sub_job_id in interrupted:
                self._fail(row, _behind(interrupted[row.sub_job_id]))

    def _fail(self, row: RequestRow, message: str) -> None:
        if self.dp.fail_unfinished(row.request_id, message) and row.input_path:
            Path(row.input_path).unlink(missing_ok=True)

    def _lost_details(self, job: JobRow, problems: list[str], clean: bool) -> str:
        how = "stopped" if clean else "stopped abruptly (killed or crashed)"
        checkpoints = self.store.checkpoints(job.job_id)
        if checkpoints:
            newest = checkpoints[-1]
            source = json.dumps({"source_job_id": job.job_id, "checkpoint_id": newest.checkpoint_id})
            resume = (
                f"Resume from its newest checkpoint, {newest.checkpoint_id} "
                f"(global step {newest.global_steps}, {newest.checkpoint_type}): create a job whose "
                f"training sub-job has source_checkpoint_info {source}."
            )
        else:
            resume = "The job has no checkpoint to resume from: start a new job."
        return (
            f"The local server {how}, and this job could not carry on from exactly the state its calls "
            f"produced: {'; '.join(problems)}. The job was failed rather than continued from another "
            f"state. {resume}"
        )
