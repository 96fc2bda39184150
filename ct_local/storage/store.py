"""Durable state of the local server: jobs and checkpoints in one SQLite database (WAL).

The database lives at ``<state_dir>/state.sqlite3``. Every write commits at once, so a server
killed at any point restarts with every job, its status and its timestamps. Times are stored as
UNIX seconds and rendered as RFC 3339 UTC by :func:`rfc3339`.

One connection is shared behind a lock: request handlers and the lifecycle loop run on the event
loop thread, and the data-plane workers run in threads, so the lock is what keeps their statements
from interleaving. The data plane keeps its own tables (ct_local.storage.requests) in the same database.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DB_FILENAME = "state.sqlite3"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL UNIQUE,
    database_name TEXT NOT NULL,
    schema_name TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    owner_role TEXT NOT NULL,
    submitted_by TEXT,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    reason_details TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    state_changed_at REAL NOT NULL,
    last_activity_at REAL NOT NULL,
    hardware TEXT NOT NULL,
    gpus INTEGER NOT NULL,
    idle_timeout_seconds INTEGER,
    pending_timeout_seconds INTEGER,
    experiment_name TEXT NOT NULL,
    experiment_run_name TEXT NOT NULL,
    comment TEXT,
    sub_jobs TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_location ON jobs (database_name, schema_name, endpoint);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status);
CREATE TABLE IF NOT EXISTS checkpoints (
    job_id TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    global_steps INTEGER NOT NULL DEFAULT 0,
    avg_loss REAL,
    created_at REAL NOT NULL,
    checkpoint_type TEXT NOT NULL,
    path TEXT,
    PRIMARY KEY (job_id, checkpoint_id)
);
"""


def rfc3339(ts: float) -> str:
    """Render UNIX seconds as an RFC 3339 UTC time with microseconds and a ``Z`` suffix."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class JobRow:
    """One job as stored; :meth:`record` renders the shape of the getJob answer."""

    job_id: str
    database_name: str
    schema_name: str
    endpoint: str
    owner_role: str
    submitted_by: str | None
    status: str
    created_at: float
    updated_at: float
    state_changed_at: float
    last_activity_at: float
    hardware: str
    gpus: int
    experiment_name: str
    experiment_run_name: str
    sub_jobs: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    reason_details: str = ""
    idle_timeout_seconds: int | None = None
    pending_timeout_seconds: int | None = None
    comment: str | None = None
    seq: int = 0

    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "job_id": self.job_id,
            "status": self.status,
            "reason": self.reason,
            "reason_details": self.reason_details,
            "created_at": rfc3339(self.created_at),
            "updated_at": rfc3339(self.updated_at),
            "state_changed_at": rfc3339(self.state_changed_at),
            "submitted_by": self.submitted_by,
            "owner_role": self.owner_role,
            "hardware": self.hardware,
            "comment": self.comment,
            "sub_jobs": [{**sub, "status": self.status} for sub in self.sub_jobs],
        }
        # The timeouts are echoed only when the caller set them.
        if self.idle_timeout_seconds is not None:
            record["idle_timeout_seconds"] = self.idle_timeout_seconds
        if self.pending_timeout_seconds is not None:
            record["pending_timeout_seconds"] = self.pending_timeout_seconds
        return record


@dataclass
class CheckpointRow:
    job_id: str
    checkpoint_id: str
    global_steps: int
    avg_loss: float | None
    created_at: float
    checkpoint_type: str
    path: str | None = None

    def record(self) -> dict[str, Any]:
        return {
            "checkpoint_id": self.checkpoint_id,
            "global_steps": self.global_steps,
            "avg_loss": self.avg_loss,
            "created_at": rfc3339(self.created_at),
            "checkpoint_type": self.checkpoint_type,
        }


_JOB_COLUMNS = (
    "seq, job_id, database_name, schema_name, endpoint, owner_role, submitted_by, status, reason, "
    "reason_details, created_at, updated_at, state_changed_at, last_activity_at, hardware, gpus, "
    "idle_timeout_seconds, pending_timeout_seconds, experiment_name, experiment_run_name, comment, sub_jobs"
)


def _job_from_row(row: sqlite3.Row) -> JobRow:
    values = dict(row)
    values["sub_jobs"] = json.loads(values["sub_jobs"])
    return JobRow(**values)


class Store:
    """SQLite-backed state; every public method is one short transaction."""

    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self.state_dir = state_dir
        self.path = state_dir / DB_FILENAME
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable across process crashes in WAL mode, which is what a restart needs.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=5000")
        # executescript manages its own transaction, so the schema goes in before any BEGIN.
        self._conn.executescript(_SCHEMA)
        with self._tx() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def ensure_schema(self, script: str) -> None:
        """Create more tables (the data plane's) with ``CREATE ... IF NOT EXISTS`` statements."""
        with self._lock:
            self._conn.executescript(script)

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction on the shared connection, for other state modules."""
        return self._tx()

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run a read-only statement under the lock and return every row."""
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # --- meta ---------------------------------------------------------------------------------

    def secret(self, name: str) -> bytes:
        """Return a random per-state-dir secret, created on first use (page-token sealing key)."""
        key = f"secret:{name}"
        with self._tx() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            if row is None:
                value = secrets.token_hex(32)
                conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, value))
                return bytes.fromhex(value)
            return bytes.fromhex(row["value"])

    def get_meta(self, key: str) -> str | None:
        """A value of the ``meta`` table (None when unset)."""
        rows = self.read("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0]["value"]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as conn:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def rotate_secret(self, name: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (f"secret:{name}", secrets.token_hex(32)),
            )

    # --- jobs ---------------------------------------------------------------------------------

    def insert_job(self, job: JobRow) -> JobRow:
        with self._tx() as conn:
            cur = conn.execute(
                f"INSERT INTO jobs ({_JOB_COLUMNS.removeprefix('seq, ')}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job.job_id,
                    job.database_name,
                    job.schema_name,
                    job.endpoint,
                    job.owner_role,
                    job.submitted_by,
                    job.status,
                    job.reason,
                    job.reason_details,
                    job.created_at,
                    job.updated_at,
                    job.state_changed_at,
                    job.last_activity_at,
                    job.hardware,
                    job.gpus,
                    job.idle_timeout_seconds,
                    job.pending_timeout_seconds,
                    job.experiment_name,
                    job.experiment_run_name,
                    job.comment,
                    json.dumps(job.sub_jobs),
                ),
            )
            job.seq = int(cur.lastrowid or 0)
        return job

    def get_job(self, job_id: str) -> JobRow | None:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_JOB_COLUMNS} FROM jobs WHERE job_id = ?", (job_id,)
            ).fetchone()
        return None if row is None else _job_from_row(row)

    def jobs_in(self, database: str, schema: str, endpoint: str, owner_role: str | None) -> list[JobRow]:
        """Jobs of one schema prefix in creation order, optionally only those ``owner_role`` owns."""
        sql = f"SELECT {_JOB_COLUMNS} FROM jobs WHERE database_name = ? AND schema_name = ? AND endpoint = ?"
        params: list[Any] = [database, schema, endpoint]
        if owner_role is not None:
            sql += " AND owner_role = ?"
            params.append(owner_role)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY seq", params).fetchall()
        return [_job_from_row(r) for r in rows]

    def account_jobs(self, endpoint: str, owner_role: str | None, before_seq: int | None) -> Iterator[JobRow]:
        """Jobs of an endpoint across every schema, newest first, starting below ``before_seq``."""
        sql = f"SELECT {_JOB_COLUMNS} FROM jobs WHERE endpoint = ?"
        params: list[Any] = [endpoint]
        if owner_role is not None:
            sql += " AND owner_role = ?"
            params.append(owner_role)
        if before_seq is not None:
            sql += " AND seq < ?"
            params.append(before_seq)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY seq DESC", params).fetchall()
        for row in rows:
            yield _job_from_row(row)

    def jobs_with_status(self, statuses: Iterable[str]) -> list[JobRow]:
        wanted = list(statuses)
        marks = ", ".join("?" for _ in wanted)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_JOB_COLUMNS} FROM jobs WHERE status IN ({marks}) ORDER BY seq", wanted
            ).fetchall()
        return [_job_from_row(r) for r in rows]

    def set_status(
        self,
        job_id: str,
        status: str,
        now: float,
        *,
        reason: str = "",
        reason_details: str = "",
        expect: Sequence[str] | None = None,
    ) -> bool:
        """Move a job to ``status``; with ``expect``, only from one of those statuses (no lost races)."""
        sql = (
            "UPDATE jobs SET status = ?, reason = ?, reason_details = ?, updated_at = ?, "
            "state_changed_at = ?, "
            "last_activity_at = CASE WHEN ? = 'running' THEN ? ELSE last_activity_at END WHERE job_id = ?"
        )
        params: list[Any] = [status, reason, reason_details, now, now, status, now, job_id]
        if expect is not None:
            sql += f" AND status IN ({', '.join('?' for _ in expect)})"
            params.extend(expect)
        with self._tx() as conn:
            return conn.execute(sql, params).rowcount > 0

    def touch_job(self, job_id: str, now: float) -> None:
        """Record data-plane activity, which restarts the idle timeout."""
        with self._tx() as conn:
            conn.execute("UPDATE jobs SET last_activity_at = ? WHERE job_id = ?", (now, job_id))

    # --- checkpoints --------------------------------------------------------------------------

    def add_checkpoint(self, cp: CheckpointRow) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO checkpoints (job_id, checkpoint_id, global_steps, avg_loss, "
                "created_at, checkpoint_type, path) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    cp.job_id,
                    cp.checkpoint_id,
                    cp.global_steps,
                    cp.avg_loss,
                    cp.created_at,
                    cp.checkpoint_type,
                    cp.path,
                ),
            )

    def checkpoints(self, job_id: str) -> list[CheckpointRow]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT * FROM checkpoints WHERE job_id = ? ORDER BY created_at", (job_id,)
            ).fetchall()
        return [CheckpointRow(**dict(r)) for r in rows]

    def get_checkpoint(self, job_id: str, checkpoint_id: str) -> CheckpointRow | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT * FROM checkpoints WHERE job_id = ? AND checkpoint_id = ?", (job_id, checkpoint_id)
            ).fetchone()
        return None if row is None else CheckpointRow(**dict(row))

    def delete_checkpoint(self, job_id: str, checkpoint_id: str) -> bool:
        with self._tx() as conn:
            cur = conn.execute(
                "DELETE FROM checkpoints WHERE job_id = ? AND checkpoint_id = ?", (job_id, checkpoint_id)
            )
            return cur.rowcount > 0
