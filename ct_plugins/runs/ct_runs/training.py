"""The training loop of a run: one segment, from the committed checkpoint to the next one.

A segment starts from the run's newest committed checkpoint (or from the model the run starts
from), sends fwd-bwd and step (with the learning rate the schedule gives for that step) for each
packed batch, validates where the cadence says, and ends by saving a resumable checkpoint and
committing it (ct_runs.checkpoints). Each segment is one DBOS step of the run's workflow.

Why this shape: DBOS steps are at-least-once. A segment whose commit was not recorded may have
sent steps the service applied, so its job's weights are past the committed checkpoint and
nobody knows by how much. The segment therefore marks itself *open* before it sends anything;
a segment that finds the mark of a previous attempt never reuses that attempt's job, but starts
a new job from the committed checkpoint (weights and optimizer states, the data-parallel size
being fixed for a run) and replays from there. Packing, shuffling and the learning rate are pure
functions of the config and the step, so the replay sends the same batches with the same rates,
and on the CPU local server the metrics come out bit-identical. A closed mark means the live
job's state is exactly the committed checkpoint, and the next segment carries on with it.
The same path serves a job that failed or was preempted under the run, a restart after a crash,
and a run resumed by request after it failed or was cancelled.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from ct_core.data.payloads import serialize_forward_backward_args
from ct_core.errors import APIError, CTConnectionError, JobTerminalError, RequestFailedError
from ct_runs import checkpoints, schedule
from ct_runs.checkpoints import Schedule, plan_of
from ct_runs.lifecycle import Jobs, SegmentLost, load_run, lost
from ct_runs.progress import Pending, Progress
from ct_runs.run_data import RunData
from ct_runs.store import TERMINAL, Store
from ct_runs.validation import validate

#: Metric points and log lines are written at least this often while a segment trains; each write,
#: and each segment's end, logs a progress line with the newest train loss.
FLUSH_EVERY_STEPS = 25
#: Steps in flight while a segment trains (each one fwd-bwd + step), and how often it reads a cancel.
PIPELINE_DEPTH = 2
CANCEL_CHECK_S = 0.5
#: Client answers that lose the segment (the next one resumes from the checkpoint) rather than fail
#: the run: the service's own failures and a job that is gone, busy or over its limits.
LOSING_STATUSES = (404, 409, 410, 429)

_TORCH_IMPORT = threading.Lock()


def _import_torch_once() -> None:
    """Import torch (when installed) before a segment sends anything.

    Results are decoded into torch tensors where torch is importable, on DBOS's worker threads.
    Two threads importing torch at the same moment can see it half initialized, and the local
    server imports it on its own threads once a job runs; importing it here, before the
    segment's first request, keeps the two apart. Not at service start: most servers never
    train a run, and torch takes seconds to import.
    """
    with _TORCH_IMPORT, contextlib.suppress(ImportError):
        import torch  # noqa: F401


class Trainer:
    """Runs the segments of runs for one process."""

    def __init__(self, store: Store, jobs: Jobs, data: RunData, executor_id: str | None) -> None:
        self.store = store
        self.jobs = jobs
        self.data = data
        self.executor_id = executor_id
        #: Runs this process has run a segment of: the first segment of a run it picked up after
        #: another process stopped says where it carries on from.
        self._driven: set[str] = set()

    def run_segment(self, run_id: str, client_for: Callable[[str, str, str], Any]) -> dict[str, Any]:
        """Train from the committed checkpoint to the next checkpoint; returns {"done": bool}."""
        _import_torch_once()
        row, record, progress = load_run(self.store, run_id)
        if row.status in TERMINAL:
            return {"done": True}
        client = client_for(row.owner, row.database, row.schema)
        try:
            job_id = self._open(client, record, progress)
            return Segment(self, client, job_id, record, progress).train()
        except SegmentLost as exc:
            return lost(self.store, run_id, str(exc))
        except (JobTerminalError, RequestFailedError, CTConnectionError) as exc:
            return lost(self.store, run_id, f"{type(exc).__name__}: {exc}")
        except APIError as exc:
            if exc.status_code is not None and (exc.status_code >= 500 or exc.status_code in LOSING_STATUSES):
                return lost(self.store, run_id, f"{type(exc).__name__}: {exc}")
            raise

    def _open(self, client: Any, record: dict[str, Any], progress: Progress) -> str:
        """The job the segment trains on, the segment marked open: the live job when the last
        segment closed on it and it still runs, else a new job from the committed checkpoint."""
        run_id = record["run_id"]
        pending = Pending()
        job_id = progress.live_job_id
        # After a closed segment the live job holds exactly the committed checkpoint: carry on
        # with it while it runs. (After an open one it is never reused; see the module doc.)
        status = self.jobs.status(client, job_id) if job_id and not progress.segment_open else None
        reuse = status == "running"
        picked_up = run_id not in self._driven
        self._driven.add(run_id)
        if reuse and picked_up:
            # This process took the run over (a restart, or a dead worker's run) between two
            # segments: nothing was in flight, so the live job holds exactly the committed
            # checkpoint and the run carries on with it. Logged, so every takeover shows.
            pending.log(
                "INFO",
                f"picked up between two segments: carrying on with job {job_id} "
                f"from step {progress.committed_step}",
                event="recovered",
                worker=self.executor_id,
                step=progress.committed_step,
            )
        if not reuse:
            if status is not None:
                # The job stopped between two segments (nothing was in flight on it): as lost
                # as one that fails mid-segment, though no work is lost with it.
                pending.log(
                    "WARNING",
                    f"the training job {job_id} is no longer running ({status}); "
                    f"resuming from step {progress.committed_step}",
                    event="job_lost",
                    step=progress.committed_step,
                )
            if job_id:
                self.jobs.end(client, run_id, job_id)
            resume = progress.resume
            # Points past the checkpoint came from a lost attempt; the replay writes them again.
            self.store.drop_metrics_after(run_id, progress.committed_step)
            job_id = self.jobs.create(client, run_id, record, resume)
            progress.live_job_id = job_id
            progress.job_ids = [*progress.job_ids, job_id]
            if resume is not None:
                pending.log(
                    "INFO",
                    f"resumed from checkpoint {resume['checkpoint_id']} at step {resume['step']} "
                    f"on job {job_id}",
                    event="resumed",
                    worker=self.executor_id,
                    step=resume["step"],
                    checkpoint_id=resume["checkpoint_id"],
                )
            else:
                pending.log(
                    "INFO", f"training job {job_id} is running", event="job_started", worker=self.executor_id
                )
        progress.segment_open = True
        progress.step = progress.committed_step
        points, entries = pending.take()
        self.store.write_state(run_id, progress.to_dict(), metric_points=points, log_entries=entries)
        assert job_id is not None  # a reused job is the live one; otherwise one was just created
        return job_id


class Segment:
    """One segment on one job: the loop over steps, its validations, and its checkpoint."""

    def __init__(
        self, trainer: Trainer, client: Any, job_id: str, record: dict[str, Any], progress: Progress
    ) -> None:
        self.trainer = trainer
        self.store = trainer.store
        self.client = client
        self.job_id = job_id
        self.record = record
        self.progress = progress
        self.pending = Pending()
        self.run_id: str = record["run_id"]
        self.plan = plan_of(record)
        self.trainer_config: dict[str, Any] = record["trainer"]
        self.steps_per_epoch = int(record["steps_per_epoch"])
        self.early = schedule.EarlyStop.from_dict(progress.early_stop)
        self.cooldown_start: int | None = progress.cooldown_start
        self.step = progress.committed_step
        self.end = schedule.end_step(self.plan, self.cooldown_start)
        #: The lowest validation loss so far and its step, as the committed checkpoint left it.
        self.lowest: dict[str, Any] | None = (progress.resume or {}).get("lowest_val")
        #: Steps sent and not yet read back: (step, target tokens, learning rate).
        self.inflight: list[tuple[int, int, float]] = []
        self.started = time.monotonic()
        self.tokens = 0
        self.pipe: Any = None
        #: The newest step read back (step, train loss, learning rate, tokens/s), and the newest
        #: step a progress line was logged for.
        self.last: tuple[int, float, float, float] | None = None
        self.logged_step = self.step

    def where(self) -> Schedule:
        return Schedule(self.early, self.cooldown_start, self.end)

    def train(self) -> dict[str, Any]:
        # fwd-bwd and step go through a pipeline: background threads poll them while the next
        # step's batch is sent, with at most PIPELINE_DEPTH steps in flight (docs/training-loop.md).
        self.pipe = self.client.pipeline(self.job_id, workers=2)
        try:
            return self._steps()
        finally:
            self.pipe.close()

    def _drain(self, keep: int) -> None:
        """Wait for the step results in flight until only ``keep`` steps remain, recording them."""
        results = self.pipe.wait_pending(2 * keep)
        for index in range(0, len(results), 2):
            done_step, tokens, lr = self.inflight.pop(0)
            self.tokens += tokens
            elapsed = max(time.monotonic() - self.started, 1e-9)
            loss = float(results[index]["avg_loss"])
            self.pending.points += [
                ("train_loss", done_step, loss),
                ("lr", done_step, lr),
                ("epoch", done_step, done_step / self.steps_per_epoch),
                ("tokens_per_s", done_step, self.tokens / elapsed),
            ]
            self.last = (done_step, loss, lr, self.tokens / elapsed)

    def _flush(self) -> None:
        """Write the metric points and log lines of the steps read back so far, with the step they
        reach, while the steps in flight go on: draining the pipeline first would leave the trainer
        idle for as long as the store takes to write."""
        self._log_progress()
        points, entries = self.pending.take()
        self.progress.gpu_seconds = self.store.gpu_seconds(self.run_id)
        state = self.progress.to_dict()
        if self.last is not None:
            state["step"], state["epoch"] = self.last[0], self.last[0] / self.steps_per_epoch
        self.store.write_state(self.run_id, state, metric_points=points, log_entries=entries)

    def _log_progress(self) -> None:
        """A log line with the train loss of the newest step read back, once per step logged."""
        if self.last is None or self.last[0] <= self.logged_step:
            return
        step, loss, lr, tokens_per_s = self.last
        self.logged_step = step
        epoch = step / self.steps_per_epoch
        self.pending.log(
            "INFO",
            f"step {step}/{self.end}: train loss {loss:.6f} (epoch {epoch:.2f}, {tokens_per_s:.0f} tokens/s)",
            event="progress",
            step=step,
            epoch=epoch,
            train_loss=loss,
            lr=lr,
            tokens_per_s=tokens_per_s,
            end_step=self.end,
        )

    def _steps(self) -> dict[str, Any]:
        checkpoint_every = int(self.trainer_config["checkpoint_every_steps"])
        next_cancel_check = 0.0
        reasons: list[str] = []
        val_loss: float | None = None
        validated_step: int | None = None
        cancelled = False
        while self.step < self.end:
            if time.monotonic() >= next_cancel_check:
                # A cancel is read twice a second: it stops the run at the next step boundary.
                if self.store.cancel_requested(self.run_id):
                    cancelled = True
                    break
                next_cancel_check = time.monotonic() + CANCEL_CHECK_S
            epoch, index = divmod(self.step, self.steps_per_epoch)
            batch = self.trainer.data.epoch(self.run_id, epoch)[index]
            lr = float(schedule.learning_rate(self.plan, self.step, self.cooldown_start))
            self.pipe.forward_backward(serialize_forward_backward_args(kwargs=batch.kwargs()))
            self.pipe.step(learning_rate=lr)
            self.step += 1
            step = self.step
            self.inflight.append((step, int(batch.target_tokens), lr))
            self._drain(PIPELINE_DEPTH)
            self.progress.step = step
            self.progress.epoch = step / self.steps_per_epoch
            if schedule.is_validation_step(
                step,
                val_every_steps=int(self.trainer_config["val_every_steps"]),
                steps_per_epoch=self.steps_per_epoch,
                at_epoch_boundaries=bool(self.trainer_config["early_stopping"]),
                end_step=self.end,
            ):
                self._drain(keep=0)
                val_loss, new_best = self._validate(step)
                validated_step = step
                if new_best:
                    reasons.append("best")
            if step % checkpoint_every == 0:
                reasons.append("cadence")
            if step >= self.end:
                reasons.append("final")
            if reasons:
                break
            if step % FLUSH_EVERY_STEPS == 0:
                self._flush()
        self._drain(keep=0)
        self._log_progress()
        if cancelled:
            reasons = ["final"]
        progress = self.progress
        if self.step == progress.committed_step and progress.resume is not None and cancelled:
            # Nothing ran since the last checkpoint: it is the final valid one, and says so.
            newest = progress.resume["checkpoint_id"]
            for checkpoint in progress.checkpoints:
                if checkpoint["checkpoint_id"] == newest:
                    checkpoint["reasons"] = sorted({*checkpoint["reasons"], "final"})
            return checkpoints.commit(
                self.store,
                self.client,
                self.record,
                progress,
                self.pending,
                None,
                self.where(),
                cancelled=True,
            )
        entry = checkpoints.save(
            self.client,
            self.job_id,
            self.record,
            self.step,
            reasons,
            # A checkpoint keeps the validation loss measured at its own step, best or not.
            val_loss if validated_step == self.step else None,
            self.where(),
            self.lowest,
        )
        return checkpoints.commit(
            self.store,
            self.client,
            self.record,
            progress,
            self.pending,
            entry,
            self.where(),
            cancelled=cancelled,
        )

    def _validate(self, step: int) -> tuple[float, bool]:
        """Validate at ``step``: the points and the log line, the lowest loss, the early stop.
        Returns the loss and whether it is the lowest so far."""
        record, trainer, plan = self.record, self.trainer_config, self.plan
        val_loss, accuracy = validate(self.client, self.job_id, record, self.trainer.data)
        self.pending.points.append(("val_loss", step, val_loss))
        for label, value in accuracy.items():
            self.pending.points.append((f"val_accuracy/{label}", step, value))
        # Patience counts gains of more than min_delta; the best checkpoint is simply the
        # lowest validation loss so far (a cooldown often brings small, real gains).
        self.early, _ = schedule.observe(
            self.early,
            step,
            val_loss,
            patience=int(trainer["patience"]),
            min_delta=float(trainer["min_delta"]),
        )
        new_best = math.isfinite(val_loss) and (self.lowest is None or val_loss < self.lowest["loss"])
        if new_best:
            self.lowest = {"loss": val_loss, "step": step}
        self.pending.log(
            "INFO",
            f"step {step}: validation loss {val_loss:.6f}" + (" (new best)" if new_best else ""),
            event="validation",
            step=step,
            epoch=step / self.steps_per_epoch,
            val_loss=val_loss,
            validation={
                "loss": val_loss,
                "accuracy": accuracy,
                "new_best": new_best,
                # What was validated on: the run's own split, or a build of its own.
                "dataset_id": record.get("validation_dataset_id") or record["dataset_id"],
                "rows": len(self.trainer.data.examples(self.run_id, "validation")),
            },
        )
        if not trainer["early_stopping"]:
            # Validation still picks the best checkpoint; it never shortens the run.
            self.early = dataclasses.replace(self.early, stop_step=None, reason=None)
        elif (
            self.cooldown_start is None
            and self.early.stop_step == step
            and step >= plan.total_steps - plan.cooldown_steps
        ):
            # Inside the scheduled cooldown already: the run ends as planned, not early.
            self.early = dataclasses.replace(self.early, stop_step=None, reason=None)
        elif self.cooldown_start is None and self.early.stop_step == step:
            self.cooldown_start = step
            self.end = schedule.end_step(plan, self.cooldown_start)
            self.pending.log(
                "INFO",
                f"early stop at step {step}: {self.early.reason}; cooling down until step {self.end}",
                event="early_stop",
                step=step,
                early_stop={"step": step, "reason": self.early.reason, "end_step": self.end},
            )
        return val_loss, new_best
