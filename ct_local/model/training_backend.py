"""Runs the requests of one training sub-job against its :class:`~ct_local.model.trainer.Trainer`.

This is the glue between stored requests and the model: it decodes request frames, names and
records checkpoints (``cp_<uuid>`` ids, a ``stage_path`` carrying that id, no
``checkpoint_id`` key in the result, as the service answers a save), resolves what a load or a
create-time ``source_checkpoint_info`` points at, and keeps a snapshot of the whole training state
(weights, optimizer, gradients, step count) after every request that changes it
(:data:`STATE_KINDS`; see ct_local.storage.snapshots). A restart, after a graceful stop or a kill,
builds the sub-job from that snapshot, so it carries on from exactly its last completed request.
A state above the snapshot limit is written only when the server stops gracefully.

Imported only by worker threads: it imports torch.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ct_core import wire
from ct_local.model import hf, registry, tinylm
from ct_local.model.trainer import RequestError, Trainer, peft_config_of
from ct_local.model.training_spec import TrainingSpec, training_spec
from ct_local.storage.checkpoint_paths import checkpoint_folder, resolve_checkpoint
from ct_local.storage.requests import RequestRow
from ct_local.storage.snapshots import STATE_KINDS, snapshot_path
from ct_local.storage.store import CheckpointRow, JobRow, Store

log = logging.getLogger(__name__)

# The format version of a save result, as the service reports it; the caller may check it.
SAVE_RESULT_VERSION = 1.0
SNAPSHOT_FORMAT = "ct-local-state-1"


class TrainingBackend:
    """Executes forward-backward, step, save, load and forward for one training sub-job."""

    kinds: tuple[str, ...] = ("forward-backward", "step", "save", "load", "forward")

    @property
    def state_kinds(self) -> tuple[str, ...]:
        """The kinds of request whose state is snapshotted when done: the last one changed it.
        A forward does when it set optimizer settings (processing.optimizer)."""
        return (*STATE_KINDS, "forward") if self._forward_changed_state else STATE_KINDS

    def __init__(
        self,
        store: Store,
        state_dir: Path,
        job: JobRow,
        sub_job: dict[str, Any],
        say: Callable[..., None],
    ) -> None:
        self.store = store
        self.state_dir = state_dir
        self.job = job
        self.sub_job = sub_job
        self.sub_job_id = str(sub_job["sub_job_id"])
        self.say = say
        self._forward_changed_state = False
        self.spec: TrainingSpec = training_spec(sub_job)
        self.peft_config = peft_config_of(sub_job)
        self.snapshot_file = snapshot_path(state_dir, job.job_id, self.sub_job_id)
        #: The request whose result the trainer's state is (None: the state it was created with).
        self.applied: dict[str, Any] | None = None
        # True when the state changed since the snapshot file was written (one above the limit).
        self._unsaved = False
        self._said_over_limit = False
        self.trainer = self._initial_trainer()
        if self.peft_config:
            trainable = sum(p.numel() for p in self.trainer.model.parameters() if p.requires_grad)
            self.say(f"LoRA adapter applied from peft_config: {trainable} trainable parameters")

    # --- start-up -----------------------------------------------------------------------------

    def _initial_trainer(self) -> Trainer:
        if self.snapshot_file.is_file():
            return self._restored()
        source = self.spec.source
        if source is None:
            model, origin = hf.base_model(self.spec.model_name)
            self.say(f"building {origin}")
            return Trainer(self.spec, model, self.peft_config)
        if source.external_path is not None:
            self.say(f"loading Hugging Face weights from {source.external_path}")
            return Trainer(
                self.spec, hf.load_for(self.spec.model_name, source.external_path), self.peft_config
            )
        assert source.source_job_id is not None and source.checkpoint_id is not None
        row = resolve_checkpoint(self.store, source.source_job_id, source.checkpoint_id)
        if row is None or not row.path:
            raise RuntimeError(
                f"source checkpoint {source.checkpoint_id} of job {source.source_job_id} no longer exists"
            )
        folder = Path(row.path)
        trainer = Trainer(self.spec, hf.load_for(self.spec.model_name, folder), self.peft_config)
        if row.checkpoint_type == "resumable":
            info = trainer.load(folder, with_optimizer=self.spec.load_optimizer_states)
            self.say(
                f"initialized from {row.checkpoint_id} "
                f"(resumable, optimizer restored: {info['loaded_optimizer_states']})"
            )
        else:
            self.say(f"initialized from {row.checkpoint_id} (weights-only)")
        return trainer

    def _restored(self) -> Trainer:
        """The trainer exactly as the snapshot left it (its model rebuilt from the stored architecture)."""
        tensors, description = tinylm.read_snapshot(self.snapshot_file)
        marker = description.get("marker")
        if "trainer" not in description or "config" not in description:
            raise RuntimeError(
                f"the state snapshot of {self.sub_job_id} holds no state (it was above the state snapshot "
                "limit), so the sub-job cannot carry on from its last request"
            )
        model = tinylm.model_from_config(description["config"])
        if registry.real_entry(self.spec.model_name) is not None:
            model = hf.place(model)
        trainer = Trainer(self.spec, model, self.peft_config)
        trainer.restore(tensors, description["trainer"])
        self.applied = marker if isinstance(marker, dict) else None
        after = f" after request {self.applied['request_id']}" if self.applied else ""
        self.say(f"restored the training state{after} (global step {trainer.global_steps})")
        return trainer

    # --- state snapshots ----------------------------------------------------------------------

    def persist(
        self, row: RequestRow, encoded: dict[str, Any], result: dict[str, Any], max_bytes: int
    ) -> None:
        """Snapshot the state ``row`` left, before the row is marked done.

        The marker keeps the request's encoded result (``encoded``: delivery, result_json,
        result_path) and its JSON result, so start-up can finish a request that was applied when
        the server was killed before its row said so. Above ``max_bytes`` only the marker is
        written, saying why the state is not there.
        """
        marker: dict[str, Any] = {"request_id": row.request_id, "seq": row.seq, "kind": row.kind}
        self.applied = dict(marker)
        nbytes = self.trainer.state_nbytes()
        if nbytes > max_bytes:
            self._unsaved = True
            skipped = {"nbytes": nbytes, "limit": max_bytes}
            tinylm.write_snapshot(
                self.snapshot_file, {}, {"format": SNAPSHOT_FORMAT, "marker": marker, "skipped": skipped}
            )
            if not self._said_over_limit:
                self._said_over_limit = True
                self.say(
                    f"the training state is {nbytes} bytes, above the state snapshot limit of {max_bytes}: "
                    "it is kept at a graceful shutdown only, and a crash of the server fails this job",
                    "WARNING",
                )
            return
        try:
            marker["result"] = json.loads(json.dumps(result, allow_nan=False))
        except (TypeError, ValueError):
            marker["result"] = None
        self._write(dict(marker, **encoded))

    def _write(self, marker: dict[str, Any] | None) -> None:
        tensors, numbers = self.trainer.state()
        description = {
            "format": SNAPSHOT_FORMAT,
            "marker": marker,
            "trainer": numbers,
            "config": self.trainer.base_config(),
        }
        tinylm.write_snapshot(self.snapshot_file, tensors, description)
        self._unsaved = False

    # --- requests -----------------------------------------------------------------------------

    @staticmethod
    def _batch(frame: bytes) -> tuple[Any, dict[str, Any]]:
        try:
            batch = wire.loads(frame, backend="torch", copy=True)
        except wire.WireError as exc:
            raise RequestError(f"the request body is not a valid DSSST1 frame: {exc}") from exc
        options = wire.read_metadata(frame).get("response_options")
        return batch, options if isinstance(options, dict) else {}

    def execute(self, row: RequestRow, frame: bytes | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Run one request; returns the result and the response options of its frame."""
        if row.kind in ("forward-backward", "forward"):
            if frame is None:
                raise RequestError("the request input is missing")
            batch, options = self._batch(frame)
            if row.kind == "forward":
                processing = batch.get("processing") if isinstance(batch, dict) else None
                self._forward_changed_state = isinstance(processing, dict) and "optimizer" in processing
                return {"job_id": self.job.job_id, **self.trainer.forward(batch)}, options
            return {"job_id": self.job.job_id, **self.trainer.forward_backward(batch)}, options
        if row.kind == "step":
            return self.trainer.step(row.params.get("learning_rate")), {}
        if row.kind == "save":
            return self._save(str(row.params.get("checkpoint_type") or "resumable")), {}
        if row.kind == "load":
            return self._load(row.params), {}
        raise RequestError(f"{row.kind} requests are not run by a training sub-job")

    def _save(self, checkpoint_type: str) -> dict[str, Any]:
        checkpoint_id = f"cp_{uuid.uuid4()}"
        tag = f"global_step{self.trainer.global_steps}"
        folder = checkpoint_folder(self.state_dir, self.job.job_id, checkpoint_id, tag)
        self.trainer.save(folder, checkpoint_type)
        self.store.add_checkpoint(
            CheckpointRow(
                job_id=self.job.job_id,
                checkpoint_id=checkpoint_id,
                global_steps=self.trainer.global_steps,
                avg_loss=self.trainer.last_avg_loss,
                created_at=time.time(),
                checkpoint_type=checkpoint_type,
                path=str(folder),
            )
        )
        self.say(f"saved {checkpoint_type} checkpoint {checkpoint_id} ({tag})")
        return {
            "job_id": self.sub_job_id,
            "stage_path": folder.resolve().as_uri() + "/",
            "checkpoint_path": str(folder),
            "checkpoint_tag": tag,
            "version": SAVE_RESULT_VERSION,
        }

    def _load(self, params: dict[str, Any]) -> dict[str, Any]:
        source_job = str(params["source_job_id"])
        row = resolve_checkpoint(self.store, source_job, str(params["checkpoint_id"]))
        if row is None or not row.path or not Path(row.path).is_dir():
            raise RequestError(f"checkpoint {params['checkpoint_id']} of job {source_job} no longer exists")
        with_optimizer = row.checkpoint_type == "resumable" and self.spec.load_optimizer_states
        try:
            info = self.trainer.load(Path(row.path), with_optimizer=with_optimizer)
        except ValueError as exc:
            raise RequestError(str(exc)) from exc
        self.say(f"loaded checkpoint {row.checkpoint_id} from job {source_job}")
        return {
            "job_id": self.sub_job_id,
            "checkpoint_id": row.checkpoint_id,
            "source_job_id": source_job,
            "checkpoint_type": row.checkpoint_type,
            **info,
        }

    def snapshot(self) -> None:
        """At a graceful stop: write the state unless the snapshot file holds it already.

        A state above the snapshot limit is written here whatever its size; the next start-up
        restores it as it restores any other.
        """
        if self._unsaved:
            self._write(self.applied)
