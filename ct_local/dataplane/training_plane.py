"""The worker-backed data plane of the local server: training calls, operations and request polls.

:class:`TrainingDataPlane` is the :class:`~ct_local.dataplane.seam.DataPlane` the served app uses
(ct_local.runtime passes it to ``create_app``). It validates each call, records it as a request
(ct_local.storage.requests), and hands it to the worker of the sub-job it targets
(ct_local.dataplane.worker), which runs it on the tiny model. Polls render the stored request with
JSON, a base64 DSSST1 envelope, or result-chunk pages (ct_local.storage.results). Forward-backward
and byte forward requests may arrive as request chunks, reassembled at most once per group
(ct_local.dataplane.chunk_groups). Workers start when a job becomes ``running`` and stop when it
leaves it. Each training sub-job's state is snapshotted after every request that changes it, and
start-up (ct_local.dataplane.recovery) carries every job on from exactly that state, or fails it
visibly, after a graceful stop or a kill alike.

A call may name itself with an ``x-ct-request-id`` header (the SDK does for step, save, load,
forward and weight sync): that id becomes the request id, so a caller whose answer was lost can
look the request up, and the same id sent again answers with the same request instead of running
the call twice.

Generation, weight sync and the prefix-cache operation are checked and queued by
ct_local.dataplane.sampling_plane, router replay by ct_local.dataplane.router_replay; both call the
public methods of this class. What connects the event loop with the workers in memory (stream
events, cancel flags, synced weights, router-replay pairs) belongs to this object, so two servers
in one process never share it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextvars
import json
import logging
import math
import re
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ct_core import wire
from ct_core.fs import atomic_write
from ct_local.control.jobs import optimizer_resize_problem
from ct_local.control.lifecycle import TERMINAL_STATUSES
from ct_local.dataplane import batch_checks, router_replay, sampling_plane
from ct_local.dataplane.boards import SamplingBoards
from ct_local.dataplane.chunk_groups import ChunkGroups, is_request_chunk
from ct_local.dataplane.recovery import CLEAN_SHUTDOWN_KEY, Recovery
from ct_local.dataplane.seam import DataPlane
from ct_local.dataplane.worker import BACKENDS, KINDS_BY_TYPE, BeforeDone, SubJobWorker
from ct_local.http import artifacts, errors
from ct_local.http.context import caller_identity, owner_filter
from ct_local.http.errors import RequestValidationError, ServiceError, invalid_request
from ct_local.state import ServerState
from ct_local.storage import console_logs, results
from ct_local.storage.checkpoint_paths import live_folder, resolve_checkpoint
from ct_local.storage.requests import DataPlaneStore, RequestRow
from ct_local.storage.snapshots import STATE_SNAPSHOT_MAX_BYTES
from ct_local.storage.store import JobRow

log = logging.getLogger(__name__)

# Checkpoint types of a save; resumable is the backend default.
CHECKPOINT_TYPES = ("resumable", "weights-only")
# Operations of sampling sub-jobs that arrive with the sampling backend.
LATER_OPERATIONS = ("weight-sync", "bootstrap-router-replay", "router-replay-discard", "reset-prefix-cache")
ENDED_STATUSES = ("cancelling", *TERMINAL_STATUSES)
#: The header a caller names its call with (ct_core.data.plane sends it).
CLIENT_REQUEST_ID_HEADER = "x-ct-request-id"
_CLIENT_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
# The id named by the request being handled; taken (once) by the request it queues.
_client_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "ct_client_request_id", default=None
)


def _named_request_id(request: Request) -> str | None:
    value = request.headers.get(CLIENT_REQUEST_ID_HEADER)
    if value is None:
        return None
    if not _CLIENT_REQUEST_ID_RE.fullmatch(value):
        raise invalid_request(
            f"the {CLIENT_REQUEST_ID_HEADER} header must be 1 to 128 letters, digits, '.', '_', ':' or '-' "
            "starting with a letter or digit"
        )
    return value


def _json_object(raw: bytes, *, required: bool) -> dict[str, Any]:
    if not raw.strip():
        if required:
            raise RequestValidationError([([], "a JSON body is required")])
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise RequestValidationError([([], f"the body is not valid JSON: {exc}")]) from exc
    if not isinstance(value, dict):
        raise RequestValidationError([([], "the body must be a JSON object")])
    return value


def _learning_rate(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise RequestValidationError([(["learning_rate"], "learning_rate must be a finite number >= 0")])
    return float(value)


class TrainingDataPlane(DataPlane):
    """Data plane with a worker per running sub-job."""

    state: ServerState

    def __init__(self, state: ServerState, *, snapshot_max_bytes: int = STATE_SNAPSHOT_MAX_BYTES) -> None:
        super().__init__(state)
        self.settings = state.settings
        #: Training states above this many bytes are snapshotted at graceful stops only.
        self.snapshot_max_bytes = snapshot_max_bytes
        self.state_dir: Path = state.settings.state_dir
        self.dp = DataPlaneStore(state.store, state.request_signals)
        self.chunks = ChunkGroups(self.dp, self.state_dir)
        self.pages = results.ResultPages(self.settings.result_chunk_max_bytes)
        self.workers: dict[str, SubJobWorker] = {}
        #: Stream events, cancel flags and synced weights shared with this plane's workers.
        self.boards = SamplingBoards(holds=state.faults.holds)
        #: Router-replay pairs bootstrapped on this server.
        self.pairings = router_replay.Pairings()
        #: The vocabulary size of each training sub-job's model, read once (batch_checks).
        self._vocabularies: dict[str, int] = {}
        self._lock = threading.Lock()

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        Recovery(self.state, self.dp, self.state_dir).run()
        for job in self.state.store.jobs_with_status(["running"]):
            self._start_workers(job)

    async def stop(self) -> None:
        with self._lock:
            workers = list(self.workers.values())
            self.workers.clear()
        for worker in workers:
            worker.stop(snapshot=True)
        for worker in workers:
            await asyncio.to_thread(worker.join)
        if not any(worker.alive for worker in workers):
            # Every request in progress finished and every state is written: the next start may
            # run what is still queued.
            self.state.store.set_meta(CLEAN_SHUTDOWN_KEY, "1")

    def on_transition(self, job: JobRow, previous: str) -> None:
        for sub in job.sub_jobs:
            console_logs.append(
                console_logs.log_path(self.state_dir, job.job_id, str(sub["sub_job_id"])),
                f"INFO [{sub['sub_job_id']}] job status {previous} -> {job.status}",
            )
        if job.status == "running":
            self._start_workers(job)
        elif job.status in ENDED_STATUSES:
            self._stop_workers(job)

    def health(self) -> dict[str, Any]:
        """The weights synced to samplers and held for their sub-jobs until their jobs end."""
        return {"synced_weights": self.boards.weights.describe()}

    def _start_workers(self, job: JobRow) -> None:
        for sub in job.sub_jobs:
            factory = BACKENDS.get(str(sub.get("job_type")))
            sub_id = str(sub["sub_job_id"])
            if factory is None:
                continue
            with self._lock:
                if sub_id in self.workers:
                    continue
                worker = SubJobWorker(
                    store=self.state.store,
                    dp=self.dp,
                    state_dir=self.state_dir,
                    job=job,
                    sub_job=sub,
                    factory=factory,
                    store_result=self._store_result,
                    on_backend_failure=self._backend_failed,
                    torch_threads=self.settings.torch_threads,
                    boards=self.boards,
                    eager=self._has_weights_to_load(job, sub),
                    snapshot_max_bytes=self.snapshot_max_bytes,
                )
                self.workers[sub_id] = worker
            worker.start()

    def _has_weights_to_load(self, job: JobRow, sub: dict[str, Any]) -> bool:
        # Loading weights can fail, and should fail the job right away rather than at the first call.
        live = live_folder(self.state_dir, job.job_id, str(sub["sub_job_id"]))
        return bool(sub.get("source_checkpoint_info")) or live.is_dir()

    def _stop_workers(self, job: JobRow) -> None:
        self.dp.cancel_pending(job_id=job.job_id, error=f"the job was {job.status}")
        with self._lock:
            stopping = [self.workers.pop(str(s["sub_job_id"]), None) for s in job.sub_jobs]
        for worker in stopping:
            if worker is not None:
                worker.stop(snapshot=False)
        # Whatever of the job a waiter still waits on now ends here; its status read tells how.
        self.dp.signals.job_finished(job.job_id)
        for sub in job.sub_jobs:
            self.boards.weights.forget(str(sub["sub_job_id"]))

    def _backend_failed(self, job: JobRow, details: str) -> None:
        fresh = self.state.store.get_job(job.job_id)
        if fresh is not None and fresh.status not in TERMINAL_STATUSES:
            self.state.lifecycle.force(fresh, "failed", "initialization_failed", details)

    def _store_result(
        self,
        row: RequestRow,
        result: dict[str, Any],
        options: dict[str, Any],
        before_done: BeforeDone | None = None,
    ) -> None:
        if row.kind in sampling_plane.GENERATE_KINDS:
            fresh = self.dp.get_request(row.request_id)
            if fresh is not None and fresh.status == "cancelled":
                return  # cancelled while running: the row already says so
        folder = self.state_dir / "jobs" / row.job_id / "results"
        delivery, result_json, result_path = results.encode(
            folder, row.request_id, result, options, self.settings.result_chunk_threshold_bytes
        )
        if before_done is not None:
            # The state snapshot goes first: a kill in between leaves a row that start-up finishes.
            before_done({"delivery": delivery, "result_json": result_json, "result_path": result_path})
        if not self.dp.finish_request(
            row.request_id, "done", result_json=result_json, result_path=result_path, delivery=delivery
        ):
            # A cancel-request won the row after the check above: the request stays cancelled.
            if result_path is not None:
                Path(result_path).unlink(missing_ok=True)
            return
        artifacts.record_training_call(self.state, row, result)

    # --- helpers (public ones are used by sampling_plane and router_replay) -------------------

    def require_running(self, job: JobRow) -> None:
        """Data-plane calls need a running job; anything else is refused with its status."""
        if job.status != "running":
            raise errors.not_running(job.job_id, job.status)

    @staticmethod
    def _sub_jobs(job: JobRow, job_type: str) -> list[dict[str, Any]]:
        return [s for s in job.sub_jobs if s.get("job_type") == job_type]

    def _training_sub_job(self, job: JobRow) -> dict[str, Any]:
        found = self._sub_jobs(job, "training")
        if not found:
            raise invalid_request(f"Training job {job.job_id} has no training sub-job")
        return found[0]

    def route_sub_job(
        self, job: JobRow, sub_job_id: Any, sub_job_type: Any, *, default_type: str | None
    ) -> dict[str, Any]:
        """Resolve the optional routing hints of an operation (sub_job_id, sub_job_type) to one sub-job."""
        ids = [str(s["sub_job_id"]) for s in job.sub_jobs]
        if sub_job_id is not None:
            match = [s for s in job.sub_jobs if s["sub_job_id"] == sub_job_id]
            if not match:
                raise ServiceError(
                    404,
                    f"sub-job {sub_job_id} is not part of job {job.job_id}; "
                    f"its sub-jobs are {', '.join(ids)}",
                    404,
                )
            if sub_job_type is not None and match[0].get("job_type") != str(sub_job_type).lower():
                raise invalid_request(f"sub_job_id {sub_job_id} is not a {sub_job_type} sub-job")
            return match[0]
        wanted = str(sub_job_type).lower() if sub_job_type is not None else default_type
        candidates = self._sub_jobs(job, wanted) if wanted is not None else list(job.sub_jobs)
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            raise invalid_request(
                f"job {job.job_id} has no {wanted} sub-job; its sub-jobs are {', '.join(ids)}"
            )
        raise invalid_request(
            f"job {job.job_id} has several sub-jobs; pass sub_job_id, one of {', '.join(ids)}"
        )

    def queue_request(
        self,
        job: JobRow,
        sub_job: dict[str, Any],
        kind: str,
        *,
        params: dict[str, Any] | None = None,
        frame: bytes | None = None,
    ) -> str:
        """Store a request (with its input frame) and hand it to the sub-job's worker; its id.

        The id is the one the caller named (``x-ct-request-id``) when it did; a name already used by
        the same call on the same job answers with that request, which then runs once.
        """
        named = _client_request_id.get()
        _client_request_id.set(None)
        request_id = named or str(uuid.uuid4())
        if named is not None and (existing := self.dp.get_request(named)) is not None:
            return self._same_call(existing, job, kind)
        input_path = self._write_input(job, request_id, frame) if frame is not None else None
        try:
            self.dp.add_request(
                request_id, job.job_id, str(sub_job["sub_job_id"]), kind, params=params, input_path=input_path
            )
        except sqlite3.IntegrityError:
            # The same name arrived twice at once: the other arrival stored it first.
            if input_path is not None:
                Path(input_path).unlink(missing_ok=True)
            existing = self.dp.get_request(request_id)
            if named is None or existing is None:
                raise
            return self._same_call(existing, job, kind)
        self._submit(job, sub_job, request_id)
        return request_id

    @staticmethod
    def _same_call(existing: RequestRow, job: JobRow, kind: str) -> str:
        if existing.job_id != job.job_id or existing.kind != kind:
            raise invalid_request(
                f"the {CLIENT_REQUEST_ID_HEADER} {existing.request_id} already names another request; "
                "name each call with a new id"
            )
        return existing.request_id

    def enqueue(
        self,
        job: JobRow,
        sub_job: dict[str, Any],
        kind: str,
        *,
        params: dict[str, Any] | None = None,
        frame: bytes | None = None,
    ) -> Response:
        """:meth:`queue_request`, answered the way every queued call answers: request and job id."""
        request_id = self.queue_request(job, sub_job, kind, params=params, frame=frame)
        return JSONResponse({"request_id": request_id, "job_id": job.job_id})

    def _write_input(self, job: JobRow, request_id: str, frame: bytes) -> str:
        folder = self.state_dir / "jobs" / job.job_id / "inputs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{request_id}.dss"
        atomic_write(path, frame, durable=False)
        return str(path)

    def _submit(self, job: JobRow, sub_job: dict[str, Any], request_id: str) -> None:
        sub_id = str(sub_job["sub_job_id"])
        with self._lock:
            worker = self.workers.get(sub_id)
        if worker is None:
            self._start_workers(job)  # the worker starts with every pending request, this one included
        else:
            worker.submit(request_id)

    async def read_body(self, request: Request) -> bytes:
        """The raw body, refused with 413 past the server's max_body_bytes."""
        length = request.headers.get("content-length")
        limit = self.settings.max_body_bytes
        if length is not None and length.isdigit() and int(length) > limit:
            raise ServiceError(413, f"the request body is larger than {limit} bytes", 413)
        body = await request.body()
        if len(body) > limit:
            raise ServiceError(413, f"the request body is larger than {limit} bytes", 413)
        return body

    async def schedule_frame(
        self, job: JobRow, sub_job: dict[str, Any], kind: str, frame: bytes, operation: str
    ) -> Response:
        """A whole frame, or one request chunk of it: the frame is scheduled once per chunk group."""
        if not is_request_chunk(frame):
            router_replay.check_replay_descriptor(self.pairings, job, sub_job, frame)
            await self._check_batch(sub_job, frame)
            return self.enqueue(job, sub_job, kind, frame=frame)
        accepted, whole = await asyncio.to_thread(self.chunks.accept, job.job_id, frame, operation=operation)
        last = accepted.chunk_idx == accepted.total_chunks - 1
        if whole is None:
            if last and accepted.request_id is not None:
                # The group ran (or is running) already: answer with its one execution.
                return JSONResponse({"request_id": accepted.request_id, "job_id": job.job_id})
            return JSONResponse(
                {
                    "job_id": job.job_id,
                    "chunk_group_id": accepted.group_id,
                    "chunk_idx": accepted.chunk_idx,
                    "total_chunks": accepted.total_chunks,
                    "received_chunks": accepted.received,
                }
            )
        # The reassembled frame carries the caller's operation metadata (it survives chunking).
        router_replay.check_replay_descriptor(self.pairings, job, sub_job, whole)
        await self._check_batch(sub_job, whole)
        request_id = str(uuid.uuid4())
        input_path = self._write_input(job, request_id, whole)
        claimed, created = self.dp.claim_group(
            job.job_id,
            accepted.group_id,
            {
                "request_id": request_id,
                "sub_job_id": sub_job["sub_job_id"],
                "kind": kind,
                "input_path": input_path,
            },
        )
        if created:
            self.chunks.discard_files(job.job_id, accepted.group_id)
            self._submit(job, sub_job, claimed)
        else:
            Path(input_path).unlink(missing_ok=True)
        return JSONResponse({"request_id": claimed, "job_id": job.job_id})

    async def _check_batch(self, sub_job: dict[str, Any], frame: bytes) -> None:
        """Token ids outside the sub-job's vocabulary are refused here (422), never run."""
        sub_id = str(sub_job["sub_job_id"])
        vocabulary = self._vocabularies.get(sub_id)
        if vocabulary is None:
            vocabulary = await asyncio.to_thread(batch_checks.vocabulary_size, sub_job, self.state.store)
            self._vocabularies[sub_id] = vocabulary
        await asyncio.to_thread(batch_checks.check_token_ids, frame, vocabulary)

    # --- routes -------------------------------------------------------------------------------

    async def handle(self, request: Request, job: JobRow, action: str) -> Response:
        if action == "request-status":
            return self._request_status(request, job)
        _client_request_id.set(_named_request_id(request))
        if action in ("generate", "generate-stream"):
            return await sampling_plane.handle_generate(self, request, job, action)
        if action == "operation":
            return await self._operation(request, job)
        self.require_running(job)
        self.state.store.touch_job(job.job_id, time.time())
        if action == "forward-backward":
            frame = await self.read_body(request)
            return await self.schedule_frame(
                job, self._training_sub_job(job), "forward-backward", frame, "fwd-bwd"
            )
        body = _json_object(await self.read_body(request), required=False)
        if action == "step":
            lr = _learning_rate(body.get("learning_rate"))
            return self.enqueue(job, self._training_sub_job(job), "step", params={"learning_rate": lr})
        if action == "save":
            return self._save(job, body)
        if action == "load":
            return self._load(request, job, body)
        raise errors.not_implemented(action)

    def _save(self, job: JobRow, body: dict[str, Any]) -> Response:
        raw_type = body.get("checkpoint_type")
        checkpoint_type = "resumable"
        if raw_type is not None:
            if not isinstance(raw_type, str) or raw_type.lower() not in CHECKPOINT_TYPES:
                raise RequestValidationError(
                    [(["checkpoint_type"], "checkpoint_type must be 'resumable' or 'weights-only'")]
                )
            checkpoint_type = raw_type.lower()
        sub = self._training_sub_job(job)
        if body.get("checkpoint_id") is not None:
            # The service's save request has no checkpoint_id; say so where the caller can see it.
            console_logs.append(
                console_logs.log_path(self.state_dir, job.job_id, str(sub["sub_job_id"])),
                f"WARNING [{sub['sub_job_id']}] save ignores checkpoint_id {body['checkpoint_id']!r}; "
                "the id is assigned by the server (cp_<uuid>)",
            )
        return self.enqueue(job, sub, "save", params={"checkpoint_type": checkpoint_type})

    def _load(self, request: Request, job: JobRow, body: dict[str, Any]) -> Response:
        checkpoint_id = body.get("checkpoint_id")
        if not isinstance(checkpoint_id, str) or not checkpoint_id:
            raise RequestValidationError([(["checkpoint_id"], "checkpoint_id is required")])
        target = body.get("target_sub_job_id")
        if target is not None:
            match = [s for s in job.sub_jobs if s["sub_job_id"] == target]
            if not match:
                raise invalid_request(f"target_sub_job_id {target} is not a sub-job of job {job.job_id}")
            if match[0].get("job_type") != "training":
                raise errors.ServiceError(
                    501, f"loading into {target} is not supported: it is not a training sub-job", 501
                )
            sub = match[0]
        else:
            sub = self._training_sub_job(job)
        source_job_id = body.get("source_job_id") or job.job_id
        if not isinstance(source_job_id, str):
            raise RequestValidationError([(["source_job_id"], "source_job_id must be a string")])
        if source_job_id != job.job_id:
            self._check_source_job(request, source_job_id)
        row = resolve_checkpoint(self.state.store, source_job_id, checkpoint_id)
        if row is None or not row.path:
            raise ServiceError(
                404,
                f"Checkpoint {checkpoint_id} not found in training job {source_job_id}",
                errors.CODE_JOB_NOT_FOUND,
            )
        source = job if source_job_id == job.job_id else self.state.store.get_job(source_job_id)
        resize = (
            None if source is None else optimizer_resize_problem(sub, str(sub["sub_job_id"]), source, row)
        )
        if resize is not None:
            raise invalid_request(resize)
        return self.enqueue(
            job, sub, "load", params={"checkpoint_id": row.checkpoint_id, "source_job_id": source_job_id}
        )

    def _check_source_job(self, request: Request, source_job_id: str) -> None:
        identity = caller_identity(request)
        owner = owner_filter(request, identity)
        source = self.state.store.get_job(source_job_id)
        if source is None or (owner is not None and source.owner_role != owner):
            raise ServiceError(
                404,
                "Source job was not found or is not authorized for the active roles",
                errors.CODE_JOB_NOT_FOUND,
            )

    def _request_status(self, request: Request, job: JobRow) -> Response:
        request_id = request.path_params["request_id"]
        row = self.dp.get_request(request_id)
        if row is None or row.job_id != job.job_id:
            raise ServiceError(
                404, f"Request {request_id} not found in training job {job.job_id}", errors.CODE_JOB_NOT_FOUND
            )
        query = request.query_params
        max_events = results.parse_max_events(query.get("max_events"))
        body = self.pages.status(row, cursor=query.get("cursor"), max_events=max_events)
        if row.kind == "generate-stream":
            body = sampling_plane.stream_page(self.boards.events, row, body, max_events)
        return JSONResponse(body)

    # --- operations ---------------------------------------------------------------------------

    async def _operation(self, request: Request, job: JobRow) -> Response:
        body = _json_object(await self.read_body(request), required=True)
        operation = body.get("operation_type")
        if not isinstance(operation, str) or not operation:
            raise RequestValidationError([(["operation_type"], "operation_type is required")])
        payload = body.get("payload")
        if payload is None:
            payload = {}
        if not isinstance(payload, dict):
            raise RequestValidationError([(["payload"], "payload must be an object")])
        hints = (body.get("sub_job_id"), body.get("sub_job_type"))
        if operation == "tail-logs":
            return self._tail_logs(job, *hints, payload)
        if operation == "weight-sync":
            return sampling_plane.weight_sync(self, job, *hints, payload)
        if operation == "reset-prefix-cache":
            return sampling_plane.reset_prefix_cache(self, job, *hints, payload)
        if operation == "bootstrap-router-replay":
            return router_replay.bootstrap(self, job, *hints, payload)
        if operation == "router-replay-discard":
            return router_replay.discard(self, job, *hints, payload)
        if operation in LATER_OPERATIONS:
            raise errors.not_implemented(f"the {operation} operation")
        if operation not in ("forward", "cancel-request"):
            raise invalid_request(f"operation_type {operation!r} is not supported by this server")
        self.require_running(job)
        self.state.store.touch_job(job.job_id, time.time())
        if operation == "cancel-request":
            return self._cancel_request(job, payload)
        sub = self.route_sub_job(job, *hints, default_type="training")
        if "forward" not in KINDS_BY_TYPE.get(str(sub.get("job_type")), ()):
            raise invalid_request(f"forward runs on a training sub-job, not on {sub['sub_job_id']}")
        if "payload_b64" in payload:
            try:
                frame = base64.b64decode(str(payload["payload_b64"]), validate=True)
            except (binascii.Error, ValueError) as exc:
                raise RequestValidationError(
                    [(["payload", "payload_b64"], f"not valid base64: {exc}")]
                ) from exc
        else:
            # A dict payload is the model kwargs themselves (token ids as nested lists).
            frame = wire.dumps({"args": (), "kwargs": payload})
        return await self.schedule_frame(job, sub, "forward", frame, "forward")

    def _cancel_request(self, job: JobRow, payload: dict[str, Any]) -> Response:
        request_id = payload.get("request_id")
        if not isinstance(request_id, str) or not request_id:
            raise RequestValidationError([(["payload", "request_id"], "request_id is required")])
        row = self.dp.get_request(request_id)
        if row is None or row.job_id != job.job_id:
            raise ServiceError(
                404, f"Request {request_id} not found in training job {job.job_id}", errors.CODE_JOB_NOT_FOUND
            )
        cancelled = self.dp.cancel_pending(request_id=request_id, error="cancelled by the caller") > 0
        cancelled = cancelled or sampling_plane.cancel_running(self.dp, self.boards.cancels, row)
        fresh = self.dp.get_request(request_id)
        status = fresh.status if fresh is not None else row.status
        return JSONResponse({"request_id": request_id, "cancelled": cancelled, "status": status})

    def _tail_logs(
        self, job: JobRow, sub_job_id: Any, sub_job_type: Any, payload: dict[str, Any]
    ) -> Response:
        sub = self.route_sub_job(job, sub_job_id, sub_job_type, default_type=None)
        if job.status in TERMINAL_STATUSES:
            raise errors.gone(
                f"Training job {job.job_id} is {job.status}; its live logs are gone. "
                "Download the saved console instead."
            )
        if job.status == "pending":
            raise errors.not_running(job.job_id, job.status)
        max_lines = payload.get("max_lines")
        if max_lines is not None and (
            isinstance(max_lines, bool) or not isinstance(max_lines, int) or max_lines < 1
        ):
            raise RequestValidationError([(["payload", "max_lines"], "max_lines must be a positive integer")])
        with self._lock:
            worker = self.workers.get(str(sub["sub_job_id"]))
        eof = job.status == "cancelling" and (worker is None or not worker.alive)
        path = console_logs.log_path(self.state_dir, job.job_id, str(sub["sub_job_id"]))
        try:
            page = console_logs.page(path, cursor=payload.get("cursor"), max_lines=max_lines, eof=eof)
        except console_logs.CursorError as exc:
            raise invalid_request(str(exc)) from exc
        return JSONResponse(page)
