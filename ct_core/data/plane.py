"""The data plane of one client: forward/backward, step, save, load, the generic operations, request
polling and live logs (`DataPlane`; the facade `CortexTrainingClient` forwards to it).

Each method is thin: operation bodies and payloads come from `ct_core.data.operations`, chunk groups
from `ct_core.data.chunk_groups`, polling and result decoding from `ct_core.data.results`, live logs
from `ct_core.data.logs`; every request is one generated operation (`ct_core.operations.data_plane`)
over `Transport.request()`. Nothing here prints; request bodies are logged at DEBUG only, never with
their payload bytes.

Which failures are retried: a forward/backward chunk carries its group id, the server's idempotency
key, so it gets the general retry rule (chunk-group answers excepted: they are answers about the
group, raised at once). A step, save, load, weight sync or unchunked forward has no such key, so it
is retried only when the answer proves nothing ran: a connection that never opened, a redirect,
404/409 while the job becomes visible or its zone restarts, 429 and 503. A read timeout, a broken
connection or a 500/502/504 after such a POST is raised as `RequestOutcomeUnknown`, because
repeating it could apply an optimizer step twice: the call may have been applied. Each such call
carries an id the client made (the `x-ct-request-id` header, the same on every attempt), which the
error names, so the caller can look the call up (`get_request_status`, the training-metrics rows)
before deciding. Polls and reads use the general rule.

Under both rules, a 409 or a 404 517601 that would be retried makes the client read the job once
(`ct_core.data.job_state`): a job that is not running fails the call at once with
`JobNotRunningError`, naming its status, and a 404 for a job that can be read is final.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ct_core import errors
from ct_core.control.polling import normalize_request_status
from ct_core.data import operations as ops
from ct_core.data.chunk_groups import (
    ChunkBody,
    ChunkPlan,
    chunk_predicate,
    upload_chunks,
)
from ct_core.data.job_state import JobStateCheck
from ct_core.data.logs import EndOfJobCheck, stream_entries
from ct_core.data.results import (
    KIND_FORWARD,
    KIND_FORWARD_BACKWARD,
    MAX_TRACKED_REQUESTS,
    decode_event_results,
    poll_until_done,
)
from ct_core.errors import CTConnectionError
from ct_core.http import retry as _retry
from ct_core.ids import checkpoint_id_from_save_result, find_sub_jobs
from ct_core.operations import control_plane, data_plane

if TYPE_CHECKING:
    from ct_core.context import ClientContext
    from ct_core.control.polling import PollSchedule
    from ct_core.data.pipeline import RequestHandle, TrainingPipeline
    from ct_core.operations import models

logger = logging.getLogger("ct_core.dataplane")

CHECKPOINT_TYPES = ("resumable", "weights-only")
_FWD_BWD = "fwd-bwd"
#: The label every DEBUG line of the forward/backward trace starts with.
FWD_BWD_TRACE = "[ct fwd-bwd]"
#: The header naming a call that must run at most once with an id the client made (a uuid4); the
#: local server uses it as the request id, so a call whose answer was lost can be looked up.
CLIENT_REQUEST_ID_HEADER = "x-ct-request-id"


def _client_request_id() -> str:
    """A fresh random (version 4) UUID, spelled as `str(uuid.uuid4())` would, at a fraction of its cost."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def normalize_checkpoint_type(value: Any) -> str:
    """`Weights-Only ` -> `weights-only`; anything but resumable / weights-only is a ValueError."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text not in CHECKPOINT_TYPES:
        raise ValueError("checkpoint_type must be 'resumable' or 'weights-only'")
    return text


def _check_learning_rate(value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"learning_rate must be a finite number >= 0, got {value!r}")
    return float(value)


class DataPlane:
    """forward_backward, step, save, load, the generic operations, request polling and live logs."""

    def __init__(self, ctx: ClientContext) -> None:
        self._ctx = ctx
        self._transport = ctx.transport
        self._requests = ctx.requests
        #: job id -> the sub-job live logs read when none is named (a job's sub-jobs never change).
        self._log_sub_jobs: dict[str, str | None] = {}
        # The debug trace: forward/backward calls are numbered per client, and a submitted call's
        # label is kept (bounded) until its request is polled.
        self._fwd_bwd_calls = itertools.count(1)
        self._traced: OrderedDict[str, str] = OrderedDict()
        self._traced_lock = threading.Lock()

    @property
    def poll_interval(self) -> float:
        return self._ctx.poll.interval

    @property
    def poll_timeout(self) -> float:
        return self._ctx.poll.timeout

    @property
    def poll_backoff_multiplier(self) -> float:
        return self._ctx.poll.multiplier

    @property
    def poll_max_interval(self) -> float:
        return self._ctx.poll.max_interval

    def _poll_schedule(self) -> PollSchedule:
        return self._ctx.poll_schedule()

    def get_job(self, job_id: str) -> dict[str, Any]:
        return self._ctx.get_job(job_id)

    # --- retry rules ---------------------------------------------------------------------------

    def _read_job_once(self, job_id: str) -> dict[str, Any] | None:
        """The job record in one attempt, or None when it cannot be read (see `JobStateCheck`)."""
        try:
            job: Any = control_plane.get_job(self._transport, job_id=job_id, predicate=_retry.never)
        except errors.CTError as error:
            logger.debug("job %s could not be read to explain an answer: %s", job_id, error)
            return None
        return job if isinstance(job, dict) else None

    def _job_state_check(self, job_id: str, rule: _retry.Predicate) -> _retry.Predicate:
        return JobStateCheck(rule, job_id, lambda: self._read_job_once(job_id))

    def general_rule(self, job_id: str) -> _retry.Predicate:
        """The general rule, reading the job once when a 409 or 404 may be about its state."""
        return self._job_state_check(
            job_id, _retry.general(job_id=job_id, recent_jobs=self._transport.recent_jobs)
        )

    def nothing_ran_rule(self, job_id: str) -> _retry.Predicate:
        """Only failures that prove nothing ran (`ct_core.http.retry.nothing_ran`), reading the job
        once as `general_rule` does."""
        return self._job_state_check(
            job_id, _retry.nothing_ran(job_id=job_id, recent_jobs=self._transport.recent_jobs)
        )

    def _once(self, send: Callable[..., Any], job_id: str, what: str, *, body: Any) -> Any:
        """POST a call that must not run twice (`send`: its generated operation), named with a
        fresh client id.

        It is repeated only when the failure proves nothing ran; a failure that leaves that open
        becomes `RequestOutcomeUnknown`, naming the id to look the call up by.
        """
        client_request_id = _client_request_id()
        try:
            return send(
                self._transport,
                job_id=job_id,
                body=body,
                headers={CLIENT_REQUEST_ID_HEADER: client_request_id},
                predicate=self.nothing_ran_rule(job_id),
            )
        except (CTConnectionError, errors.APIError) as error:
            if not errors.outcome_is_unknown(error):
                raise
            raise errors.outcome_unknown(
                error, operation=what, job_id=job_id, client_request_id=client_request_id
            ) from error

    def _operation_once(
        self,
        job_id: str,
        operation_type: str,
        payload: Any,
        *,
        sub_job_id: str | None,
        sub_job_type: str | None,
    ) -> dict[str, Any]:
        body = ops.envelope(operation_type, payload, sub_job_id=sub_job_id, sub_job_type=sub_job_type)
        logger.debug("operation %s job_id=%s sub_job_id=%s", operation_type, job_id, sub_job_id)
        answer = self._once(data_plane.submit_operation, job_id, operation_type, body=body)
        return answer if isinstance(answer, dict) else {}

    @staticmethod
    def _request_id(answer: Any, what: str) -> str:
        request_id = answer.get("request_id") if isinstance(answer, dict) else None
        if not isinstance(request_id, str) or not request_id:
            raise RuntimeError(f"{what} answer carries no request_id: {answer!r}")
        return request_id

    # --- forward/backward ----------------------------------------------------------------------

    def forward_backward(self, job_id: str, data: bytes | bytearray | memoryview) -> str:
        """Submit one DSSST1 frame for a forward plus backward pass; returns the request id to poll.

        The frame always travels as a request-chunk group with a fresh group id (frames over 60 MiB
        become several chunks), so a chunk repeated after a lost answer never runs twice. A lost
        group (`chunk_group_restart_required`) is replayed once from chunk 0; other chunk-group
        answers raise ChunkGroupConflictError, a second loss ChunkGroupRestartError.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(
                "forward_backward data must be DSSST1 frame bytes (see serialize_forward_backward_args)"
            )
        plan = ChunkPlan(
            data, operation=_FWD_BWD, max_bytes=self._ctx.max_request_chunk_bytes, force_chunk=True
        )
        predicate = chunk_predicate(self.general_rule(job_id))
        label = f"{FWD_BWD_TRACE} call={next(self._fwd_bwd_calls)} job_id={job_id}"
        tracing = logger.isEnabledFor(logging.DEBUG)
        logger.debug(
            "%s phase=submit payload_bytes=%d chunks=%d group=%s", label, len(data), len(plan), plan.group_id
        )

        def send(index: int, body: ChunkBody) -> Any:
            trace = f"{label} phase=submit chunk={index + 1}/{len(plan)}" if tracing else None
            return self.post_frame(
                data_plane.forward_backward, job_id, body, predicate=predicate, trace=trace
            )

        answer = upload_chunks(plan, send, operation=_FWD_BWD, group_id=plan.group_id)
        if answer is None:
            raise RuntimeError("fwd-bwd produced no request body")
        request_id = self._request_id(answer, "fwd-bwd")
        self._requests.add(request_id, KIND_FORWARD_BACKWARD)
        if tracing:
            logger.debug("%s phase=submit request_id=%s", label, request_id)
            self._remember_trace(request_id, label)
        return request_id

    def _remember_trace(self, request_id: str, label: str) -> None:
        with self._traced_lock:
            self._traced[request_id] = label
            while len(self._traced) > MAX_TRACKED_REQUESTS:
                self._traced.popitem(last=False)

    def _take_trace(self, request_id: str) -> str | None:
        with self._traced_lock:
            return self._traced.pop(request_id, None)

    def post_frame(
        self,
        send: Callable[..., Any],
        job_id: str,
        body: ChunkBody,
        *,
        predicate: _retry.Predicate,
        trace: str | None = None,
        **query: Any,
    ) -> Any:
        """POST one DSSST1 frame or request chunk with `send`, the generated operation (forward_backward,
        generate, generate_stream); `query` are its query parameters (`sub_job_id=`)."""
        # `body.stream` gives a fresh iterator per attempt: a retry resends the same bytes from their start.
        return send(
            self._transport,
            job_id=job_id,
            content=body.stream,
            length=body.size,
            predicate=predicate,
            trace=trace,
            **query,
        )

    # --- step, save, load ----------------------------------------------------------------------

    def step(self, job_id: str, learning_rate: float | None = None) -> str:
        """Schedule an optimizer step; returns the request id. Without learning_rate the job's own applies."""
        body: models.StepRequest = {}
        if learning_rate is not None:
            body["learning_rate"] = _check_learning_rate(learning_rate)
        return self._request_id(self._once(data_plane.step, job_id, "step", body=body), "step")

    def save(self, job_id: str, checkpoint_id: str | None = None, checkpoint_type: str | None = None) -> str:
        """Schedule a checkpoint save (resumable by default, or weights-only); returns the request id.

        The service assigns the checkpoint id, so `checkpoint_id` is not sent; read the id of
        the finished save with `checkpoint_id_from_save_result(poll_request(...))`.
        """
        body: dict[str, Any] = {}
        if checkpoint_type is not None:
            body["checkpoint_type"] = normalize_checkpoint_type(checkpoint_type)
        if checkpoint_id is not None:
            logger.warning(
                "save(checkpoint_id=%r): the service assigns checkpoint ids and ignores this one, so it is "
                "not sent; take the id from the save result's stage_path (checkpoint_id_from_save_result)",
                checkpoint_id,
            )
        return self._request_id(self._once(data_plane.save, job_id, "save", body=body), "save")

    @staticmethod
    def checkpoint_id_from_save_result(result: dict[str, Any]) -> str:
        """The durable `cp_<uuid>` id of a finished save (its stage_path segment)."""
        return checkpoint_id_from_save_result(result)

    def load(
        self,
        job_id: str,
        checkpoint_id: str,
        source_job_id: str | None = None,
        *,
        target_sub_job_id: str | None = None,
    ) -> str:
        """Load a checkpoint into the job's training sub-job (or `target_sub_job_id`); returns the request id.

        `source_job_id` loads from another job's checkpoints. Changing the data-parallel size needs a
        target created with load_optimizer_states=False.
        """
        if not isinstance(checkpoint_id, str) or not checkpoint_id:
            raise ValueError("load needs a checkpoint_id")
        body: dict[str, Any] = {"checkpoint_id": checkpoint_id}
        body.update(ops.present(("source_job_id", source_job_id), ("target_sub_job_id", target_sub_job_id)))
        return self._request_id(self._once(data_plane.load, job_id, "load", body=body), "load")

    # --- the generic operation envelope (submitOperation) --------------------------------------

    def operation(
        self,
        job_id: str,
        operation_type: str,
        payload: Any = None,
        *,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
        predicate: _retry.Predicate | None = None,
    ) -> dict[str, Any]:
        """POST one generic operation and return the service's answer as is.

        Bytes become `{"payload_b64", "content_type"}`. An answer with a request_id is to be polled.
        """
        body: Any = ops.envelope(operation_type, payload, sub_job_id=sub_job_id, sub_job_type=sub_job_type)
        logger.debug("operation %s job_id=%s sub_job_id=%s", operation_type, job_id, sub_job_id)
        answer: Any = data_plane.submit_operation(
            self._transport,
            job_id=job_id,
            body=body,
            predicate=predicate or self.general_rule(job_id),
        )
        return answer if isinstance(answer, dict) else {}

    def forward(
        self,
        job_id: str,
        payload: dict[str, Any] | bytes | bytearray | memoryview | None = None,
        *,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
    ) -> dict[str, Any]:
        """A forward-only operation; returns the answer (poll its request_id).

        A dict payload is one POST. A DSSST1 frame goes as payload_b64 when its JSON body fits
        CORTEX_TRAINING_FORWARD_OPERATION_MAX_JSON_BYTES (16 MiB by default); a larger one is split
        into request chunks, one POST each, and only the last answer carries the request id. Blob
        results of forward requests submitted here are decoded by poll_request.
        """
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            answer = self._operation_once(
                job_id, ops.OP_FORWARD, payload, sub_job_id=sub_job_id, sub_job_type=sub_job_type
            )
        else:
            answer = self._forward_bytes(job_id, payload, sub_job_id=sub_job_id, sub_job_type=sub_job_type)
        request_id = answer.get("request_id")
        if isinstance(request_id, str) and request_id:
            self._requests.add(request_id, KIND_FORWARD)
        return answer

    fwd = forward
    fwd_no_grad = forward

    def _forward_bytes(
        self,
        job_id: str,
        frame: bytes | bytearray | memoryview,
        *,
        sub_job_id: str | None,
        sub_job_type: str | None,
    ) -> dict[str, Any]:
        ceiling = ops.forward_max_json_bytes()
        hints = {"sub_job_id": sub_job_id, "sub_job_type": sub_job_type}
        if ops.forward_fits(len(frame), ceiling, **hints):
            return self._operation_once(job_id, ops.OP_FORWARD, bytes(frame), **hints)
        plan = ChunkPlan(
            frame,
            operation=ops.OP_FORWARD,
            max_bytes=ops.max_frame_bytes_for(ceiling, **hints),
            force_chunk=True,
        )
        predicate = chunk_predicate(self.general_rule(job_id))

        def send(index: int, body: ChunkBody) -> Any:
            return self.operation(job_id, ops.OP_FORWARD, body.to_bytes(), **hints, predicate=predicate)

        answer = upload_chunks(plan, send, operation=ops.OP_FORWARD, group_id=plan.group_id)
        return answer if isinstance(answer, dict) else {}

    def weight_sync(
        self,
        job_id: str,
        source_sub_job_id: str,
        target_sub_job_ids: Sequence[str] | str,
        *,
        weight_format: str | None = None,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
        bucket_size: int | None = None,
    ) -> Any:
        """Push the training sub-job's weights to sampling sub-jobs; returns the request id to poll.

        Routing defaults to the source training sub-job. weight_format: vllm (server default), hf,
        or lora (both sub-jobs created with matching peft_config). An answer without a request id
        (inline completion) is returned as is.
        """
        payload = ops.weight_sync_payload(
            source_sub_job_id,
            list(target_sub_job_ids) if not isinstance(target_sub_job_ids, str) else target_sub_job_ids,
            weight_format=weight_format,
            bucket_size=bucket_size,
        )
        answer = self._operation_once(
            job_id,
            ops.OP_WEIGHT_SYNC,
            payload,
            sub_job_id=sub_job_id if sub_job_id is not None else source_sub_job_id,
            sub_job_type=sub_job_type if sub_job_type is not None else "training",
        )
        request_id = answer.get("request_id")
        return request_id if isinstance(request_id, str) and request_id else answer

    def bootstrap_router_replay(
        self,
        job_id: str,
        source_sub_job_id: str,
        target_sub_job_id: str,
        *,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
        max_cache_bytes: int | None = None,
    ) -> dict[str, Any]:
        """Pair a sampling sub-job (routing source) with the training sub-job that replays it.

        Returns the answer; poll its request_id when it has one, then read `sampling_job_id`.
        """
        pairing: dict[str, Any] = {
            "source_sub_job_id": source_sub_job_id,
            "target_sub_job_id": target_sub_job_id,
        }
        pairing.update(ops.present(("max_cache_bytes", max_cache_bytes)))
        return self.operation(
            job_id, ops.OP_BOOTSTRAP_ROUTER_REPLAY, pairing, sub_job_id=sub_job_id, sub_job_type=sub_job_type
        )

    def router_replay_discard(
        self,
        job_id: str,
        sample_ids: Sequence[str] | None = None,
        *,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Drop captured routing for sample ids; `extra["sample_ids"]` wins over `sample_ids`."""
        payload = ops.router_replay_discard_payload(sample_ids, extra)
        return self.operation(
            job_id, ops.OP_ROUTER_REPLAY_DISCARD, payload, sub_job_id=sub_job_id, sub_job_type=sub_job_type
        )

    def reset_prefix_cache(
        self,
        job_id: str,
        *,
        drain: bool = True,
        timeout_s: float = 60.0,
        retry_interval_s: float = 0.1,
        extra: dict[str, Any] | None = None,
        sub_job_id: str | None = None,
        sub_job_type: str | None = "sampling",
    ) -> dict[str, Any]:
        """Clear a sampling sub-job's prefix cache; `extra` adds fields and may override drain."""
        payload = ops.reset_prefix_cache_payload(
            drain=drain, timeout_s=timeout_s, retry_interval_s=retry_interval_s, extra=extra
        )
        return self.operation(
            job_id, ops.OP_RESET_PREFIX_CACHE, payload, sub_job_id=sub_job_id, sub_job_type=sub_job_type
        )

    def cancel_request(
        self, job_id: str, request_id: str, *, sub_job_id: str | None = None, sub_job_type: str | None = None
    ) -> dict[str, Any]:
        """Ask the service to cancel a scheduled request; returns its acknowledgement."""
        return self.operation(
            job_id,
            ops.OP_CANCEL_REQUEST,
            {"request_id": request_id},
            sub_job_id=sub_job_id,
            sub_job_type=sub_job_type,
        )

    # --- polling -------------------------------------------------------------------------------

    def _status_page(
        self,
        job_id: str,
        request_id: str,
        *,
        max_events: int | None,
        cursor: str | None,
        trace: str | None = None,
    ) -> Any:
        answer: Any = data_plane.get_request_status(
            self._transport,
            job_id=job_id,
            request_id=request_id,
            max_events=max_events,
            cursor=cursor or None,
            predicate=self.general_rule(job_id),
            trace=trace,
        )
        answer = answer if isinstance(answer, dict) else {}
        if trace is not None:
            logger.debug("%s state=%s", trace, normalize_request_status(answer.get("status")))
        return answer

    def get_request_status(
        self, job_id: str, request_id: str, *, max_events: int | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        """One status page of a request (getRequestStatus): status, result, error, events, next_cursor.

        Streaming-generation events are consumed by reading them (no client cursor brings them back).
        """
        if max_events is not None and (
            isinstance(max_events, bool) or not isinstance(max_events, int) or max_events <= 0
        ):
            raise ValueError("max_events must be a positive integer")
        return decode_event_results(
            self._status_page(job_id, request_id, max_events=max_events, cursor=cursor)
        )

    def poll_request(self, job_id: str, request_id: str) -> Any:
        """Wait for a request to finish and return its decoded result (`{}` when it has none).

        Backs off from poll_interval by poll_backoff_multiplier up to poll_max_interval; raises
        RequestFailedError (a RuntimeError) for failed/cancelled and RequestTimeoutError (a
        TimeoutError) after poll_timeout.
        """
        kind = self._requests.kind(request_id)
        label = self._take_trace(request_id)
        polls = itertools.count(1)

        def page(cursor: str | None) -> Any:
            trace = None
            if label is not None:
                trace = f"{label} phase=poll request_id={request_id} poll={next(polls)}"
            return self._status_page(job_id, request_id, max_events=None, cursor=cursor, trace=trace)

        schedule = self._poll_schedule()
        waiter = self._ctx.request_waiter
        if waiter is not None:
            schedule.until_done = functools.partial(waiter, request_id)
            # The request was just sent: its status is read once the waiter says it may be done.
            schedule.wait()
        try:
            return poll_until_done(
                request_id,
                page,
                schedule,
                kind=kind,
                timeout=self.poll_timeout,
            )
        finally:
            self._requests.discard(request_id)

    # --- pipelining ----------------------------------------------------------------------------

    def pipeline(self, job_id: str, *, workers: int = 0) -> TrainingPipeline:
        """A helper that submits without waiting and hands back a future-like handle per request.

        With `workers` > 0 the handles poll on that many background threads from the moment of submission.
        """
        from ct_core.data.pipeline import TrainingPipeline

        return TrainingPipeline(self, job_id, workers=workers)

    def handle(self, job_id: str, request_id: str) -> RequestHandle:
        """A future-like handle for a submitted request; `.result()` polls it (once)."""
        from ct_core.data.pipeline import RequestHandle

        return RequestHandle(self, job_id, request_id)

    # --- live logs -----------------------------------------------------------------------------

    def tail_logs(
        self,
        job_id: str,
        *,
        max_lines: int | None = None,
        cursor: str | None = None,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
    ) -> dict[str, Any]:
        """One page of live log lines: `{"entries": [{"_raw": ...}], "next_cursor": ..., "eof": ...}`.

        Without a cursor, max_lines gives the newest lines (else the log from its start). Allowed
        while the job is placing. With neither sub_job_id nor sub_job_type, a job with several
        sub-jobs is read from its training sub-job, as `ct logs` does (see `default_log_sub_job`).
        After the job ended this raises LogsUnavailableError at once, pointing at `ct download-log`;
        an unknown sub_job_id raises UnknownSubJobError.
        """
        if sub_job_id is None and sub_job_type is None:
            sub_job_id = self.default_log_sub_job(job_id)
        payload = ops.tail_logs_payload(cursor, max_lines)
        check = EndOfJobCheck(self.get_job, job_id, sub_job_id)
        predicate = _retry.general(job_id=job_id, recent_jobs=self._transport.recent_jobs, final=check)
        return self.operation(
            job_id,
            ops.OP_TAIL_LOGS,
            payload,
            sub_job_id=sub_job_id,
            sub_job_type=sub_job_type,
            predicate=predicate,
        )

    def stream_logs(
        self,
        job_id: str,
        *,
        follow: bool = True,
        cursor: str | None = None,
        max_lines: int | None = None,
        poll_interval: float | None = None,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Yield log entries as they come (a lazy generator; close it to stop).

        follow=False stops once caught up (the first empty page); follow=True keeps polling with
        backoff. Both stop at an empty page with eof: true, and end quietly when the job ends
        after lines were read. With neither sub_job_id nor sub_job_type, a job with several
        sub-jobs is read from its training sub-job (see `default_log_sub_job`).
        """

        def tail(page_cursor: str | None) -> dict[str, Any]:
            return self.tail_logs(
                job_id,
                cursor=page_cursor,
                max_lines=max_lines,
                sub_job_id=sub_job_id,
                sub_job_type=sub_job_type,
            )

        return self._follow_pages(tail, cursor, follow, poll_interval, "entries")

    def default_log_sub_job(self, job_id: str) -> str | None:
        """The sub-job whose live log is read when the caller names none.

        None (the service's own choice) for a job with one sub-job; for a job with several, its
        training sub-job, as `ct logs` chooses, said once per job on the `ct_core.dataplane` logger
        (the service refuses a tail without routing hints then). A job with several sub-jobs and no
        training one gets None too, and the service's answer lists them. The job is read once.
        """
        if job_id in self._log_sub_jobs:
            return self._log_sub_jobs[job_id]
        job = self.get_job(job_id)
        entries = [entry for entry in job.get("sub_jobs") or [] if isinstance(entry, dict)]
        training = find_sub_jobs(job, "training")
        chosen: str | None = None
        if len(entries) > 1 and training:
            chosen = str(training[0].get("sub_job_id"))
            others = ", ".join(str(e.get("sub_job_id")) for e in entries if e.get("sub_job_id") != chosen)
            logger.info(
                "job %s has %d sub-jobs and no sub_job_id was named: reading the training sub-job %s "
                "(pass sub_job_id= for another: %s)",
                job_id,
                len(entries),
                chosen,
                others,
            )
        self._log_sub_jobs[job_id] = chosen
        return chosen

    def _follow_pages(
        self,
        page: Callable[[str | None], dict[str, Any]],
        cursor: str | None,
        follow: bool,
        poll_interval: float | None,
        items_key: str,
    ) -> Iterator[dict[str, Any]]:
        """Pages of a cursor feed (logs or events) as one stream, polled with the client's backoff."""
        interval = self.poll_interval if poll_interval is None else poll_interval
        if not interval > 0:
            raise ValueError("poll_interval must be > 0")
        return stream_entries(
            page,
            cursor=cursor,
            follow=follow,
            interval=interval,
            multiplier=self.poll_backoff_multiplier,
            max_interval=max(self.poll_max_interval, interval),
            sleep=self._ctx.sleep,
            items_key=items_key,
        )

    # --- zone scheduling events: gated, the service refuses them ------------------------------

    def tail_events(
        self,
        job_id: str,
        *,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
        cursor: str | None = None,
        max_events: int | None = None,
    ) -> dict[str, Any]:
        """One page of zone scheduling events: `{"events": [...], "next_cursor": ..., "eof": ...}`.

        Experimental and unusable today: the service does not accept the `zmd-events` operation, so
        this raises ExperimentalFeatureError unless CORTEX_TRAINING_EXPERIMENTAL opts into zone_events.
        """
        from ct_core.config.experimental import ZONE_EVENTS, require_experimental

        require_experimental(ZONE_EVENTS, "tail_events()")
        return self.operation(
            job_id,
            ops.OP_ZONE_EVENTS,
            ops.tail_events_payload(cursor, max_events),
            sub_job_id=sub_job_id,
            sub_job_type=sub_job_type,
        )

    def stream_events(
        self,
        job_id: str,
        *,
        follow: bool = True,
        cursor: str | None = None,
        max_events: int | None = None,
        poll_interval: float | None = None,
        sub_job_id: str | None = None,
        sub_job_type: str | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Yield zone scheduling events page after page, like stream_logs (experimental, see tail_events).

        The opt-in is checked when this is called, not on the first iteration.
        """
        from ct_core.config.experimental import ZONE_EVENTS, require_experimental

        require_experimental(ZONE_EVENTS, "stream_events()")

        def page(page_cursor: str | None) -> dict[str, Any]:
            return self.tail_events(
                job_id,
                cursor=page_cursor,
                max_events=max_events,
                sub_job_id=sub_job_id,
                sub_job_type=sub_job_type,
            )

        return self._follow_pages(page, cursor, follow, poll_interval, "events")
