"""The end of a run: the terminal write, exactly once, and the registered model.

:meth:`Finalizer.finalize` makes a run terminal; a succeeded run registers its model first (its
best checkpoint saved again weights-only), and :meth:`Finalizer.save_cancelled` then
:meth:`Finalizer.record_cancelled` register the model of a cancelled run on request, as the two
steps of the registration workflow (ct_runs.workflows). A registered model records where it comes from (run,
checkpoints, step, validation loss) and how it talks (the format of its rows and the chat template
they were rendered with). :func:`refuse_unregistrable` and :func:`refuse_unresumable` say why a
run's model cannot be registered, or the run resumed, now, and what to do instead.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from ct_core.errors import APIError
from ct_runs import templates, tokenizers
from ct_runs.checkpoints import best_of
from ct_runs.errors import RunsRefusal, aborted
from ct_runs.ids import new_id
from ct_runs.lifecycle import Jobs, RunFailed, load_run
from ct_runs.progress import Pending, Progress
from ct_runs.store import TERMINAL, Store

log = logging.getLogger("ct_runs.finalize")


class Finalizer:
    """Ends runs and registers their models, for one process."""

    def __init__(self, store: Store, client_for: Callable[[str, str, str], Any], jobs: Jobs) -> None:
        self.store = store
        self.client_for = client_for
        self.jobs = jobs

    def finalize(self, run_id: str, outcome: str, error: str | None = None, *, by: str = "workflow") -> bool:
        """Make the run terminal: export and register the model (succeeded), end the job, usage.

        Exactly once, however many finalizers race for one run (the cancel route and the run's
        workflow picked up at that moment, two workers of one database): the terminal write is a
        compare-and-swap on the state this call read, so one finalizer writes the end, its log
        line and its usage, and every other one reads the run again, finds it finished and returns,
        having written nothing. ``by`` names the finalizer ("workflow" or "cancel") in the run's
        progress, so only the one that ended the run sends its webhook. Returns whether this call
        ended the run.
        """
        requested = outcome, error
        while True:
            row, record, progress = load_run(self.store, run_id)
            if row.status in TERMINAL and progress.finished_ts:
                return False
            outcome, error = requested
            client = self.client_for(row.owner, row.database, row.schema)
            pending = Pending()
            if row.status == "cancelled" or outcome == "cancelled" or self.store.cancel_requested(run_id):
                outcome = "cancelled"
            if outcome == "succeeded" and not progress.model_id:
                try:
                    progress.model_id = self._register(client, row, record, progress, pending)
                except Exception as exc:
                    log.error("registering the model of run %s failed:\n%s", run_id, traceback.format_exc())
                    outcome, error = (
                        "failed",
                        f"exporting the best checkpoint failed: {type(exc).__name__}: {exc}",
                    )
            self.jobs.end(client, run_id, progress.live_job_id)
            for job in self.store.run_jobs(run_id):
                if job.ended_at is None:
                    self.store.job_ended(run_id, job.job_id, time.time())
            progress.live_job_id = None
            progress.gpu_seconds = self.store.gpu_seconds(run_id)
            progress.finished_ts = time.time()
            progress.error = error
            progress.finalized_by = by
            severity = "INFO" if outcome != "failed" else "ERROR"
            pending.log(
                severity,
                f"run {outcome}" + (f": {error}" if error else ""),
                event=outcome,
                step=progress.step,
            )
            points, entries = pending.take()
            if self.store.write_state(
                run_id,
                progress.to_dict(),
                status=outcome,
                metric_points=points,
                log_entries=entries,
                only_if_state=row.state,
            ):
                return True
            # The run changed since it was read: another finalizer ended it (the loop returns it
            # as that one left it), or something else wrote its state meanwhile (then try again).

    def _dataset_format(self, record: Mapping[str, Any]) -> str | None:
        """The format of the rows the run trains on, as its dataset build recorded it."""
        dataset = self.store.dataset_row(record["dataset_id"])
        if dataset is None:
            return None
        value = json.loads(dataset.summary).get("format")
        return str(value) if value is not None else None

    def save_cancelled(self, run_id: str) -> dict[str, Any]:
        """The first half of registering a cancelled run's model: export its best checkpoint.

        The run keeps its checkpoints when it is cancelled, so its best one (the lowest validation
        loss) is loaded into a job and saved weights-only, as a succeeded run's is when it ends.
        Answers ``{"saved": model record}`` for :meth:`record_cancelled`; ``{"model": ...,
        "created": False}`` for a run that has a model; ``{"refused": error body}`` for a run whose
        model cannot be registered now (the body says what to do instead). Runs as a step of the
        registration workflow (ct_runs.workflows): run again after a crash, it exports again on a
        new job, and the record step ends the job the lost attempt left.
        """
        row, record, progress = load_run(self.store, run_id)
        registered = self.store.model_for_run(run_id)
        if registered is not None:
            return {"model": json.loads(registered.record), "created": False}
        try:
            refuse_unregistrable(row, progress)
        except RunsRefusal as exc:
            return {"refused": exc.body()}
        client = self.client_for(row.owner, row.database, row.schema)
        return {"saved": self._save_model(client, record, progress, run_status="cancelled")}

    def record_cancelled(self, run_id: str, model: Mapping[str, Any]) -> dict[str, Any]:
        """The second half: register the exported ``model`` as the run's, end the run's jobs and
        write its progress; ``{"model": the run's model, "created": whether it is this one}``.

        Safe to run again after a crash (a step of the registration workflow): the model table
        holds one model a run, and the progress and its ``model_registered`` line are written
        once, by the call that finds the run without its model id.
        """
        row, _, progress = load_run(self.store, run_id)
        client = self.client_for(row.owner, row.database, row.schema)
        registered, created = self._store_model(client, model, owner=row.owner)
        # The jobs that loaded the checkpoint did their work; a cancelled run holds no job. That
        # includes one a registration interrupted by a crash created before it was run again.
        for job in self.store.run_jobs(run_id):
            if job.ended_at is None:
                self.jobs.end(client, run_id, job.job_id)
        if progress.model_id != registered["model_id"]:
            progress.live_job_id = None
            if model["job_id"] not in progress.job_ids:
                progress.job_ids = [*progress.job_ids, model["job_id"]]
            progress.gpu_seconds = self.store.gpu_seconds(run_id)
            progress.model_id = registered["model_id"]
            pending = Pending()
            _log_registered(pending, registered, " of the cancelled run")
            _, entries = pending.take()
            self.store.write_state(
                run_id, progress.to_dict(), log_entries=entries, only_if_status=("cancelled",)
            )
        return {"model": registered, "created": created}

    def _store_model(
        self, client: Any, model: Mapping[str, Any], *, owner: str
    ) -> tuple[dict[str, Any], bool]:
        """Register ``model`` (a record :meth:`_save_model` made) as its run's model; the run's
        registered model as stored, and whether it is ``model``.

        A run has one registered model: when another registration of the run came first, its model
        is the answer and the weights ``model`` names are deleted again.
        """
        created = self.store.add_model(model, owner=owner) == model["model_id"]
        if not created:
            with contextlib.suppress(APIError):
                client.delete_checkpoint(model["job_id"], model["checkpoint_id"])
        stored = self.store.model_for_run(model["run_id"])
        assert stored is not None  # add_model answered with its id
        return json.loads(stored.record), created

    def _register(
        self, client: Any, row: Any, record: Mapping[str, Any], progress: Progress, pending: Pending
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
            model, _ = self._store_model(client, self._save_model(client, record, progress), owner=row.owner)
        note = " (fallback: validation never ran, the newest checkpoint)" if model["fallback"] else ""
        _log_registered(pending, model, note)
        return str(model["model_id"])

    def _save_model(
        self, client: Any, record: Mapping[str, Any], progress: Progress, run_status: str = "succeeded"
    ) -> dict[str, Any]:
        """Load the best checkpoint (the newest one when validation never ran) into a live job and
        save it weights-only; the model record of that save."""
        best = best_of(progress.checkpoints)
        fallback = best is None
        source = best if best is not None else (progress.checkpoints[-1] if progress.checkpoints else None)
        if source is None:
            raise RunFailed("the run has no checkpoint to register")
        job_id = progress.live_job_id
        if not job_id or not self.jobs.alive(client, job_id):
            job_id = self.jobs.create(client, record["run_id"], record, source)
            progress.live_job_id = job_id
            progress.job_ids = [*progress.job_ids, job_id]
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
            "chat_template": chat_template_of(dataset_format, tokenizers.for_run(record)),
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


def _log_registered(pending: Pending, model: Mapping[str, Any], detail: str) -> None:
    """The run's ``model_registered`` line for its registered ``model``; ``detail`` ends the message."""
    pending.log(
        "INFO",
        f"registered model {model['model_id']} from checkpoint {model['source_checkpoint_id']} "
        f"at step {model['step']}{detail}",
        event="model_registered",
        step=model["step"],
        checkpoint_id=model["checkpoint_id"],
    )


def chat_template_of(
    dataset_format: str | None, tokenizer: tokenizers.RunTokenizer | None = None
) -> dict[str, Any] | None:
    """The chat template a model trained on rows of ``dataset_format`` answers in: its name and
    end-of-turn marker (chat and prompt/completion rows are rendered with it; a real model's own
    template names its tokenizer, ct_runs.templates.model_template); None for text and label rows,
    which train on plain text."""
    if dataset_format not in ("chat", "prompt_completion"):
        return None
    own = templates.model_template(tokenizer) if tokenizer is not None else None
    return own or {"name": templates.TEMPLATE, "end_of_turn": templates.END_OF_TURN}


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


def refuse_unregistrable(row: Any, progress: Progress) -> None:
    """Refuse (409 ``aborted``, saying what to do) a run whose model cannot be registered now."""
    run_id = row.run_id
    if row.status in ("queued", "running"):
        raise aborted(
            f"run {run_id} is {row.status}: a model is registered when it succeeds; to keep what it "
            "has learnt so far, cancel it and register the cancelled run's best checkpoint"
        )
    if row.status == "failed":
        raise aborted(
            f"run {run_id} failed ({progress.error}): resume it (POST …/runs/{run_id}:resume, "
            "ct runs resume) and it registers its model when it succeeds"
        )
    if row.status == "succeeded":
        raise aborted(f"run {run_id} succeeded but registered no model: {progress.error}")
    if not progress.finished_ts:
        raise aborted(f"run {run_id} is still ending after its cancel; ask again in a moment")
    if best_of(progress.checkpoints) is None:
        raise aborted(
            f"run {run_id} was cancelled before any validation, so no checkpoint is known to be best; "
            f"resume it (POST …/runs/{run_id}:resume, ct runs resume) to train on and validate"
        )


def refuse_unresumable(row: Any, progress: Progress) -> None:
    """Refuse (409 ``aborted``, saying what to do) a run that cannot be resumed now."""
    run_id = row.run_id
    if row.status in ("queued", "running"):
        raise aborted(f"run {run_id} is {row.status}: only a failed or cancelled run can be resumed")
    if row.status == "succeeded":
        raise aborted(
            f"run {run_id} succeeded: there is nothing to resume; to train its model further, start "
            f"a new run with model set to its model id ({progress.model_id})"
        )
    if not progress.finished_ts:
        raise aborted(f"run {run_id} is still ending; ask again in a moment")
    if progress.model_id:
        raise aborted(
            f"run {run_id} registered model {progress.model_id} from its best checkpoint: resuming "
            "would leave that model behind the run; to train on, start a new run with model set to "
            f"{progress.model_id}"
        )
    if not progress.resume:
        raise aborted(
            f"run {run_id} has no resumable checkpoint (it ended before its first one): start it "
            "again with the same spec (ct runs start) instead"
        )
