"""How finished results are kept and delivered by GET /{job_id}/requests/{request_id}.

A result that is plain JSON stays JSON in SQLite. A result holding tensors, or one whose request
frame asked for ``response_options.format = "dssst1"``, is encoded as a DSSST1 frame. Up to the
server's threshold that frame travels base64-encoded in the poll body (the inline envelope, kept
ready in SQLite); above it the frame is kept in a file and the poll answers ``result_chunk``
events, ``max_events`` at a time, with a ``next_cursor`` the client echoes until it is empty.
Chunks are cut the same way on every poll, so a cursor stays valid and a retried poll returns the
same bytes.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from ct_core import wire
from ct_core.fs import atomic_write
from ct_local.http.errors import invalid_request
from ct_local.storage.requests import DELIVERY_CHUNKS, DELIVERY_ENVELOPE, DELIVERY_JSON, RequestRow

# max_events defaults to 16 and is capped at 512.
DEFAULT_MAX_EVENTS = 16
MAX_EVENTS_CAP = 512
CURSOR_PREFIX = "rc-"
# Chunk lists of recently polled results kept in memory, so draining a result does not re-cut it.
_CACHE_ENTRIES = 8


def _has_tensors(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_tensors(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_tensors(v) for v in value)
    return hasattr(value, "dtype") and hasattr(value, "shape")


def encode(
    folder: Path, request_id: str, result: dict[str, Any], response_options: dict[str, Any], threshold: int
) -> tuple[str, str | None, str | None]:
    """Persist ``result``; returns ``(delivery, result_json, result_path)`` for the request row."""
    wants_frame = str(response_options.get("format", "")).lower() == "dssst1"
    if not wants_frame and not _has_tensors(result):
        return DELIVERY_JSON, json.dumps(result), None
    frame = wire.dumps(result)
    inline_only = str(response_options.get("delivery", "")).lower() == "inline"
    if len(frame) <= threshold or inline_only:
        # Small frames stay in SQLite, ready to send: no file per forward-backward.
        return DELIVERY_ENVELOPE, json.dumps(envelope(frame)), None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{request_id}.dss"
    # Written whole under a temporary name, then renamed into place; not fsynced.
    atomic_write(path, frame, durable=False)
    return DELIVERY_CHUNKS, None, str(path)


def envelope(frame: bytes) -> dict[str, Any]:
    """The inline envelope: a DSSST1 frame inside poll JSON."""
    return {
        "content_type": "application/octet-stream",
        "encoding": "base64",
        "wire_format": wire.WIRE_FORMAT_VERSION,
        "payload_b64": base64.b64encode(frame).decode("ascii"),
    }


def parse_max_events(raw: str | None) -> int:
    if raw is None or raw == "":
        return DEFAULT_MAX_EVENTS
    try:
        value = int(raw)
    except ValueError as exc:
        raise invalid_request(f"max_events must be an integer, got {raw!r}") from exc
    if value < 1:
        raise invalid_request("max_events must be at least 1")
    return min(value, MAX_EVENTS_CAP)


def parse_cursor(raw: str | None) -> int:
    if not raw:
        return 0
    try:
        if not raw.startswith(CURSOR_PREFIX):
            raise ValueError(raw)
        value = int(raw.removeprefix(CURSOR_PREFIX))
        if value < 0:
            raise ValueError(raw)
    except ValueError as exc:
        raise invalid_request(f"invalid result cursor {raw!r}") from exc
    return value


class ResultPages:
    """Renders request rows as request-status bodies; caches the chunk lists of large results."""

    def __init__(self, chunk_max_bytes: int) -> None:
        self.chunk_max_bytes = chunk_max_bytes
        # A large result is polled page after page: encode its chunks once, keep the recent ones.
        self._encoded = functools.lru_cache(maxsize=_CACHE_ENTRIES)(self._encode)

    def _encode(self, request_id: str, result_path: str) -> list[dict[str, Any]]:
        frame = Path(result_path).read_bytes()
        return [
            {
                "type": "result_chunk",
                "payload_b64": base64.b64encode(chunk).decode("ascii"),
                "payload_sha256": hashlib.sha256(chunk).hexdigest(),
            }
            for chunk in wire.encode_byte_chunks(
                frame, kind="result", max_bytes=self.chunk_max_bytes, force_chunk=True
            )
        ]

    def _chunk_events(self, row: RequestRow) -> list[dict[str, Any]]:
        return self._encoded(row.request_id, row.result_path or "")

    def status(self, row: RequestRow, *, cursor: str | None, max_events: int) -> dict[str, Any]:
        start = parse_cursor(cursor)
        body: dict[str, Any] = {
            "request_id": row.request_id,
            "status": row.status,
            **row.timestamps(),
            "result": {},
            "error": row.error,
            "events": [],
            "next_cursor": "",
        }
        if row.status != "done":
            return body
        if row.delivery in (DELIVERY_JSON, DELIVERY_ENVELOPE):
            # Both are stored as the JSON to send: the result itself, or its inline envelope.
            body["result"] = json.loads(row.result_json or "{}")
        elif row.delivery == DELIVERY_CHUNKS:
            events = self._chunk_events(row)
            page = events[start : start + max_events]
            end = start + len(page)
            body["events"] = page
            body["next_cursor"] = f"{CURSOR_PREFIX}{end}" if end < len(events) else ""
        return body
