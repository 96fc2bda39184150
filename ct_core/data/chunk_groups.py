"""Request chunk groups: posting a DSSST1 frame as byte-chunk frames, and the replay-once rule.

A chunk group is one logical request (one forward/backward, one large forward) cut into DSSST1
request-chunk frames (docs/reference/wire.md) that share a `chunk_group_id`. The group id is the
idempotency key of the operation on the server: repeating a chunk of a known group never runs the
work twice. That is what makes it safe for the transport to retry a chunk POST that got no answer or a 5xx.

Chunk-group errors are different: they are answers about the group, not hiccups, so they are never
retried (`chunk_predicate`).

    chunk_group_restart_required  the server lost the incomplete group: resend it once from chunk 0,
                                  the same encoded chunks under the same id
    chunk_group_conflict          the id was reused with other content: never retried
    chunk_group_missing_chunks    the final chunk arrived before the others: never retried

Frames are never copied per chunk: a chunk body is its small frame header followed by a
memoryview of the caller's frame, handed to httpx in slices with an exact Content-Length.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ct_core import constants, errors
from ct_core.errors import iter_error_objects, response_json
from ct_core.http import retry as _retry

logger = logging.getLogger("ct_core.upload")

#: Largest request-chunk frame the service accepts in one POST: 60 MiB (`ct_core.constants`).
MAX_REQUEST_CHUNK_BYTES = constants.MAX_REQUEST_CHUNK_BYTES
#: Bodies are handed to the socket in slices of this size, so no layer builds a chunk-sized copy.
BODY_SLICE_BYTES = 4 * 1024 * 1024

RESTART_REQUIRED = "chunk_group_restart_required"
CONFLICT = "chunk_group_conflict"
MISSING_CHUNKS = "chunk_group_missing_chunks"
CHUNK_GROUP_CODES = frozenset({RESTART_REQUIRED, CONFLICT, MISSING_CHUNKS})
#: The service's wording when a final chunk arrives before the rest of its group.
MISSING_CHUNKS_MESSAGE = "request chunk group is missing chunks"


def chunk_group_detail(error: BaseException) -> dict[str, Any] | None:
    """The error object of a chunk-group failure, with its `code` filled in; None for other errors.

    The body is searched the way every error body is (nested objects, JSON inside strings), since a
    gateway may wrap the service's answer.
    """
    if not isinstance(error, errors.APIError) or error.response is None:
        return None
    body = response_json(error.response)
    for obj in iter_error_objects(body):
        code = obj.get("code", obj.get("error_code"))
        if isinstance(code, str) and code in CHUNK_GROUP_CODES:
            return dict(obj)
        if "chunk_group_id" in obj and obj.get("message") == MISSING_CHUNKS_MESSAGE:
            return {**obj, "code": MISSING_CHUNKS}
    return None


def chunk_group_error(
    error: errors.APIError, detail: dict[str, Any], *, replayed: bool
) -> errors.ChunkGroupError:
    """The ct exception for a chunk-group answer that will not be replayed (again)."""
    code = str(detail.get("code"))
    message = detail.get("message") if isinstance(detail.get("message"), str) else None
    cls: type[errors.ChunkGroupError] = (
        errors.ChunkGroupRestartError if code == RESTART_REQUIRED else errors.ChunkGroupConflictError
    )
    text = message or code
    if code == RESTART_REQUIRED and replayed:
        text = f"{text} (the group was already replayed once from chunk 0)"
    return cls(
        text,
        detail=detail,
        response=error.response,
        status_code=error.status_code,
        code=code,
        request_id=error.request_id,
        server_message=error.server_message,
    )


def chunk_predicate(general: _retry.Predicate) -> _retry.Predicate:
    """The retry rule of one chunk POST: the general rule, but a chunk-group answer is never retried."""

    def predicate(error: BaseException) -> bool:
        if chunk_group_detail(error) is not None:
            return False
        return general(error)

    return predicate


@dataclass(frozen=True)
class ChunkBody:
    """One chunk frame as parts to send in order (a header, then a view of the frame)."""

    parts: tuple[bytes | memoryview, ...]

    @property
    def size(self) -> int:
        return sum(len(part) for part in self.parts)

    def stream(self) -> Iterator[bytes | memoryview]:
        """The body in slices of at most BODY_SLICE_BYTES; a fresh iterator per attempt."""
        for part in self.parts:
            view = memoryview(part)
            for start in range(0, len(view), BODY_SLICE_BYTES):
                yield view[start : start + BODY_SLICE_BYTES]

    def to_bytes(self) -> bytes:
        return b"".join(self.parts)


class ChunkPlan:
    """The request chunks of one frame: hashed and planned once, each chunk built when it is sent.

    Iterating twice yields the same chunks, byte for byte, which is what a replay from chunk 0 needs.
    """

    def __init__(
        self,
        frame: bytes | bytearray | memoryview,
        *,
        operation: str,
        max_bytes: int,
        force_chunk: bool,
        chunk_group_id: str | None = None,
    ) -> None:
        from ct_core.wire import chunks as _wire_chunks

        self.frame = frame
        self._plan = _wire_chunks._plan(
            frame,
            kind="request",
            operation=operation,
            max_bytes=max_bytes,
            chunk_group_id=chunk_group_id,
            force_chunk=force_chunk,
        )

    @property
    def chunked(self) -> bool:
        return self._plan is not None

    @property
    def group_id(self) -> str | None:
        return None if self._plan is None else self._plan.group_id

    def __len__(self) -> int:
        return 1 if self._plan is None else len(self._plan.ranges)

    def body(self, index: int) -> ChunkBody:
        if self._plan is None:
            return ChunkBody((self.frame if isinstance(self.frame, bytes) else bytes(self.frame),))
        from ct_core.wire.format import encode_header

        # The frame's sole tensor is the payload, so the frame is header + payload view, unchanged.
        payload = self._plan._payload(index)
        header = encode_header(self._plan._metadata(index), [payload])
        return ChunkBody((header, payload.data))

    def __iter__(self) -> Iterator[ChunkBody]:
        for index in range(len(self)):
            yield self.body(index)


#: Sends one chunk (its index and body) and returns the decoded JSON answer (None when empty).
SendChunk = Callable[[int, ChunkBody], Any]


def upload_chunks(
    chunks: Iterable[ChunkBody] | ChunkPlan,
    send: SendChunk,
    *,
    operation: str,
    group_id: str | None,
) -> Any:
    """Post every chunk in order and return the final chunk's answer.

    Only the final answer may carry a `request_id`. A `chunk_group_restart_required`
    answer replays the whole group from chunk 0, once; any other chunk-group answer, or a second
    restart, raises. `send` is expected to apply the transport's retry policy with
    `chunk_predicate`, so it raises chunk-group answers at once.
    """
    replayed = False
    bodies: ChunkPlan | list[ChunkBody] = chunks if isinstance(chunks, ChunkPlan) else list(chunks)
    while True:
        try:
            return _send_all(bodies, send, operation=operation)
        except errors.APIError as error:
            detail = chunk_group_detail(error)
            if detail is None:
                raise
            if detail.get("code") == RESTART_REQUIRED and not replayed:
                replayed = True
                logger.warning(
                    "%s chunk group %s lost server state; replaying once from chunk 0", operation, group_id
                )
                continue
            raise chunk_group_error(error, detail, replayed=replayed) from None


def _send_all(bodies: ChunkPlan | list[ChunkBody], send: SendChunk, *, operation: str) -> Any:
    total = len(bodies)
    answer: Any = None
    for index, body in enumerate(bodies):
        answer = send(index, body)
        if index < total - 1 and isinstance(answer, dict) and answer.get("request_id"):
            raise RuntimeError(f"{operation} chunk {index} unexpectedly returned request_id")
    return answer
