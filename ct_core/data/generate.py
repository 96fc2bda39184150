"""Generation on sampling sub-jobs (operations generate, generateStream): both calls, stream events.

Owns the client side of the logical generate request: reading `prompts` (strings, token-id lists, a
flat list or 1-D array as one prompt), checking pre-tokenized prompts against the max_seq_len of the
*sampling* sub-job (not whatever sub-job first carries an inference_config), packing token ids
as int32 tensors in the DSSST1 frame (int64 for a prompt that needs it; JSON lists when
CORTEX_TRAINING_DISABLE_TENSOR_PROMPTS is set), and sending the frame: `generate` unwrapped when it fits
and as request chunks above 60 MiB, `generate_stream` as one frame only (never chunked), refused above 60 MiB.

`Generation` is one part of a client (the facade forwards to it); it posts through the client's
`DataPlane` and reads sampling windows with the context's `get_job`.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ct_core.control.polling import CANCELLED_REQUEST_STATES, SUCCESS_REQUEST_STATES, normalize_request_status
from ct_core.data.chunk_groups import (
    MAX_REQUEST_CHUNK_BYTES,
    ChunkBody,
    ChunkPlan,
    chunk_predicate,
    upload_chunks,
)
from ct_core.data.results import KIND_GENERATE, RequestFailedError, RequestTimeoutError
from ct_core.operations import data_plane

if TYPE_CHECKING:
    from ct_core.context import ClientContext
    from ct_core.data.plane import DataPlane

#: Setting this to a truthy value sends token ids as JSON lists inside the frame.
DISABLE_TENSOR_PROMPTS_ENV = "CORTEX_TRAINING_DISABLE_TENSOR_PROMPTS"
_TRUTHY = frozenset({"1", "true", "yes", "on"})
#: A streaming frame is never chunked; this is the largest one the service takes.
MAX_STREAM_FRAME_BYTES = MAX_REQUEST_CHUNK_BYTES
#: Events asked for per poll by `iter_generate_events` (the server's default is 16, its cap 512).
DEFAULT_STREAM_MAX_EVENTS = 64
#: Sampling windows remembered per client, so a request does not re-read its job; bounded, least
#: recently used ones are dropped.
MAX_CACHED_WINDOWS = 256
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_MIB = 1024 * 1024
#: Response options of the reference client: DSSST1 results, chunked when large.
_RESPONSE_OPTIONS = {"response_options": {"format": "dssst1", "delivery": "chunked"}}


def tensor_prompts_enabled() -> bool:
    return os.environ.get(DISABLE_TENSOR_PROMPTS_ENV, "").strip().lower() not in _TRUTHY


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "tolist")


def _is_token_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _token_array(prompt: Any, index: int) -> Any:
    """One pre-tokenized prompt as a 1-D numpy array: int32 when every id fits, else int64.

    A Python list goes through the stdlib `array` constructor, one C loop that refuses floats and
    out-of-range ids by itself, and numpy wraps its buffer without copying.
    """
    import array

    import numpy as np

    if _is_array(prompt):
        if len(prompt.shape) != 1:
            raise ValueError(f"prompt {index} is a {len(prompt.shape)}-D tensor; a prompt tensor must be 1-D")
        values = np.asarray(prompt)
        if values.dtype.kind not in "iu":
            raise TypeError(f"prompt {index} must hold int token ids, not {values.dtype}")
    elif isinstance(prompt, Sequence) and not isinstance(prompt, str | bytes):
        try:
            values = np.frombuffer(array.array("i", prompt), dtype=np.int32)
        except OverflowError:
            try:
                values = np.frombuffer(array.array("q", prompt), dtype=np.int64)
            except OverflowError as exc:
                raise TypeError(f"prompt {index} holds a token id outside int64") from exc
        except TypeError as exc:
            raise TypeError(f"prompt {index} must be a string or a list of int token ids") from exc
    else:
        raise TypeError(f"prompt {index} must be a string or a list of int token ids")
    if values.size == 0:
        raise ValueError(f"prompt {index} is empty")
    return values


def normalize_prompts(prompts: Any) -> list[Any]:
    """A flat int list or a 1-D array is one prompt; otherwise a list of prompts.

    Returns strings as they are and token prompts as 1-D integer numpy arrays.
    """
    if isinstance(prompts, str):
        raise TypeError("prompts must be a list (wrap a single string prompt in a list)")
    if _is_array(prompts) or (
        isinstance(prompts, Sequence) and prompts and all(_is_token_id(t) for t in prompts)
    ):
        prompts = [prompts]
    if not isinstance(prompts, Sequence) or not prompts:
        raise ValueError("prompts must be a non-empty list of strings and/or token-id lists")
    return [p if isinstance(p, str) else _token_array(p, i) for i, p in enumerate(prompts)]


def _aligned(value: Any, count: int, name: str) -> None:
    if isinstance(value, list) and len(value) != count:
        raise ValueError(
            f"{name} has {len(value)} entries for {count} prompts; pass one value or one per prompt"
        )


def _pack(prompt: Any, tensors: bool) -> Any:
    if isinstance(prompt, str):
        return prompt
    if not _is_array(prompt):
        prompt = _token_array(prompt, 0)
    if not tensors:
        return prompt.tolist()
    import numpy as np

    if prompt.dtype == np.int32:
        return prompt
    fits = int(prompt.min()) >= _INT32_MIN and int(prompt.max()) <= _INT32_MAX
    # int64 only for a prompt that needs it, which doubles just that prompt's size.
    return prompt.astype(np.int32) if fits else prompt.astype(np.int64, copy=False)


def build_logical_request(
    prompts: list[Any],
    sampling_params: Any,
    routing_key: Any,
    strict: bool | None,
    *,
    tensors: bool,
) -> dict[str, Any]:
    """The logical generate request, prompts packed for the frame."""
    _aligned(sampling_params, len(prompts), "sampling_params")
    _aligned(routing_key, len(prompts), "routing_key")
    body: dict[str, Any] = {"prompts": [_pack(p, tensors) for p in prompts]}
    if sampling_params is not None:
        body["sampling_params"] = sampling_params
    if routing_key is not None:
        body["routing_key"] = routing_key
    if strict is not None:
        body["strict"] = strict
    return body


def oversized_stream_message(size: int, limit: int = MAX_STREAM_FRAME_BYTES) -> str:
    """The service's exact text for a streaming frame over the limit (sizes in MiB, written "MB")."""
    return (
        f"generate_stream payload is {size / _MIB:.1f} MB, which exceeds the maximum allowed size of "
        f"{limit / _MIB:.0f} MB. Reduce the number of prompts or shorten each prompt to "
        "bring the serialized request under the limit."
    )


def sampling_max_seq_len(job: dict[str, Any], sub_job_id: str | None) -> int | None:
    """The window of the sampling sub-job the request goes to (the named one, else the first)."""
    for sub in job.get("sub_jobs") or []:
        if not isinstance(sub, dict) or str(sub.get("job_type", "")).lower() != "sampling":
            continue
        if sub_job_id is not None and sub.get("sub_job_id") != sub_job_id:
            continue
        config = sub.get("inference_config")
        raw = config.get("max_seq_len") if isinstance(config, dict) else None
        # Numbers may arrive as floats (2048.0) from the service's proto-backed JSON.
        if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0:
            return int(raw)
        return None
    return None


class Generation:
    """generate / generate_stream / iter_generate_events of one client (the facade forwards to it)."""

    def __init__(self, ctx: ClientContext, data: DataPlane) -> None:
        self._ctx = ctx
        self._data = data
        self._requests = ctx.requests
        # Sampling windows of recent (job, sub-job) pairs. A failed lookup raises inside the cached
        # function, so it is not remembered: the next call looks again.
        self._windows = functools.lru_cache(maxsize=MAX_CACHED_WINDOWS)(self._lookup_window)

    def _lookup_window(self, job_id: str, sub_job_id: str | None) -> int | None:
        return sampling_max_seq_len(self._ctx.get_job(job_id), sub_job_id)

    def _sampling_window(self, job_id: str, sub_job_id: str | None) -> int | None:
        try:
            return self._windows(job_id, sub_job_id)
        except Exception:
            # The request itself reports a real problem; the check is only skipped.
            return None

    def _check_lengths(self, what: str, job_id: str, prompts: list[Any], sub_job_id: str | None) -> None:
        if all(isinstance(p, str) for p in prompts):
            return  # the server's tokenizer checks string prompts
        window = self._sampling_window(job_id, sub_job_id)
        if window is None:
            return
        for i, prompt in enumerate(prompts):
            if not isinstance(prompt, str) and len(prompt) >= window:
                # This text is kept word for word (the service's own wording of the vLLM rule).
                raise ValueError(
                    f"{what} prompt at index {i} has {len(prompt)} tokens, which does not fit the sampling "
                    f"job's max_seq_len of {window}: a prompt must be shorter than max_seq_len to leave "
                    "room for at least one generated token (vLLM rejects len(prompt) >= max_model_len). "
                    f"Shorten the prompt to at most {window - 1} tokens, or recreate the job with a "
                    "larger max_seq_len."
                )

    def _generate_frame(
        self,
        what: str,
        job_id: str,
        prompts: Any,
        sampling_params: Any,
        routing_key: Any,
        strict: bool | None,
        sub_job_id: str | None,
    ) -> bytes:
        from ct_core import wire

        normalized = normalize_prompts(prompts)
        self._check_lengths(what, job_id, normalized, sub_job_id)
        logical = build_logical_request(
            normalized, sampling_params, routing_key, strict, tensors=tensor_prompts_enabled()
        )
        return wire.dumps(logical, metadata=_RESPONSE_OPTIONS)

    # --- public methods ------------------------------------------------------------------------------

    def generate(
        self,
        job_id: str,
        prompts: Any,
        sampling_params: dict[str, Any] | list[dict[str, Any] | None] | None = None,
        routing_key: str | list[str | None] | None = None,
        strict: bool | None = None,
        sub_job_id: str | None = None,
    ) -> str:
        """Submit prompts to a sampling sub-job; returns the request id for `poll_request`.

        `prompts`: strings and/or token-id lists (a flat int list or a 1-D tensor is one prompt).
        `sampling_params` and `routing_key`: one value for all prompts or a list aligned with them.
        `sub_job_id` picks the sampling sub-job when the job has several. Token-id prompts must be
        shorter than the sampling sub-job's max_seq_len (checked here, ValueError).
        """
        frame = self._generate_frame(
            "generate", job_id, prompts, sampling_params, routing_key, strict, sub_job_id
        )
        plan = ChunkPlan(
            frame, operation="generate", max_bytes=self._ctx.max_request_chunk_bytes, force_chunk=False
        )
        # One unwrapped frame may be resent only when it surely did not run; chunks are idempotent.
        data = self._data
        predicate = (
            chunk_predicate(data.general_rule(job_id)) if plan.chunked else data.nothing_ran_rule(job_id)
        )
        sub_job = sub_job_id or None

        def send(index: int, body: ChunkBody) -> Any:
            return data.post_frame(data_plane.generate, job_id, body, predicate=predicate, sub_job_id=sub_job)

        answer = upload_chunks(plan, send, operation="generate", group_id=plan.group_id)
        request_id = answer.get("request_id") if isinstance(answer, dict) else None
        if not isinstance(request_id, str) or not request_id:
            raise RuntimeError(f"generate answer carries no request_id: {answer!r}")
        self._requests.add(request_id, KIND_GENERATE)
        return request_id

    def generate_stream(
        self,
        job_id: str,
        prompts: Any,
        sampling_params: dict[str, Any] | list[dict[str, Any] | None] | None = None,
        routing_key: str | list[str | None] | None = None,
        strict: bool | None = None,
        sub_job_id: str | None = None,
    ) -> dict[str, Any]:
        """Start a streaming generation; returns `{"request_id", "job_id", "count"}`.

        Same fields as `generate`. The frame goes in one POST and may not exceed 60 MiB. Read the
        events with `iter_generate_events` (or `get_request_status(..., max_events=...)`).
        """
        frame = self._generate_frame(
            "generate_stream", job_id, prompts, sampling_params, routing_key, strict, sub_job_id
        )
        # A stream travels as one frame, so the request-chunk limit is its limit.
        limit = self._ctx.max_request_chunk_bytes
        if len(frame) > limit:
            raise ValueError(oversized_stream_message(len(frame), limit))
        answer = self._data.post_frame(
            data_plane.generate_stream,
            job_id,
            ChunkBody((frame,)),
            predicate=self._data.nothing_ran_rule(job_id),
            sub_job_id=sub_job_id or None,
        )
        if not isinstance(answer, dict) or not answer.get("request_id"):
            raise RuntimeError(f"generate-stream answer carries no request_id: {answer!r}")
        return answer

    def iter_generate_events(
        self, job_id: str, request_id: str, *, max_events: int = DEFAULT_STREAM_MAX_EVENTS
    ) -> Iterator[dict[str, Any]]:
        """Yield the result / error / done events of a streaming generation, ending after `done`.

        Each poll consumes the events it returns. Ends quietly when the request is done and
        drained even if the done event went to another reader; raises RequestFailedError when the
        request fails or is cancelled without a done event, RequestTimeoutError after poll_timeout.
        """
        deadline = time.monotonic() + self._ctx.poll.timeout
        while True:
            page = self._data.get_request_status(job_id, request_id, max_events=max_events)
            events = page.get("events") or []
            for event in events:
                yield event
                if isinstance(event, dict) and event.get("type") == "done":
                    return
            if events:
                continue  # more may be waiting already
            state = normalize_request_status(page.get("status"))
            if state in SUCCESS_REQUEST_STATES:
                # Finished and drained, yet no done event here: an earlier poll (ours or another
                # reader's) took it. Nothing more will come, so waiting on would only hit the deadline.
                return
            if state == "failed" or state in CANCELLED_REQUEST_STATES:
                raise RequestFailedError(request_id, state, page.get("error"))
            if time.monotonic() >= deadline:
                raise RequestTimeoutError(request_id, self._ctx.poll.timeout)
            self._ctx.sleep(self._ctx.poll.interval)
