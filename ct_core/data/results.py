"""Finishing asynchronous requests: the poll loop, result decoding and request bookkeeping.

`poll_until_done` polls a request (operation getRequestStatus) through a `get_request_status` callable
and reassembles chunked results:

- statuses are normalized (`REQUEST_STATE_DONE` -> done; a missing status is in flight);
- `result_chunk` events are collected across pages, each checked against its `payload_sha256` and
  de-duplicated by chunk index; `next_cursor` is echoed back as `cursor` until the server returns none.
  Pages that bring news are followed at once; a page that brings none (the same cursor again, no new
  chunk) waits like any other poll, so a stuck cursor cannot spin;
- a finished request returns the reassembled result, the decoded DSSST1 envelope, the plain JSON
  result, or `{}` when there is none; the envelope's `metrics` are merged over the payload's (the
  envelope wins on a shared key);
- failed and cancelled requests raise `RequestFailedError`, the deadline `RequestTimeoutError`.

Requests this client submitted are remembered with their kind in a bounded LRU (`RequestRegistry`),
so results get their kind's normalizer (generate -> lists, forward -> decoded blob)
and ids from elsewhere are returned as the server sent them.
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ct_core.control.polling import (
    CANCELLED_REQUEST_STATES,
    SUCCESS_REQUEST_STATES,
    PollSchedule,
    normalize_request_status,
)

# The errors of polling live in ct_core.errors; they are importable from here too.
from ct_core.errors import (  # noqa: F401
    CTError,
    RequestFailedError,
    RequestTimeoutError,
    ResultDecodeError,
)

logger = logging.getLogger("ct_core.results")

#: How many submitted-but-not-yet-polled request ids one client remembers (least recently used
#: ones are dropped).
MAX_TRACKED_REQUESTS = 4096
WIRE_FORMAT = "DSSST1"

KIND_FORWARD_BACKWARD = "fwd-bwd"
KIND_FORWARD = "forward"
KIND_GENERATE = "generate"


class RequestRegistry:
    """Request ids this client minted, with their kind; bounded and thread-safe."""

    def __init__(self, max_entries: int = MAX_TRACKED_REQUESTS) -> None:
        self._max = max_entries
        self._kinds: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, request_id: str, kind: str) -> None:
        with self._lock:
            self._kinds[request_id] = kind
            self._kinds.move_to_end(request_id)
            while len(self._kinds) > self._max:
                self._kinds.popitem(last=False)

    def kind(self, request_id: str) -> str | None:
        with self._lock:
            return self._kinds.get(request_id)

    def discard(self, request_id: str) -> None:
        with self._lock:
            self._kinds.pop(request_id, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._kinds)


# --- decoding ------------------------------------------------------------------------------------


def merge_metrics(decoded: dict[str, Any], envelope: Any) -> dict[str, Any]:
    """Shallow-merge the envelope's `metrics` into the decoded result's; the envelope wins."""
    outer = envelope.get("metrics") if isinstance(envelope, dict) else None
    if not isinstance(outer, dict):
        return decoded
    inner = decoded.get("metrics")
    decoded["metrics"] = {**(inner if isinstance(inner, dict) else {}), **outer}
    return decoded


def decode_envelope(result: dict[str, Any]) -> dict[str, Any]:
    """Decode a base64 DSSST1 result envelope and merge its metrics over the payload's."""
    from ct_core import wire

    encoding = result.get("encoding", "base64")
    if encoding != "base64":
        raise ResultDecodeError("DSSST1 result payload must use base64 encoding")
    payload = result.get("payload_b64")
    if not payload or not isinstance(payload, str):
        raise ResultDecodeError("DSSST1 result payload missing payload_b64")
    try:
        frame = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ResultDecodeError(f"DSSST1 result payload is not valid base64: {exc}") from None
    decoded = wire.loads(frame)
    if not isinstance(decoded, dict):
        raise ResultDecodeError("DSSST1 result payload did not decode to a dict")
    return merge_metrics(decoded, result)


def is_dssst1_envelope(result: Any) -> bool:
    return isinstance(result, dict) and result.get("wire_format") == WIRE_FORMAT


def tensors_to_lists(value: Any) -> Any:
    """Tensors and arrays anywhere in `value` become nested Python lists."""
    if isinstance(value, dict):
        return {key: tensors_to_lists(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [tensors_to_lists(item) for item in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and hasattr(value, "shape"):
        return tolist()
    return value


def finish_result(result: Any, kind: str | None) -> Any:
    """The value poll_request returns for a successful terminal result."""
    if result is None:
        return {}
    if is_dssst1_envelope(result):
        result = decode_envelope(result)
    elif kind == KIND_FORWARD and isinstance(result, dict) and result.get("payload_b64"):
        # A forward result carries its blob without wire_format; only ours are known to be DSSST1.
        result = decode_envelope(result)
    if kind == KIND_GENERATE and isinstance(result, dict) and "results" in result:
        result["results"] = tensors_to_lists(result["results"])
    return result


def decode_event_results(status: dict[str, Any]) -> dict[str, Any]:
    """Streaming `result` events whose result is a DSSST1 envelope are decoded, tensors as lists."""
    events = status.get("events")
    if not isinstance(events, list):
        return status
    for event in events:
        if (
            isinstance(event, dict)
            and event.get("type") == "result"
            and is_dssst1_envelope(event.get("result"))
        ):
            event["result"] = tensors_to_lists(decode_envelope(event["result"]))
    return status


class ResultChunks:
    """Result chunk frames gathered across poll pages, checked and keyed by chunk index."""

    def __init__(self) -> None:
        self._frames: dict[int, bytes] = {}
        self._extra: list[bytes] = []

    def __bool__(self) -> bool:
        return bool(self._frames or self._extra)

    def add_events(self, events: Any) -> int:
        """Take the `result_chunk` events of one page; returns how many were new."""
        if not isinstance(events, list) or not events:
            return 0
        from ct_core import wire

        added = 0
        for event in events:
            if not isinstance(event, dict) or event.get("type") != "result_chunk":
                continue
            payload = event.get("payload_b64")
            if not payload:
                raise ResultDecodeError("result_chunk event missing payload_b64")
            try:
                frame = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ResultDecodeError(f"result_chunk payload is not valid base64: {exc}") from None
            expected = event.get("payload_sha256")
            import hashlib  # loads with the first chunked result, not with every command line

            if expected is None:
                logger.debug("result_chunk event without payload_sha256; accepted unchecked")
            elif hashlib.sha256(frame).hexdigest() != str(expected).lower():
                raise ResultDecodeError("result_chunk payload_sha256 mismatch")
            desc = wire.read_byte_chunk_metadata(frame)
            index = desc.get("chunk_idx") if isinstance(desc, dict) else None
            if isinstance(index, int):
                if index not in self._frames:
                    self._frames[index] = frame
                    added += 1
            else:
                # Not a chunk frame: decode_result_chunks will refuse it with a precise message.
                self._extra.append(frame)
                added += 1
        return added

    def decode(self) -> Any:
        from ct_core import wire

        frames = [self._frames[index] for index in sorted(self._frames)] + self._extra
        return wire.decode_result_chunks(frames)


# --- the poll loop -------------------------------------------------------------------------------

#: Fetches one status page: (cursor or None) -> the status dict.
FetchStatus = Callable[[str | None], dict[str, Any]]


def poll_until_done(
    request_id: str,
    fetch: FetchStatus,
    schedule: PollSchedule,
    *,
    kind: str | None,
    timeout: float,
) -> Any:
    """Poll until the request finishes; return its decoded result or raise."""
    chunks = ResultChunks()
    cursor: str | None = None
    while True:
        status = fetch(cursor)
        status = status if isinstance(status, dict) else {}
        added = chunks.add_events(status.get("events"))
        state = normalize_request_status(status.get("status"))
        next_cursor = status.get("next_cursor") or None
        progressed = added > 0 or (next_cursor is not None and next_cursor != cursor)
        if next_cursor is not None:
            cursor = next_cursor
        draining = next_cursor is not None or (added > 0 and state not in SUCCESS_REQUEST_STATES)
        if state in SUCCESS_REQUEST_STATES and not draining:
            result = status.get("result")
            if chunks:
                decoded = chunks.decode()
                if isinstance(decoded, dict):
                    decoded = merge_metrics(decoded, result)
                return finish_result(decoded, kind)
            return finish_result(result, kind)
        if state == "failed" or state in CANCELLED_REQUEST_STATES:
            raise RequestFailedError(request_id, state, status.get("error"))
        if schedule.expired():
            raise RequestTimeoutError(request_id, timeout)
        if draining and progressed:
            continue
        schedule.wait()
