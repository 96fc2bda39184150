"""Request-chunk groups on the server side: reassembly, idempotency and the 409 answers.

A request chunk is a DSSST1 frame ``{"payload": uint8[...]}`` whose ``op.request_chunk`` names
its group, index, count, and the whole frame's size and sha256. The rules:

- an unknown group must start at chunk 0; any other first chunk answers 409
  ``chunk_group_restart_required`` (the client replays once from chunk 0);
- a descriptor whose chunk count is above :data:`MAX_TOTAL_CHUNKS`, or above the frame's size in
  bytes (every chunk but the one of an empty frame carries at least one byte), answers 400;
- a known group reused with a different frame hash, size, chunk count, operation, or a different
  payload for an index already received answers 409 ``chunk_group_conflict``;
- the last chunk of a group with holes answers 409 ``chunk_group_missing_chunks``;
- a complete group schedules its work once: repeating the group (after a lost response, or after a
  server restart) returns the request id of that one execution.

Chunks are kept on disk with the job, not with the HTTP connection, so a client may resume after a
restart. Once the frame is assembled the chunk files go; their hashes stay in SQLite.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ct_core import wire
from ct_core.fs import atomic_write
from ct_local.http.errors import ServiceError, invalid_request
from ct_local.storage.requests import ChunkGroupRow, DataPlaneStore

#: At most this many chunks in one group: 4096 chunks of 60 MiB is 240 GiB, far past any frame the
#: local server could hold, and the count bounds what a group's bookkeeping may cost.
MAX_TOTAL_CHUNKS = 4096

CODE_RESTART_REQUIRED = "chunk_group_restart_required"
CODE_CONFLICT = "chunk_group_conflict"
CODE_MISSING_CHUNKS = "chunk_group_missing_chunks"


def chunk_group_error(status: int, code: str, message: str, group_id: str, **extra: Any) -> ServiceError:
    error = ServiceError(status, message, code)
    error.extra = {"chunk_group_id": group_id, **extra}
    return error


@dataclass
class Accepted:
    """The outcome of one chunk POST: a partial group, or the request id of the complete group."""

    group_id: str
    chunk_idx: int
    total_chunks: int
    received: int
    request_id: str | None = None
    created: bool = False


def _descriptor(frame: bytes) -> dict[str, Any] | None:
    desc = wire.read_byte_chunk_metadata(frame)
    if desc is None or desc.get("kind") != "request":
        return None
    return desc


def is_request_chunk(frame: bytes) -> bool:
    return _descriptor(frame) is not None


def _int(desc: dict[str, Any], key: str) -> int:
    value = desc.get(key)
    if type(value) is not int or value < 0:
        raise invalid_request(f"request chunk descriptor field {key!r} must be a non-negative integer")
    return value


def _payload(frame: bytes) -> bytes:
    try:
        value = wire.loads(frame, backend="numpy")
    except wire.WireError as exc:
        raise invalid_request(f"request chunk is not a valid DSSST1 frame: {exc}") from exc
    payload = value.get("payload") if isinstance(value, dict) else None
    if payload is None or getattr(payload, "dtype", None) is None or str(payload.dtype) != "uint8":
        raise invalid_request("request chunk payload must be a 1-D uint8 tensor")
    if payload.ndim != 1:
        raise invalid_request("request chunk payload must be a 1-D uint8 tensor")
    return payload.tobytes()


class ChunkGroups:
    """Accepts request chunks for the jobs of one server."""

    def __init__(self, dp: DataPlaneStore, state_dir: Path) -> None:
        self.dp = dp
        self.state_dir = state_dir
        # Chunks are accepted on worker threads: a copy of a chunk being written and the removal of
        # the folder by the copy that completed the group take turns under this lock.
        self._files = threading.Lock()

    def _folder(self, job_id: str, group_id: str) -> Path:
        # The group id is caller-chosen text: hash it rather than trust it as a file name.
        digest = hashlib.sha256(group_id.encode()).hexdigest()[:32]
        return self.state_dir / "jobs" / job_id / "chunk_groups" / digest

    def accept(self, job_id: str, frame: bytes, *, operation: str) -> tuple[Accepted, bytes | None]:
        """Store one chunk; returns the outcome and, when this chunk completed the group, the frame."""
        desc = _descriptor(frame)
        if desc is None:
            raise invalid_request("the body is not a DSSST1 request chunk")
        group_id = desc.get("chunk_group_id")
        if not isinstance(group_id, str) or not group_id:
            raise invalid_request("request chunk has no chunk_group_id")
        index = _int(desc, "chunk_idx")
        total = _int(desc, "total_chunks")
        size = _int(desc, "frame_size_bytes")
        digest = desc.get("frame_sha256")
        if total > MAX_TOTAL_CHUNKS:
            raise invalid_request(
                f"request chunk descriptor total_chunks {total} is above the limit of {MAX_TOTAL_CHUNKS}"
            )
        if total > max(size, 1):
            raise invalid_request(
                f"request chunk descriptor total_chunks {total} is more than the frame's {size} bytes"
            )
        if total < 1 or index >= total:
            raise invalid_request(f"request chunk index {index} is out of range for {total} chunks")
        if not isinstance(digest, str) or len(digest) != 64:
            raise invalid_request("request chunk frame_sha256 must be a sha256 hex digest")
        chunk_operation = str(desc.get("operation") or operation)
        payload = _payload(frame)
        payload_sha = hashlib.sha256(payload).hexdigest()

        group = self.dp.get_group(job_id, group_id)
        if group is None:
            if index != 0:
                raise chunk_group_error(
                    409,
                    CODE_RESTART_REQUIRED,
                    f"request chunk group {group_id} is unknown to this server; resend it from chunk 0",
                    group_id,
                )
            group = self.dp.add_group(
                ChunkGroupRow(job_id, group_id, chunk_operation, digest, size, total, time.time(), None)
            )
        if (group.frame_sha256, group.frame_size, group.total_chunks, group.operation) != (
            digest,
            size,
            total,
            chunk_operation,
        ):
            raise chunk_group_error(
                409,
                CODE_CONFLICT,
                f"request chunk group {group_id} was already used for a different frame",
                group_id,
            )
        known = self.dp.chunk_hashes(job_id, group_id)
        if index in known:
            if known[index][0] != payload_sha:
                raise chunk_group_error(
                    409,
                    CODE_CONFLICT,
                    f"request chunk {index} of group {group_id} differs from the chunk accepted before",
                    group_id,
                )
        else:
            with self._files:
                fresh = self.dp.get_group(job_id, group_id)
                if fresh is not None and fresh.request_id is not None:
                    # A copy of this chunk that arrived at the same time completed the group, which
                    # is scheduled and its files gone: nothing is left to write.
                    known[index] = (payload_sha, None)
                else:
                    folder = self._folder(job_id, group_id)
                    folder.mkdir(parents=True, exist_ok=True)
                    path = folder / f"{index}.part"
                    atomic_write(path, payload, durable=False)
                    self.dp.add_chunk(job_id, group_id, index, payload_sha, str(path))
                    known[index] = (payload_sha, str(path))

        outcome = Accepted(group_id, index, total, len(known), request_id=group.request_id)
        if index != total - 1:
            return outcome, None
        if group.request_id is not None:
            return outcome, None
        missing = [i for i in range(total) if i not in known]
        if missing:
            raise chunk_group_error(
                409,
                CODE_MISSING_CHUNKS,
                "request chunk group is missing chunks",
                group_id,
                missing=missing[:50],
            )
        whole = self._assemble(job_id, group, known)
        if whole is None:
            # A concurrent final chunk assembled the group and cleared its files: it owns the run.
            fresh = self.dp.get_group(job_id, group_id)
            if fresh is None or fresh.request_id is None:
                raise chunk_group_error(
                    409, CODE_MISSING_CHUNKS, "request chunk group is missing chunks", group_id
                )
            outcome.request_id = fresh.request_id
        return outcome, whole

    def _assemble(
        self, job_id: str, group: ChunkGroupRow, known: dict[int, tuple[str, str | None]]
    ) -> bytes | None:
        parts: list[bytes] = []
        for index in range(group.total_chunks):
            path = known[index][1]
            if path is None:
                return None
            try:
                parts.append(Path(path).read_bytes())
            except FileNotFoundError:
                return None
        frame = b"".join(parts)
        if len(frame) != group.frame_size or hashlib.sha256(frame).hexdigest() != group.frame_sha256:
            raise chunk_group_error(
                409,
                CODE_CONFLICT,
                f"request chunk group {group.group_id} does not reassemble to its frame_sha256",
                group.group_id,
            )
        return frame

    def discard_files(self, job_id: str, group_id: str) -> None:
        with self._files:
            shutil.rmtree(self._folder(job_id, group_id), ignore_errors=True)
