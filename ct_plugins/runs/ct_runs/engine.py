"""The training driver of a run: segments between checkpoints, finalization, retention.

A run advances in *segments*. A segment starts from the run's newest resumable checkpoint (or
from the base model), sends fwd-bwd and step (with the learning rate the schedule gives for that
step) for each packed batch, validates where the cadence says, and ends by saving a resumable
checkpoint and committing it, together with the data position, the schedule and the early-stop
state, in one transaction. Each segment is one DBOS step of the run's workflow.

Why this shape: DBOS steps are at-least-once. A segment whose commit was not recorded may have
sent steps the service applied, so its job's weights are past the committed checkpoint and
nobody knows by how much. The segment therefore marks itself *open* before it sends anything;
a segment that finds the mark of a previous attempt never reuses that attempt's job, but starts
a new job from the committed checkpoint (weights and optimizer states, the data-parallel size
being fixed for a run) and replays from there. Packing, shuffling and the learning rate are pure
functions of the config and the step, so the replay sends the same batches with the same rates,
and on the CPU local server the metrics come out bit-identical. A closed mark means the live
job's state is exactly the committed checkpoint, and the next segment carries on with it.
The same path serves a job that failed or was preempted under the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import math
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ct_core.data.payloads import serialize_forward_backward_args
from ct_core.errors import APIError, CTConnectionError, JobTerminalError, RequestFailedError
from ct_runs import packing, schedule, templates
from ct_runs.errors import aborted
from ct_runs.ids import new_id
from ct_runs.store import TERMINAL, Store

log = logging.getLogger("ct_runs.engine")

#: Retention: the newest this many checkpoints are kept, plus the best one.
KEEP_LAST_CHECKPOINTS = 3
#: A run fails after this many segments in a row that made no progress (job failures).
MAX_ATTEMPTS_WITHOUT_PROGRESS = 4
#: Validation rows scored for per-label accuracy (one forward per row and label).
LABEL_ACCURACY_ROWS = 64
#: Metric points and log lines are written at least this often while a segment trains.
FLUSH_EVERY_STEPS = 25
#: Steps in flight while a segment trains (each one fwd-bwd + step), and how often it reads a cancel.
PIPELINE_DEPTH = 2
CANCEL_CHECK_S = 0.5
#: How long a job the run leaves behind may idle before the service reclaims it.
JOB_IDLE_TIMEOUT_S = 900


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


class RunFailed(Exception):
    """The run cannot continue; the message says why (it becomes the run's error)."""


class SegmentLost(Exception):
    """The segment's job failed or was lost; the next segment resumes from the checkpoint."""


@dataclass
class Pending:
    """What a segment has produced and not yet written."""

    points: list[tuple[str, int, float]] = field(default_factory=list)
    entries: list[tuple[float, str, str, dict[str, Any]]] = field(default_factory=list)

    def log(self, severity: str, message: str, **context: Any) -> None:
        self.entries.append((time.time(), severity, message, context))

    def take(self) -> tuple[list[tuple[str, int, float]], list[tuple[float, str, str, dict[str, Any]]]]:
        points, entries = self.points, self.entries
        self.points, self.entries = [], []
        return points, entries


def new_state() -> dict[str, Any]:
    return {
        "step": 0,
        "epoch": 0.0,
        "committed_step": 0,
        "resume": None,
        "early_stop": schedule.EarlyStop().to_dict(),
        "cooldown_start": None,
        "checkpoints": [],
        "best_checkpoint_id": None,
        "live_job_id": None,
        "segment_open": False,
        "job_ids": [],
        "attempts_without_progress": 0,
        "started_ts": None,
        "finished_ts": None,
        "error": None,
        "model_id": None,
        "gpu_seconds": 0.0,
        "end_step": None,
    }


def _plan(record: Mapping[str, Any]) -> schedule.SchedulePlan:
    return schedule.SchedulePlan.from_dict(record["plan"])


def manifest_for(
    record: Mapping[str, Any], entry: Mapping[str, Any], files: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The fingerprinted manifest of one resumable checkpoint: what a resume needs, and its files."""
    manifest = {
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
    return manifest


def _best(checkpoints: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The checkpoint of the lowest validation loss (the earlier on a tie); None when none has one."""
    scored = [c for c in checkpoints if c.get("val_loss") is not None]
    if not scored:
        return None
    return min(scored, key=lambda c: (c["val_loss"], c["step"]))


def _sha256_json(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class _Drain(Protocol):
    """Waits for the step results in flight until only ``keep`` steps remain, recording them."""

    def __call__(self, keep: int) -> None: ...


class Engine:
    """Drives runs for one service process; `client_for(owner, database, schema)` gives a client."""

    def __init__(
        self, store: Store, client_for: Callable[[str, str, str], Any], *, executor_id: str | None = None
    ) -> None:
        self.store = store
        self.client_for = client_for
        #: The DBOS executor this engine runs in, named in the logs of what it starts and resumes.
        self.executor_id = executor_id
        #: Runs this engine (this process) has run a segment of: the first segment of a run it
        #: picked up after another process stopped says where it carries on from.
        self._driven: set[str] = set()
        #: One registration of a cancelled run's model at a time in this process.
        self._registering = threading.Lock()

    # --- reading a run --------------------------------------------------------------------------

    def _load(self, run_id: str) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        row = self.store.run_row(run_id)
        if row is None:
            raise RunFailed(f"run {run_id} does not exist")
        return row, json.loads(row.record), json.loads(row.state)

    def _rows(self, record: Mapping[str, Any], purpose: str) -> list[dict[str, Any]]:
        """The rows a run trains on (``purpose`` "train") or validates on ("validation").

        With a validation dataset of its own, the run validates on every row of that build and
        trains on every row of its dataset; otherwise on the dataset's two splits.
        """
        separate = record.get("validation_dataset_id")
        if purpose == "train":
            return self.store.train_rows(record["dataset_id"], separate_validation=bool(separate))
        if separate:
            return self.store.all_rows(str(separate))
        return self.store.dataset_rows(record["dataset_id"], "validation")

    @functools.lru_cache(maxsize=8)  # noqa: B019 - one engine per process; keyed by run and purpose
    def _examples(self, run_id: str, purpose: str) -> list[packing.Example]:
        _, record, _ = self._load(run_id)
        fields = tuple(record["label_fields"])
        return [packing.encode_example(row, fields) for row in self._rows(record, purpose)]

    @functools.lru_cache(maxsize=4)  # noqa: B019
    def _epoch(self, run_id: str, epoch: int) -> list[packing.Batch]:
        _, record, _ = self._load(run_id)
        examples = self._examples(run_id, "train")
        return packing.plan_epoch(
            examples,
            seed=record["seed"],
            epoch=epoch,
            seq_len=record["seq_len"],
            batch_tokens=record["trainer"]["batch_tokens"],
        )

    @functools.lru_cache(maxsize=4)  # noqa: B019
    def _validation(self, run_id: str) -> list[packing.Batch]:
        _, record, _ = self._load(run_id)
        examples = self._examples(run_id, "validation")
        return packing.validation_batches(
            examples, seq_len=record["seq_len"], batch_tokens=record["trainer"]["batch_tokens"]
        )

    # --- lifecycle ------------------------------------------------------------------------------

    def mark_running(self, run_id: str) -> bool:
        """queued → running; False when the run is no longer queued (cancelled meanwhile)."""
        row, record, state = self._load(run_id)
        if row.status == "running":
            return True
        if row.status != "queued":
            return False
        state["started_ts"] = time.time()
        pending = Pending()
        pending.log(
            "INFO",
            f"run started: {record['total_steps']} steps at most",
            event="started",
            worker=self.executor_id,
        )
        _, entries = pending.take()
        return self.store.write_state(
            run_id, state, status="running", log_entries=entries, only_if_status=("queued",)
        )

    # --- jobs -----------------------------------------------------------------------------------

    def _create_job(
        self, client: Any, run_id: str, record: Mapping[str, Any], resume: Mapping[str, Any] | None
    ) -> str:
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

    def _end_job(self, client: Any, run_id: str, job_id: str | None) -> None:
        if not job_id:
            return
        try:
            client.cancel_job(job_id)
        except Exception as exc:
            log.info("cancelling job %s of run %s: %s", job_id, run_id, exc)
        self.store.job_ended(run_id, job_id, time.time())

    def _job_status(self, client: Any, job_id: str) -> str:
        """The job's status in lower case, or "unknown" when it cannot be read."""
        try:
            job = client.get_job(job_id)
        except Exception:
            return "unknown"
        return str(job.get("status", "")).lower() or "unknown"

    def _job_alive(self, client: Any, job_id: str) -> bool:
        return self._job_status(client, job_id) == "running"

    # --- one segment ------------------------------------------------------------------------------

    def run_segment(self, run_id: str) -> dict[str, Any]:
        """Train from the committed checkpoint to the next checkpoint; returns {"done": bool}."""
        _import_torch_once()
        row, record, state = self._load(run_id)
        if row.status in TERMINAL:
            return {"done": True}
        client = self.client_for(row.owner, row.database, row.schema)
        try:
            return self._segment(client, row, record, state)
        except SegmentLost as exc:
            return self._lost(run_id, str(exc))
        except (JobTerminalError, RequestFailedError, CTConnectionError) as exc:
            return self._lost(run_id, f"{type(exc).__name__}: {exc}")
        except APIError as exc:
            if exc.status_code is not None and (
                exc.status_code >= 500 or exc.status_code in (404, 409, 410, 429)
            ):
                return self._lost(run_id, f"{type(exc).__name__}: {exc}")
            raise

    def _lost(self, run_id: str, why: str) -> dict[str, Any]:
        _, _, state = self._load(run_id)
        state["attempts_without_progress"] = int(state.get("attempts_without_progress", 0)) + 1
        state["live_job_id"] = None
        pending = Pending()
        if state["attempts_without_progress"] >= MAX_ATTEMPTS_WITHOUT_PROGRESS:
            pending.log(
                "ERROR",
                f"giving up after {state['attempts_without_progress']} failed attempts: {why}",
                event="failed",
            )
            _, entries = pending.take()
            self.store.write_state(run_id, state, log_entries=entries)
            raise RunFailed(
                f"the run's jobs failed {state['attempts_without_progress']} times in a row; last: {why}"
            )
        pending.log(
            "WARNING",
            f"the training job was lost ({why}); resuming from step {state['committed_step']}",
            event="job_lost",
            step=state["committed_step"],
        )
        _, entries = pending.take()
        self.store.write_state(run_id, state, log_entries=entries)
        return {"done": False, "retry_after_s": min(30.0, 2.0 ** state["attempts_without_progress"])}

    def _segment(
        self, client: Any, row: Any, record: dict[str, Any], state: dict[str, Any]
    ) -> dict[str, Any]:
        run_id = record["run_id"]
        pending = Pending()
        job_id = state.get("live_job_id")
        # After a closed segment the live job holds exactly the committed checkpoint: carry on
        # with it while it runs. (After an open one it is never reused; see the module doc.)
        status = self._job_status(client, job_id) if job_id and not state.get("segment_open") else None
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
                f"from step {state['committed_step']}",
                event="recovered",
                worker=self.executor_id,
                step=state["committed_step"],
            )
        if not reuse:
            if status is not None:
                # The job stopped between two segments (nothing was in flight on it): as lost
                # as one that fails mid-segment, though no work is lost with it.
                pending.log(
                    "WARNING",
                    f"the training job {job_id} is no longer running ({status}); "
                    f"resuming from step {state['committed_step']}",
                    event="job_lost",
                    step=state["committed_step"],
                )
            if job_id:
                self._end_job(client, run_id, job_id)
            resume = state.get("resume")
            # Points past the checkpoint came from a lost attempt; the replay writes them again.
            self.store.drop_metrics_after(run_id, int(state["committed_step"]))
            job_id = self._create_job(client, run_id, record, resume)
            state["live_job_id"] = job_id
            state["job_ids"] = [*state.get("job_ids", []), job_id]
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
        state["segment_open"] = True
        state["step"] = state["committed_step"]
        points, entries = pending.take()
        self.store.write_state(run_id, state, metric_points=points, log_entries=entries)
        assert job_id is not None  # a reused job is the live one; otherwise one was just created
        return self._train(client, job_id, record, state, pending)

    def _train(
        self, client: Any, job_id: str, record: dict[str, Any], state: dict[str, Any], pending: Pending
    ) -> dict[str, Any]:
        plan = _plan(record)
        steps_per_epoch = int(record["steps_per_epoch"])
        early = schedule.EarlyStop.from_dict(state["early_stop"])
        cooldown_start = state.get("cooldown_start")
        step = int(state["committed_step"])
        end = schedule.end_step(plan, cooldown_start)
        started = time.monotonic()
        segment_tokens = 0
        # fwd-bwd and step go through a pipeline: background threads poll them while the next
        # step's batch is sent, with at most PIPELINE_DEPTH steps in flight (docs/training-loop.md).
        pipe = client.pipeline(job_id, workers=2)
        inflight: list[tuple[int, int, float]] = []

        def drain(keep: int) -> None:
            nonlocal segment_tokens
            results = pipe.wait_pending(2 * keep)
            for index in range(0, len(results), 2):
                done_step, tokens, lr = inflight.pop(0)
                segment_tokens += tokens
                elapsed = max(time.monotonic() - started, 1e-9)
                pending.points += [
                    ("train_loss", done_step, float(results[index]["avg_loss"])),
                    ("lr", done_step, lr),
                    ("epoch", done_step, done_step / steps_per_epoch),
                    ("tokens_per_s", done_step, segment_tokens / elapsed),
                ]

        try:
            return self._steps(
                client,
                job_id,
                record,
                state,
                pending,
                pipe,
                inflight,
                drain,
                early,
                cooldown_start,
                step,
                end,
            )
        finally:
            pipe.close()

    def _steps(
        self,
        client: Any,
        job_id: str,
        record: dict[str, Any],
        state: dict[str, Any],
        pending: Pending,
        pipe: Any,
        inflight: list[tuple[int, int, float]],
        drain: _Drain,
        early: schedule.EarlyStop,
        cooldown_start: int | None,
        step: int,
        end: int,
    ) -> dict[str, Any]:
        run_id = record["run_id"]
        trainer = record["trainer"]
        plan = _plan(record)
        steps_per_epoch = int(record["steps_per_epoch"])
        checkpoint_every = int(trainer["checkpoint_every_steps"])
        next_cancel_check = 0.0
        lowest = (state.get("resume") or {}).get("lowest_val")
        reasons: list[str] = []
        val_loss: float | None = None
        validated_step: int | None = None
        cancelled = False
        while step < end:
            if time.monotonic() >= next_cancel_check:
                # A cancel is read twice a second: it stops the run at the next step boundary.
                if self.store.cancel_requested(run_id):
                    cancelled = True
                    break
                next_cancel_check = time.monotonic() + CANCEL_CHECK_S
            epoch, index = divmod(step, steps_per_epoch)
            batch = self._epoch(run_id, epoch)[index]
            lr = float(schedule.learning_rate(plan, step, cooldown_start))
            pipe.forward_backward(serialize_forward_backward_args(kwargs=batch.kwargs()))
            pipe.step(learning_rate=lr)
            step += 1
            inflight.append((step, int(batch.target_tokens), lr))
            drain(PIPELINE_DEPTH)
            state["step"] = step
            state["epoch"] = step / steps_per_epoch
            if schedule.is_validation_step(
                step,
                val_every_steps=int(trainer["val_every_steps"]),
                steps_per_epoch=steps_per_epoch,
                at_epoch_boundaries=bool(trainer["early_stopping"]),
                end_step=end,
            ):
                drain(keep=0)
                val_loss, accuracy = self._validate(client, job_id, record)
                validated_step = step
                pending.points.append(("val_loss", step, val_loss))
                for label, value in accuracy.items():
                    pending.points.append((f"val_accuracy/{label}", step, value))
                # Patience counts gains of more than min_delta; the best checkpoint is simply the
                # lowest validation loss so far (a cooldown often brings small, real gains).
                early, _ = schedule.observe(
                    early,
                    step,
                    val_loss,
                    patience=int(trainer["patience"]),
                    min_delta=float(trainer["min_delta"]),
                )
                new_best = math.isfinite(val_loss) and (lowest is None or val_loss < lowest["loss"])
                if new_best:
                    lowest = {"loss": val_loss, "step": step}
                pending.log(
                    "INFO",
                    f"step {step}: validation loss {val_loss:.6f}" + (" (new best)" if new_best else ""),
                    event="validation",
                    step=step,
                    epoch=step / steps_per_epoch,
                    val_loss=val_loss,
                    validation={
                        "loss": val_loss,
                        "accuracy": accuracy,
                        "new_best": new_best,
                        # What was validated on: the run's own split, or a build of its own.
                        "dataset_id": record.get("validation_dataset_id") or record["dataset_id"],
                        "rows": len(self._examples(run_id, "validation")),
                    },
                )
                if new_best:
                    reasons.append("best")
                if not trainer["early_stopping"]:
                    # Validation still picks the best checkpoint; it never shortens the run.
                    early = dataclasses.replace(early, stop_step=None, reason=None)
                elif (
                    cooldown_start is None
                    and early.stop_step == step
                    and step >= plan.total_steps - plan.cooldown_steps
                ):
                    # Inside the scheduled cooldown already: the run ends as planned, not early.
                    early = dataclasses.replace(early, stop_step=None, reason=None)
                elif cooldown_start is None and early.stop_step == step:
                    cooldown_start = step
                    end = schedule.end_step(plan, cooldown_start)
                    pending.log(
                        "INFO",
                        f"early stop at step {step}: {early.reason}; cooling down until step {end}",
                        event="early_stop",
                        step=step,
                        early_stop={"step": step, "reason": early.reason, "end_step": end},
                    )
            if step % checkpoint_every == 0:
                reasons.append("cadence")
            if step >= end:
                reasons.append("final")
            if reasons:
                break
            if step % FLUSH_EVERY_STEPS == 0:
                drain(keep=0)
                points, entries = pending.take()
                state["gpu_seconds"] = self.store.gpu_seconds(run_id)
                self.store.write_state(run_id, state, metric_points=points, log_entries=entries)
        drain(keep=0)
        if cancelled:
            reasons = ["final"]
        if step == int(state["committed_step"]) and state.get("resume") is not None and cancelled:
            # Nothing ran since the last checkpoint: it is the final valid one, and says so.
            newest = state["resume"]["checkpoint_id"]
            for checkpoint in state["checkpoints"]:
                if checkpoint["checkpoint_id"] == newest:
                    checkpoint["reasons"] = sorted({*checkpoint["reasons"], "final"})
            return self._commit(
                client, job_id, record, state, pending, None, early, cooldown_start, end, cancelled=True
            )
        entry = self._save(
            client,
            job_id,
            record,
            state,
            step,
            reasons,
            # A checkpoint keeps the validation loss measured at its own step, best or not.
            val_loss if validated_step == step else None,
            early,
            cooldown_start,
        )
        entry["lowest_val"] = lowest
        return self._commit(
            client, job_id, record, state, pending, entry, early, cooldown_start, end, cancelled=cancelled
        )

    # --- validation -----------------------------------------------------------------------------

    def _validate(
        self, client: Any, job_id: str, record: Mapping[str, Any]
    ) -> tuple[float, dict[str, float]]:
        run_id = record["run_id"]
        batches = self._validation(run_id)
        losses = []
        for batch in batches:
            frame = serialize_forward_backward_args(kwargs=batch.kwargs())
            answer = client.forward(job_id, frame)
            losses.append(float(client.poll_request(job_id, answer["request_id"])["avg_loss"]))
        loss = packing.mean_loss(losses, batches)
        accuracy: dict[str, float] = {}
        fields = list(record["label_fields"])
        if fields:
            rows = self._rows(record, "validation")[:LABEL_ACCURACY_ROWS]
            values = {label["field"]: list(label["values"]) for label in record["labels_detail"]}
            for label_field in fields:
                candidates = values.get(label_field) or []
                if not candidates or not rows:
                    continue
                correct = 0
                for row in rows:
                    prompt, options = packing.label_candidates(row, label_field, candidates, fields)
                    input_ids, attention_mask, spans = packing.candidate_batch(
                        prompt, options, max_len=int(record["seq_len"])
                    )
                    frame = serialize_forward_backward_args(
                        kwargs={"input_ids": input_ids, "attention_mask": attention_mask}
                    )
                    answer = client.forward(job_id, frame)
                    result = client.poll_request(job_id, answer["request_id"])
                    scores = packing.candidate_scores(np.asarray(result["logprobs"]), spans)
                    predicted = candidates[packing.best_candidate(scores)]
                    correct += int(str(predicted) == str(row["labels"].get(label_field)))
                accuracy[label_field] = correct / len(rows)
        return loss, accuracy

    # --- checkpoints ----------------------------------------------------------------------------

    def _save(
        self,
        client: Any,
        job_id: str,
        record: Mapping[str, Any],
        state: Mapping[str, Any],
        step: int,
        reasons: list[str],
        val_loss: float | None,
        early: schedule.EarlyStop,
        cooldown_start: int | None,
    ) -> dict[str, Any]:
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
                "cooldown_start": cooldown_start,
                "end_step": schedule.end_step(_plan(record), cooldown_start),
            },
            "early_stop": early.to_dict(),
        }
        try:
            files = client.export_checkpoint(job_id, checkpoint_id).get("files") or []
        except APIError:
            files = []
        manifest = manifest_for(record, entry, files)
        entry["manifest"] = manifest
        entry["manifest_sha256"] = _sha256_json(manifest)
        return entry

    def _commit(
        self,
        client: Any,
        job_id: str,
        record: Mapping[str, Any],
        state: dict[str, Any],
        pending: Pending,
        entry: dict[str, Any] | None,
        early: schedule.EarlyStop,
        cooldown_start: int | None,
        end: int,
        *,
        cancelled: bool,
    ) -> dict[str, Any]:
        run_id = record["run_id"]
        to_delete: list[dict[str, Any]] = []
        if entry is not None:
            checkpoints = [*state["checkpoints"], entry]
            best = self._best(checkpoints)
            keep = {c["checkpoint_id"] for c in checkpoints[-KEEP_LAST_CHECKPOINTS:]}
            if best is not None:
                keep.add(best["checkpoint_id"])
            to_delete = [c for c in checkpoints if c["checkpoint_id"] not in keep]
            state["checkpoints"] = [c for c in checkpoints if c["checkpoint_id"] in keep]
            state["best_checkpoint_id"] = best["checkpoint_id"] if best is not None else None
            state["resume"] = {
                k: entry.get(k)
                for k in (
                    "checkpoint_id",
                    "job_id",
                    "step",
                    "data_position",
                    "schedule",
                    "early_stop",
                    "lowest_val",
                )
            }
            state["lowest_val"] = entry.get("lowest_val")
            state["committed_step"] = entry["step"]
            state["step"] = entry["step"]
            pending.log(
                "INFO",
                f"checkpoint {entry['checkpoint_id']} at step {entry['step']} "
                f"({', '.join(entry['reasons'])})",
                event="checkpoint",
                step=entry["step"],
                checkpoint_id=entry["checkpoint_id"],
                checkpoint={
                    k: entry[k] for k in ("checkpoint_id", "step", "reasons", "val_loss", "manifest_sha256")
                },
            )
        state["early_stop"] = early.to_dict()
        state["cooldown_start"] = cooldown_start
        state["end_step"] = end
        state["segment_open"] = False
        state["attempts_without_progress"] = 0
        state["gpu_seconds"] = self.store.gpu_seconds(run_id)
        points, entries = pending.take()
        self.store.write_state(run_id, state, metric_points=points, log_entries=entries)
        for old in to_delete:
            try:
                client.delete_checkpoint(old["job_id"], old["checkpoint_id"])
            except APIError as exc:
                log.info("deleting checkpoint %s of run %s: %s", old["checkpoint_id"], run_id, exc)
        done = cancelled or int(state["committed_step"]) >= end
        return {"done": done, "cancelled": cancelled}

    @staticmethod
    def _best(checkpoints: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
        return _best(checkpoints)

    # --- the end ----------------------------------------------------------------------------------

    def finalize(
        self, run_id: str, outcome: str, error: str | None = None, *, by: str = "workflow"
    ) -> dict[str, Any]:
        """Make the run terminal: export and register the model (succeeded), end the job, usage.

        Exactly once, however many finalizers race for one run (the cancel route and the run's
        workflow picked up at that moment, two workers of one database): the terminal write is a
        compare-and-swap on the state this call read, so one finalizer writes the end, its log
        line and its usage, and every other one reads the run again, finds it finished and returns
        it as the winner left it, having written nothing. ``by`` names the finalizer ("workflow"
        or "cancel") in the run's state, so only the one that ended the run sends its webhook.
        Returns the public run.
        """
        requested = outcome, error
        while True:
            row, record, state = self._load(run_id)
            if row.status in TERMINAL and state.get("finished_ts"):
                return self.public(run_id)
            outcome, error = requested
            client = self.client_for(row.owner, row.database, row.schema)
            pending = Pending()
            if row.status == "cancelled" or outcome == "cancelled" or self.store.cancel_requested(run_id):
                outcome = "cancelled"
            if outcome == "succeeded" and not state.get("model_id"):
                try:
                    state["model_id"] = self._register(client, row, record, state, pending)
                except Exception as exc:
                    log.error("registering the model of run %s failed:\n%s", run_id, traceback.format_exc())
                    outcome, error = (
                        "failed",
                        f"exporting the best checkpoint failed: {type(exc).__name__}: {exc}",
                    )
            self._end_job(client, run_id, state.get("live_job_id"))
            for job in self.store.run_jobs(run_id):
                if job.ended_at is None:
                    self.store.job_ended(run_id, job.job_id, time.time())
            state["live_job_id"] = None
            state["gpu_seconds"] = self.store.gpu_seconds(run_id)
            state["finished_ts"] = time.time()
            state["error"] = error
            state["finalized_by"] = by
            severity = "INFO" if outcome != "failed" else "ERROR"
            pending.log(
                severity,
                f"run {outcome}" + (f": {error}" if error else ""),
                event=outcome,
                step=state["step"],
            )
            points, entries = pending.take()
            if self.store.write_state(
                run_id,
                state,
                status=outcome,
                metric_points=points,
                log_entries=entries,
                only_if_state=row.state,
            ):
                return self.public(run_id)
            # The run changed since it was read: another finalizer ended it (the loop returns it
            # as that one left it), or something else wrote its state meanwhile (then try again).

    def _dataset_format(self, record: Mapping[str, Any]) -> str | None:
        """The format of the rows the run trains on, as its dataset build recorded it."""
        dataset = self.store.dataset_row(record["dataset_id"])
        if dataset is None:
            return None
        value = json.loads(dataset.summary).get("format")
        return str(value) if value is not None else None

    def register_cancelled(self, run_id: str) -> tuple[dict[str, Any], bool]:
        """Register the model of a cancelled run from its best checkpoint; (model, created now).

        The run keeps its checkpoints when it is cancelled, so its best one (the lowest validation
        loss) is exported weights-only and registered, as a succeeded run's is when it ends. A run
        with a model answers that model. Anything else is refused with what to do instead.
        """
        with self._registering:
            row, record, state = self._load(run_id)
            registered = self.store.model_for_run(run_id)
            if registered is not None:
                return json.loads(registered.record), False
            refuse_unregistrable(row, state)
            client = self.client_for(row.owner, row.database, row.schema)
            pending = Pending()
            model = self._save_model(client, row, record, state, run_status="cancelled")
            # The job that loaded the checkpoint did its work; a cancelled run holds no job.
            self._end_job(client, run_id, state.get("live_job_id"))
            state["live_job_id"] = None
            state["gpu_seconds"] = self.store.gpu_seconds(run_id)
            model_id = self.store.add_model(model, owner=row.owner)
            if model_id != model["model_id"]:
                with contextlib.suppress(APIError):
                    client.delete_checkpoint(model["job_id"], model["checkpoint_id"])
            first = self.store.model_for_run(run_id)
            assert first is not None  # add_model answered with its id
            model = json.loads(first.record)
            state["model_id"] = model["model_id"]
            pending.log(
                "INFO",
                f"registered model {model['model_id']} from checkpoint {model['source_checkpoint_id']} "
                f"at step {model['step']} of the cancelled run",
                event="model_registered",
                step=model["step"],
                checkpoint_id=model["checkpoint_id"],
            )
            _, entries = pending.take()
            self.store.write_state(run_id, state, log_entries=entries, only_if_status=("cancelled",))
            return model, model_id == model["model_id"]

    def _register(
        self, client: Any, row: Any, record: Mapping[str, Any], state: dict[str, Any], pending: Pending
    ) -> str:
        """Register the run's model: its best checkpoint saved again weights-only; its id.

        A run has one registered model. One already registered (by a finalizer that did not get to
        write the run's end, or one racing with this call) is the answer, and the weights this call
        saved for it, if any, are deleted again.
        """
        registered = self.store.model_for_run(record["run_id"])
        if registered is not None:
            model = json.loads(registered.record)
        else:
            model = self._save_model(client, row, record, state)
            if self.store.add_model(model, owner=row.owner) != model["model_id"]:
                with contextlib.suppress(APIError):
                    client.delete_checkpoint(model["job_id"], model["checkpoint_id"])
                first = self.store.model_for_run(record["run_id"])
                assert first is not None  # add_model answered with its id
                model = json.loads(first.record)
        note = " (fallback: validation never ran, the newest checkpoint)" if model["fallback"] else ""
        pending.log(
            "INFO",
            f"registered model {model['model_id']} from checkpoint {model['source_checkpoint_id']} "
            f"at step {model['step']}{note}",
            event="model_registered",
            step=model["step"],
            checkpoint_id=model["checkpoint_id"],
        )
        return str(model["model_id"])

    def _save_model(
        self,
        client: Any,
        row: Any,
        record: Mapping[str, Any],
        state: dict[str, Any],
        run_status: str = "succeeded",
    ) -> dict[str, Any]:
        """Load the best checkpoint (the newest one when validation never ran) into a live job and
        save it weights-only; the model record of that save."""
        best = self._best(state["checkpoints"])
        fallback = best is None
        source = best if best is not None else (state["checkpoints"][-1] if state["checkpoints"] else None)
        if source is None:
            raise RunFailed("the run has no checkpoint to register")
        job_id = state.get("live_job_id")
        if not job_id or not self._job_alive(client, job_id):
            job_id = self._create_job(client, record["run_id"], record, source)
            state["live_job_id"] = job_id
            state["job_ids"] = [*state.get("job_ids", []), job_id]
        else:
            client.poll_request(job_id, client.load(job_id, source["checkpoint_id"], source["job_id"]))
        result = client.poll_request(job_id, client.save(job_id, checkpoint_type="weights-only"))
        weights_id = client.checkpoint_id_from_save_result(result)
        dataset_format = self._dataset_format(record)
        return {
            "model_id": new_id("mdl"),
            "status": "training",
            "run_status": run_status,
            "status_detail": _status_detail(record["run_id"], run_status, source, weights_id, fallback),
            "format": dataset_format,
            "chat_template": chat_template_of(dataset_format),
            "run_id": record["run_id"],
            "database": record["database"],
            "schema": record["schema"],
            "model_name": record["model_name"],
            "job_id": job_id,
            "checkpoint_id": weights_id,
            "source_checkpoint_id": source["checkpoint_id"],
            "step": source["step"],
            "val_loss": source.get("val_loss"),
            "fallback": fallback,
            "config_fingerprint": record["config_fingerprint"],
            "created_ts": time.time(),
        }

    # --- the public view ------------------------------------------------------------------------

    def public(self, run_id: str) -> dict[str, Any]:
        row = self.store.run_row(run_id)
        if row is None:
            raise RunFailed(f"run {run_id} does not exist")
        return public_run(row)


def chat_template_of(dataset_format: str | None) -> dict[str, Any] | None:
    """The chat template a model trained on rows of ``dataset_format`` answers in: its name and
    end-of-turn marker (chat and prompt/completion rows are rendered with it); None for text and
    label rows, which train on plain text."""
    if dataset_format not in ("chat", "prompt_completion"):
        return None
    return {"name": templates.TEMPLATE, "end_of_turn": templates.END_OF_TURN}


def _status_detail(
    run_id: str, run_status: str, source: Mapping[str, Any], weights_id: str, fallback: bool
) -> str:
    """A sentence for people: what the model is and where its weights come from."""
    which = "newest checkpoint (validation never ran)" if fallback else "best checkpoint"
    loss = source.get("val_loss")
    measured = f", validation loss {loss:.6g}" if isinstance(loss, int | float) else ""
    return (
        f"weights-only export {weights_id} of the {which} {source['checkpoint_id']} "
        f"(step {source['step']}{measured}) of run {run_id}, registered "
        + ("when the run succeeded" if run_status == "succeeded" else "after the run was cancelled")
    )


def refuse_unregistrable(row: Any, state: Mapping[str, Any]) -> None:
    """Refuse (409 ``aborted``, saying what to do) a run whose model cannot be registered now."""
    run_id = row.run_id
    if row.status in ("queued", "running"):
        raise aborted(
            f"run {run_id} is {row.status}: a model is registered when it succeeds; to keep what it "
            "has learnt so far, cancel it and register the cancelled run's best checkpoint"
        )
    if row.status == "failed":
        raise aborted(
            f"run {run_id} failed ({state.get('error')}): resume it (POST …/runs/{run_id}:resume, "
            "ct runs resume) and it registers its model when it succeeds"
        )
    if row.status == "succeeded":
        raise aborted(f"run {run_id} succeeded but registered no model: {state.get('error')}")
    if not state.get("finished_ts"):
        raise aborted(f"run {run_id} is still ending after its cancel; ask again in a moment")
    if _best(state.get("checkpoints") or []) is None:
        raise aborted(
            f"run {run_id} was cancelled before any validation, so no checkpoint is known to be best; "
            "resume it (POST …/runs/{run_id}:resume, ct runs resume) to train on and validate"
        )


def refuse_unresumable(row: Any, state: Mapping[str, Any]) -> None:
    """Refuse (409 ``aborted``, saying what to do) a run that cannot be resumed now."""
    run_id = row.run_id
    if row.status in ("queued", "running"):
        raise aborted(f"run {run_id} is {row.status}: only a failed or cancelled run can be resumed")
    if row.status == "succeeded":
        raise aborted(
            f"run {run_id} succeeded: there is nothing to resume; to train its model further, start "
            f"a new run with model set to its model id ({state.get('model_id')})"
        )
    if not state.get("finished_ts"):
        raise aborted(f"run {run_id} is still ending; ask again in a moment")
    if state.get("model_id"):
        raise aborted(
            f"run {run_id} registered model {state['model_id']} from its best checkpoint: resuming "
            "would leave that model behind the run; to train on, start a new run with model set to "
            f"{state['model_id']}"
        )
    if not state.get("resume"):
        raise aborted(
            f"run {run_id} has no resumable checkpoint (it ended before its first one): start it "
            "again with the same spec (ct runs start) instead"
        )


def public_run(row: Any) -> dict[str, Any]:
    """The Run JSON of docs/runs.md from a stored row."""
    from ct_runs.store import rfc3339

    record = json.loads(row.record)
    state = json.loads(row.state)
    early = state.get("early_stop") or {}
    stop = (
        {"step": early["stop_step"], "reason": early.get("reason")}
        if early.get("stop_step") is not None
        else None
    )
    checkpoints = [
        {k: c.get(k) for k in ("checkpoint_id", "job_id", "step", "reasons", "val_loss", "manifest_sha256")}
        for c in state.get("checkpoints", [])
    ]
    lowest = state.get("lowest_val") or {}
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
        "step": state.get("step", 0),
        "epoch": state.get("epoch", 0.0),
        "best_val_loss": best_val if best_val is None or math.isfinite(best_val) else None,
        "best_step": lowest.get("step"),
        "early_stop": stop,
        "checkpoints": checkpoints,
        "best_checkpoint_id": state.get("best_checkpoint_id"),
        "gpu_seconds": state.get("gpu_seconds", 0.0),
        "usage": {"training_gpu_seconds": state.get("gpu_seconds", 0.0)},
        "model_id": state.get("model_id"),
        "job_ids": state.get("job_ids", []),
        "cancel_requested": bool(row.cancel_requested),
        "error": state.get("error"),
        "created_at": rfc3339(record["created_ts"]),
        "started_at": rfc3339(state.get("started_ts")),
        "finished_at": rfc3339(state.get("finished_ts")),
    }
