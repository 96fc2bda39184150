"""Durable records of the data plane: requests and request-chunk groups, in the server's SQLite file.

A request row is created when a call is accepted and moves ``pending -> running -> done | failed |
cancelled``. Its input (a reassembled frame) and an encoded result live in files next to
the database; the row points at them, so a restart keeps every finished result and can still run
what was accepted but not started. ``seq`` is the arrival order a sub-job's worker follows.

A chunk-group row binds a caller's ``chunk_group_id`` to one frame (sha256, size, chunk count)
and, once the group is complete, to the one request that executes it: setting that link is
a conditional UPDATE, so two racing final chunks cannot both schedule work.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from ct_local.storage.store import Store, rfc3339

SCHEMA = """
CREATE TABLE IF NOT EXISTS dp_requests (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT NOT NULL UNIQUE,
    job_id TEXT NOT NULL,
    sub_job_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    started_at REAL,
    params TEXT NOT NULL DEFAULT '{}',
    input_path TEXT,
    result_json TEXT,
    result_path TEXT,
    delivery TEXT,
    error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS dp_requests_by_sub_job ON dp_requests (sub_job_id, status, seq);
CREATE INDEX IF NOT EXISTS dp_requests_by_job ON dp_requests (job_id);
CREATE TABLE IF NOT EXISTS dp_chunk_groups (
    job_id TEXT NOT NULL,
    group_id TEXT NOT NULL,
    operation TEXT NOT NULL,
    frame_sha256 TEXT NOT NULL,
    frame_size INTEGER NOT NULL,
    total_chunks INTEGER NOT NULL,
    created_at REAL NOT NULL,
    request_id TEXT,
    PRIMARY KEY (job_id, group_id)
);
CREATE TABLE IF NOT EXISTS dp_chunks (
    job_id TEXT NOT NULL,
    group_id TEXT NOT NULL,
    chunk_idx INTEGER NOT NULL,
    payload_sha256 TEXT NOT NULL,
    path TEXT,
    PRIMARY KEY (job_id, group_id, chunk_idx)
);
"""

_INSERT_REQUEST = (
    "INSERT INTO dp_requests (request_id, job_id, sub_job_id, kind, status, created_at, updated_at, "
    "params, input_path) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)"
)

IN_FLIGHT = ("pending", "running")

# How a finished result is delivered by GET /requests/{id} (JSON, an inline envelope, or chunks).
DELIVERY_JSON = "json"
DELIVERY_ENVELOPE = "envelope"
DELIVERY_CHUNKS = "chunks"


@dataclass
class RequestRow:
    seq: int
    request_id: str
    job_id: str
    sub_job_id: str
    kind: str
    status: str
    created_at: float
    updated_at: float
    started_at: float | None
    params: dict[str, Any]
    input_path: str | None
    result_json: str | None
    result_path: str | None
    delivery: str | None
    error: str

    def timestamps(self) -> dict[str, str]:
        return {"created_at": rfc3339(self.created_at), "updated_at": rfc3339(self.updated_at)}


@dataclass
class ChunkGroupRow:
    job_id: str
    group_id: str
    operation: str
    frame_sha256: str
    frame_size: int
    total_chunks: int
    created_at: float
    request_id: str | None


def _request(row: Any) -> RequestRow:
    values = dict(row)
    values["params"] = json.loads(values["params"] or "{}")
    return RequestRow(**values)


class RequestSignals:
    """In memory, which requests this process accepted and has not finished, so code in the same
    process can wait for one to finish instead of asking over HTTP every few milliseconds.

    ``wait(request_id, timeout_s)`` returns True once the request finished or is not one this
    process knows in flight (then a status read tells), False when ``timeout_s`` passed first. A
    request is marked when its row is inserted and released once a final status is committed, so a
    waiter woken by it always reads that status. Transitions this class is not told of only cost a
    waiter its timeout, never a wrong answer: the status read stays the truth.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: request id -> (job id, the event set when it finishes)
        self._in_flight: dict[str, tuple[str, threading.Event]] = {}

    def accepted(self, request_id: str, job_id: str) -> bool:
        """Mark ``request_id`` in flight; False when it was already (the same name sent twice)."""
        with self._lock:
            if request_id in self._in_flight:
                return False
            self._in_flight[request_id] = (job_id, threading.Event())
            return True

    def finished(self, request_id: str) -> None:
        with self._lock:
            entry = self._in_flight.pop(request_id, None)
        if entry is not None:
            entry[1].set()

    def job_finished(self, job_id: str) -> None:
        """Every request of ``job_id`` this process knows in flight is released (its job ended)."""
        with self._lock:
            ids = [rid for rid, (job, _) in self._in_flight.items() if job == job_id]
            events = [self._in_flight.pop(rid)[1] for rid in ids]
        for event in events:
            event.set()

    def wait(self, request_id: str, timeout_s: float) -> bool:
        with self._lock:
            entry = self._in_flight.get(request_id)
        return True if entry is None else entry[1].wait(max(0.0, timeout_s))

    def __len__(self) -> int:
        with self._lock:
            return len(self._in_flight)


class DataPlaneStore:
    """Request and chunk-group records on top of the shared :class:`Store` connection.

    ``signals`` (optional) is told of every request accepted and finished (see
    :class:`RequestSignals`)."""

    def __init__(self, store: Store, signals: RequestSignals | None = None) -> None:
        self.store = store
        self.signals = signals if signals is not None else RequestSignals()
        store.ensure_schema(SCHEMA)

    # --- requests -----------------------------------------------------------------------------

    def add_request(
        self,
        request_id: str,
        job_id: str,
        sub_job_id: str,
        kind: str,
        *,
        params: dict[str, Any] | None = None,
        input_path: str | None = None,
    ) -> RequestRow:
        now = time.time()
        # Marked before the row exists: a worker may finish the request as soon as it is committed.
        marked = self.signals.accepted(request_id, job_id)
        try:
            with self.store.transaction() as conn:
                conn.execute(
                    _INSERT_REQUEST,
                    (request_id, job_id, sub_job_id, kind, now, now, json.dumps(params or {}), input_path),
                )
        except BaseException:
            # The name was taken (an idempotent retry): the request that holds it keeps its mark.
            if marked:
                self.signals.finished(request_id)
            raise
        row = self.get_request(request_id)
        assert row is not None
        return row

    def get_request(self, request_id: str) -> RequestRow | None:
        rows = self.store.read("SELECT * FROM dp_requests WHERE request_id = ?", (request_id,))
        return _request(rows[0]) if rows else None

    def pending_requests(self, sub_job_id: str) -> list[RequestRow]:
        rows = self.store.read(
            "SELECT * FROM dp_requests WHERE sub_job_id = ? AND status = 'pending' ORDER BY seq",
            (sub_job_id,),
        )
        return [_request(r) for r in rows]

    def start_request(self, request_id: str) -> bool:
        """pending -> running; False when the request is no longer pending (cancelled meanwhile)."""
        now = time.time()
        with self.store.transaction() as conn:
            cur = conn.execute(
                "UPDATE dp_requests SET status = 'running', started_at = ?, updated_at = ? "
                "WHERE request_id = ? AND status = 'pending'",
                (now, now, request_id),
            )
            return cur.rowcount > 0

    def finish_request(
        self,
        request_id: str,
        status: str,
        *,
        result_json: str | None = None,
        result_path: str | None = None,
        delivery: str | None = None,
        error: str = "",
    ) -> bool:
        """running -> ``status``; False when the request no longer runs.

        Only a running request is finished: the worker storing a generation's result and a
        cancel-request of the same generation race for the row, and whichever comes second must
        not overwrite the final status the first one wrote.
        """
        with self.store.transaction() as conn:
            cur = conn.execute(
                "UPDATE dp_requests SET status = ?, result_json = ?, result_path = ?, delivery = ?, "
                "error = ?, updated_at = ?, input_path = NULL WHERE request_id = ? AND status = 'running'",
                (status, result_json, result_path, delivery, error, time.time(), request_id),
            )
            changed = cur.rowcount > 0
        if changed:
            self.signals.finished(request_id)
        return changed

    def cancel_pending(self, *, job_id: str | None = None, request_id: str | None = None, error: str) -> int:
        """Cancel requests that have not started (all of a job's, or one); returns how many."""
        where, params = ("job_id = ?", [job_id]) if job_id is not None else ("request_id = ?", [request_id])
        with self.store.transaction() as conn:
            cur = conn.execute(
                f"UPDATE dp_requests SET status = 'cancelled', error = ?, updated_at = ? "
                f"WHERE {where} AND status = 'pending'",
                [error, time.time(), *params],
            )
            count = cur.rowcount
        if count and request_id is not None:
            self.signals.finished(request_id)
        elif count and job_id is not None:
            self.signals.job_finished(job_id)
        return count

    def with_status(self, status: str) -> list[RequestRow]:
        """Every request in ``status``, in arrival order (start-up reconciliation)."""
        rows = self.store.read("SELECT * FROM dp_requests WHERE status = ? ORDER BY seq", (status,))
        return [_request(r) for r in rows]

    def last_done(self, sub_job_id: str, kinds: tuple[str, ...]) -> RequestRow | None:
        """The newest finished-``done`` request of one of ``kinds`` on a sub-job."""
        marks = ", ".join("?" for _ in kinds)
        rows = self.store.read(
            f"SELECT * FROM dp_requests WHERE sub_job_id = ? AND status = 'done' AND kind IN ({marks}) "
            "ORDER BY seq DESC LIMIT 1",
            (sub_job_id, *kinds),
        )
        return _request(rows[0]) if rows else None

    def done_of_kind(self, job_id: str, kind: str) -> list[RequestRow]:
        rows = self.store.read(
            "SELECT * FROM dp_requests WHERE job_id = ? AND kind = ? AND status = 'done' ORDER BY seq",
            (job_id, kind),
        )
        return [_request(r) for r in rows]

    def fail_unfinished(self, request_id: str, error: str) -> bool:
        """pending or running -> failed with ``error``; False when it had finished already."""
        with self.store.transaction() as conn:
            cur = conn.execute(
                "UPDATE dp_requests SET status = 'failed', error = ?, updated_at = ?, input_path = NULL "
                "WHERE request_id = ? AND status IN ('pending', 'running')",
                (error, time.time(), request_id),
            )
            changed = cur.rowcount > 0
        if changed:
            self.signals.finished(request_id)
        return changed

    def execution_counts(self, job_id: str) -> dict[str, int]:
        """How many requests of each kind a job's workers have started (tests: at-most-once)."""
        rows = self.store.read(
            "SELECT kind, COUNT(*) AS n FROM dp_requests "
            "WHERE job_id = ? AND started_at IS NOT NULL GROUP BY kind",
            (job_id,),
        )
        return {r["kind"]: int(r["n"]) for r in rows}

    # --- chunk groups -------------------------------------------------------------------------

    def get_group(self, job_id: str, group_id: str) -> ChunkGroupRow | None:
        rows = self.store.read(
            "SELECT * FROM dp_chunk_groups WHERE job_id = ? AND group_id = ?", (job_id, group_id)
        )
        return ChunkGroupRow(**dict(rows[0])) if rows else None

    def add_group(self, group: ChunkGroupRow) -> ChunkGroupRow:
        """Insert a new group, or return the one a concurrent first chunk inserted."""
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO dp_chunk_groups (job_id, group_id, operation, frame_sha256, "
                "frame_size, total_chunks, created_at, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                (
                    group.job_id,
                    group.group_id,
                    group.operation,
                    group.frame_sha256,
                    group.frame_size,
                    group.total_chunks,
                    group.created_at,
                ),
            )
        stored = self.get_group(group.job_id, group.group_id)
        assert stored is not None
        return stored

    def chunk_hashes(self, job_id: str, group_id: str) -> dict[int, tuple[str, str | None]]:
        rows = self.store.read(
            "SELECT chunk_idx, payload_sha256, path FROM dp_chunks WHERE job_id = ? AND group_id = ?",
            (job_id, group_id),
        )
        return {int(r["chunk_idx"]): (r["payload_sha256"], r["path"]) for r in rows}

    def add_chunk(self, job_id: str, group_id: str, index: int, payload_sha256: str, path: str) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO dp_chunks (job_id, group_id, chunk_idx, payload_sha256, path) "
                "VALUES (?, ?, ?, ?, ?)",
                (job_id, group_id, index, payload_sha256, path),
            )

    def claim_group(self, job_id: str, group_id: str, request: dict[str, Any]) -> tuple[str, bool]:
        """Link a complete group to a new request unless one is linked already.

        Returns ``(request_id, created)``: the new request when this call scheduled the work, the
        existing one when the group had already been executed or scheduled (at-most-once).
        """
        now = time.time()
        self.signals.accepted(request["request_id"], job_id)
        created = False
        try:
            claimed, created = self._claim_group(job_id, group_id, request, now)
            return claimed, created
        finally:
            # Released unless this call inserted the request (which a worker may have finished already).
            if not created:
                self.signals.finished(request["request_id"])

    def _claim_group(
        self, job_id: str, group_id: str, request: dict[str, Any], now: float
    ) -> tuple[str, bool]:
        with self.store.transaction() as conn:
            cur = conn.execute(
                "UPDATE dp_chunk_groups SET request_id = ? "
                "WHERE job_id = ? AND group_id = ? AND request_id IS NULL",
                (request["request_id"], job_id, group_id),
            )
            if cur.rowcount == 0:
                row = conn.execute(
                    "SELECT request_id FROM dp_chunk_groups WHERE job_id = ? AND group_id = ?",
                    (job_id, group_id),
                ).fetchone()
                return str(row["request_id"]), False
            conn.execute(
                _INSERT_REQUEST,
                (
                    request["request_id"],
                    job_id,
                    request["sub_job_id"],
                    request["kind"],
                    now,
                    now,
                    json.dumps(request.get("params") or {}),
                    request["input_path"],
                ),
            )
            # The chunk files are no longer needed once the frame is assembled; the hashes stay so
            # a replayed chunk is still checked against what was accepted.
            conn.execute(
                "UPDATE dp_chunks SET path = NULL WHERE job_id = ? AND group_id = ?", (job_id, group_id)
            )
            return str(request["request_id"]), True
