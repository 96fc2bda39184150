"""Kept artifact sessions with a fake Connector session over a real stage tree."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from ct_core import CortexTrainingClient
from ct_core.downloads.chunks import STDOUT, ChunkDownload
from ct_core.downloads.sessions import IDLE_LIMIT_S, MAX_KEPT_PER_LOCATION, SessionPool
from ct_core.downloads.snowflake_store import SnowflakeArtifactStore

RUN = {"experiment_name": "DB.SCHEMA.EXP", "experiment_run_name": "RUN_1"}
JOB = "job-1"
LOCATION = ("DB", "SCHEMA")


class _Logins:
    """Hands out fake sessions: each login is a new FakeConnection over the same tree."""

    def __init__(self, make: Any) -> None:
        self.make = make
        self.sessions: list[Any] = []

    def __call__(self) -> Any:
        session = self.make()
        self.sessions.append(session)
        return session


@pytest.fixture
def logins(fake_connection: Any) -> _Logins:
    from dataclasses import replace

    folder = fake_connection.tree / "_stdout" / f"{JOB}:training:0"
    folder.mkdir(parents=True)
    (folder / "console.20260101-000000.a.gz").write_bytes(gzip.compress(b"hello\n"))
    return _Logins(lambda: replace(fake_connection, statements=[], closed=False))


def _download(pool: SessionPool, logins: _Logins, out: Path) -> SnowflakeArtifactStore:
    store = SnowflakeArtifactStore(logins, RUN, pool=pool, location=LOCATION)
    ok = False
    try:
        ChunkDownload(store, JOB, out, STDOUT).run()
        ok = True
    finally:
        store.close(keep=ok)
    return store


def test_successful_download_keeps_its_session_only_when_asked(logins: _Logins, tmp_path: Path) -> None:
    pool = SessionPool()
    _download(pool, logins, tmp_path / "a")
    assert len(logins.sessions) == 1 and logins.sessions[0].closed
    pool.keep = True
    _download(pool, logins, tmp_path / "b")
    _download(pool, logins, tmp_path / "c")
    # The third download reused the second's session: no new login.
    assert len(logins.sessions) == 2 and not logins.sessions[1].closed
    pool.close_all()
    assert logins.sessions[1].closed


def test_failed_download_closes_its_session(logins: _Logins, tmp_path: Path) -> None:
    pool = SessionPool()
    pool.keep = True
    store = SnowflakeArtifactStore(logins, RUN, pool=pool, location=LOCATION)
    store.list("_stdout")
    store.close(keep=False)
    assert logins.sessions[0].closed and not pool.has(LOCATION)


def test_closed_or_idle_sessions_are_never_handed_out(logins: _Logins) -> None:
    now = [0.0]
    pool = SessionPool(clock=lambda: now[0])
    pool.keep = True
    first, second = logins(), logins()
    pool.give_back(LOCATION, first)
    first.closed = True
    assert pool.take(LOCATION) is None
    pool.give_back(LOCATION, second)
    now[0] += IDLE_LIMIT_S + 1
    assert pool.take(LOCATION) is None and second.closed


def test_at_most_two_sessions_per_location(logins: _Logins) -> None:
    pool = SessionPool()
    pool.keep = True
    sessions = [logins() for _ in range(MAX_KEPT_PER_LOCATION + 1)]
    for session in sessions:
        pool.give_back(LOCATION, session)
    assert [s.closed for s in sessions] == [False, False, True]


def test_kept_session_failing_first_is_replaced_without_retry(logins: _Logins, tmp_path: Path) -> None:
    pool = SessionPool()
    pool.keep = True
    expired = logins()

    def broken_cursor() -> Any:
        raise ConnectionError("session expired while kept")

    expired.cursor = broken_cursor
    pool.give_back(LOCATION, expired)
    store = _download(pool, logins, tmp_path)
    assert (tmp_path / f"{JOB}:training:0" / "stdout.log").read_text() == "hello\n"
    assert expired.closed and len(logins.sessions) == 2
    assert store is not None


def test_client_flag_is_shared_with_for_job_and_closed_with_the_client() -> None:
    client = CortexTrainingClient(base_url="http://127.0.0.1:9", database="DB", schema="S")
    assert client.keep_artifact_sessions is False
    client.keep_artifact_sessions = True
    twin = client.for_job({"database_name": "DB2", "schema_name": "S2"})
    assert twin.keep_artifact_sessions is True
    from ct_core.downloads.logs import shared_state

    pool = shared_state(client).sessions
    assert shared_state(twin).sessions is pool

    class Session:
        closed = False

        def close(self) -> None:
            self.closed = True

    kept = Session()
    pool.give_back(LOCATION, kept)
    twin.close()
    assert not kept.closed
    client.close()
    assert kept.closed
