"""Chunked-download rules checked with an in-process store over a real folder."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ct_core.downloads import chunks, logs
from ct_core.downloads.artifacts import ArtifactEntry
from ct_core.downloads.chunks import LOOKAHEAD_PER_WORKER, STDOUT, TEMP_PREFIX, ChunkDownload, sub_job_dir
from ct_core.http.retry import ARTIFACT_TRANSFERS

JOB = "job-1"
SUB = f"{JOB}:training:0"


class _FolderStore:
    """A run's ``_stdout`` chunks in a folder; counts GETs and can hold the first one back."""

    run_uri = "snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/"

    def __init__(self, count: int) -> None:
        self.chunks = {
            f"_stdout/{SUB}/console.20260101-{i // 60:04d}{i % 60:02d}.c{i}.gz": f"line {i}\n".encode()
            for i in range(count)
        }
        self.gets = 0
        self.hold_first: threading.Event | None = None
        self.lock = threading.Lock()

    def list(self, root: str) -> list[ArtifactEntry]:
        return [ArtifactEntry(p, len(d)) for p, d in sorted(self.chunks.items()) if p.startswith(root + "/")]

    def get(self, path: str, directory: Path, *, timeout: float | None = None) -> Path:
        with self.lock:
            self.gets += 1
            first = self.gets == 1
        if first and self.hold_first is not None:
            self.hold_first.wait(60)
        target = directory / path.rsplit("/", 1)[-1]
        target.write_bytes(gzip.compress(self.chunks[path]))
        return target

    def close(self, *, keep: bool = False) -> None:
        return None

    def text(self) -> str:
        return "".join(data.decode() for _, data in sorted(self.chunks.items()))


def test_fetches_run_at_most_four_chunks_per_worker_ahead_of_the_append(tmp_path: Path) -> None:
    store = _FolderStore(60)
    workers = 2
    ahead: list[int] = []

    def on_chunk(sub: str, done: int, total: int, size: int) -> None:
        ahead.append(store.gets - done)

    [entry] = ChunkDownload(store, JOB, tmp_path, STDOUT, max_workers=workers, on_chunk=on_chunk).run()
    assert Path(entry["saved_path"]).read_text() == store.text()
    assert max(ahead) <= workers * LOOKAHEAD_PER_WORKER
    assert store.gets == 60


def test_an_attempt_past_the_transfer_timeout_is_abandoned_and_retried(tmp_path: Path) -> None:
    store = _FolderStore(3)
    store.hold_first = threading.Event()
    no_wait = replace(ARTIFACT_TRANSFERS, initial_wait=0.0)
    # The first GET is held until the end, so it always runs past the limit; every other attempt
    # (and the listing) must finish within it, so the limit leaves room for a busy machine.
    download = ChunkDownload(
        store, JOB, tmp_path, STDOUT, max_workers=1, transfer_timeout_seconds=2.0, retry_policy=no_wait
    )
    try:
        [entry] = download.run()
    finally:
        store.hold_first.set()
    assert Path(entry["saved_path"]).read_text() == store.text()
    # The late attempt wrote only into its own folder; the session of such a download is not kept.
    assert download.retrier.abandoned and store.gets == 4


class _FlakyStore(_FolderStore):
    """Every GET after the first fails with a transient error."""

    def get(self, path: str, directory: Path, *, timeout: float | None = None) -> Path:
        if self.gets >= 1:
            with self.lock:
                self.gets += 1
            raise ConnectionResetError("connection reset")
        return super().get(path, directory, timeout=timeout)


@pytest.mark.timeout(60)
def test_cancel_stops_a_worker_waiting_out_a_retry_backoff(tmp_path: Path) -> None:
    from ct_core.errors import DownloadCancelled

    # A backoff far longer than the test's timeout: only the cancel can end the wait.
    hour_long = replace(ARTIFACT_TRANSFERS, initial_wait=3600.0, max_wait=3600.0)
    store = _FlakyStore(2)

    def on_chunk(sub: str, done: int, total: int, size: int) -> None:
        if done == 1:
            # The second chunk's GET has failed once and its worker is asleep in the backoff.
            while store.gets < 2:
                time.sleep(0.01)
            raise DownloadCancelled("stop")

    download = ChunkDownload(
        store, JOB, tmp_path, STDOUT, max_workers=1, on_chunk=on_chunk, retry_policy=hour_long
    )
    with pytest.raises(DownloadCancelled) as caught:
        download.run()
    assert caught.value.download_progress_saved is True  # type: ignore[attr-defined]
    assert store.gets == 2
    manifest = json.loads((tmp_path / SUB / ".stdout.log.partial.manifest.json").read_text())
    assert len(manifest["names"]) == 1


def test_temp_folders_of_killed_downloads_are_removed_after_an_hour(tmp_path: Path) -> None:
    old = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    fresh = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    download = ChunkDownload(_FolderStore(1), JOB, tmp_path, STDOUT)
    try:
        download.run()
        assert not old.exists() and fresh.exists()
    finally:
        fresh.rmdir()
    # The download's own temporary folder is gone once it returns.
    assert download._temp is not None and not download._temp.exists()


def test_sub_job_folders_are_portable_to_windows(monkeypatch) -> None:
    assert sub_job_dir(Path("out"), SUB) == Path("out") / SUB
    # Only the module's view of the platform changes (pytest itself must keep using POSIX paths).
    monkeypatch.setattr(chunks, "os", SimpleNamespace(name="nt"))
    assert sub_job_dir(Path("out"), SUB) == Path("out") / "job-1_training_0"


def test_a_large_execution_log_gets_a_longer_attempt() -> None:
    assert logs._attempt_timeout(300.0, 1000) == 300.0
    assert logs._attempt_timeout(300.0, 1024 * 1024 * 1024) == pytest.approx(2048.0)
    assert logs._attempt_timeout(None, 1 << 40) is None


class _Client:
    """The parts of a client warm_artifact_session reads."""

    database, schema = "DB", "SCHEMA"

    def __init__(self) -> None:
        # Its own download state (root memory and kept sessions), as a client family has.
        self.download_state = logs.SharedDownloadState()


def test_warm_artifact_session_logs_in_once_while_sessions_are_kept(
    fake_connection: Any, monkeypatch
) -> None:
    from ct_core.downloads.snowflake_store import SnowflakeArtifactStore

    client = _Client()
    pool = logs.shared_state(client).sessions
    logins: list[Any] = []
    fail = {"now": False}

    def login() -> Any:
        if fail["now"]:
            raise ConnectionRefusedError("login refused")
        logins.append(fake_connection)
        return fake_connection

    run = {"experiment_name": "DB.SCHEMA.EXP", "experiment_run_name": "RUN_1"}
    monkeypatch.setattr(
        logs,
        "artifact_store",
        lambda c, job: SnowflakeArtifactStore(login, run, pool=pool, location=("DB", "SCHEMA")),
    )
    logs.warm_artifact_session(client, JOB)
    assert logins == []  # sessions are not kept: nothing to prepare
    pool.keep = True
    logs.warm_artifact_session(client, JOB)
    logs.warm_artifact_session(client, JOB)
    assert len(logins) == 1 and pool.has(("DB", "SCHEMA"))
    pool.close_all()
    fail["now"] = True
    with pytest.raises(ConnectionRefusedError):
        logs.warm_artifact_session(client, JOB)
    assert not pool.has(("DB", "SCHEMA"))


# --- stall and late-chunk notices, judged with the server's clock -----------------------------------


def _grouped(*paths: str) -> Any:
    return chunks.SubJobChunks(SUB, list(paths))


def test_missing_metrics_entries_follow_the_job_state() -> None:
    from datetime import UTC, datetime

    console = {SUB: _grouped(f"_stdout/{SUB}/console.20260101-120000.a.gz")}
    server_now = datetime(2026, 1, 1, 12, 5, tzinfo=UTC)
    running = {"status": "running", "state_changed_at": "2026-01-01T11:00:00Z"}
    [entry] = logs._missing_metrics_entries(running, server_now, {}, console)
    assert entry["chunk_count"] == 0 and entry["saved_path"] is None
    assert "metric uploads may be stalled" in entry["warnings"][0]
    # Console output younger than two minutes (by the server's clock): not yet a stall.
    early = datetime(2026, 1, 1, 12, 1, tzinfo=UTC)
    assert logs._missing_metrics_entries(running, early, {}, console) == []
    ended = {"status": "failed", "state_changed_at": "2026-01-01T12:01:00Z"}
    [entry] = logs._missing_metrics_entries(ended, early, {}, console)
    assert "no GPU metrics were saved" in entry["warnings"][0]
    # A sub-job that has metrics is never listed as missing them.
    assert logs._missing_metrics_entries(ended, early, {SUB: _grouped()}, console) == []


def test_late_chunk_window_is_two_minutes_after_the_end_on_the_server_clock() -> None:
    from datetime import UTC, datetime

    ended = {"status": "succeeded", "state_changed_at": "2026-01-01T12:00:00Z"}
    inside = datetime(2026, 1, 1, 12, 1, 59, tzinfo=UTC)
    after = datetime(2026, 1, 1, 12, 2, 1, tzinfo=UTC)
    assert logs._late_chunk_warning(ended, inside, "metrics", SUB) is not None
    assert logs._late_chunk_warning(ended, after, "metrics", SUB) is None
    assert "resume=True" in str(logs._late_chunk_warning({"status": "running"}, after, "stdout", SUB))


# --- the artifact retry policy -----------------------------------------------------------------------


def test_artifact_transfers_back_off_from_a_quarter_second_to_eight_with_up_to_half_off() -> None:
    from ct_core.http.retry import run_with_retries

    for retry_number, base in ((1, 0.25), (2, 0.5), (3, 1.0), (6, 8.0), (9, 8.0)):
        for _ in range(50):
            assert base / 2 <= ARTIFACT_TRANSFERS.wait_before(retry_number) <= base
    waits: list[float] = []
    attempts: list[int] = []

    def always_reset() -> None:
        attempts.append(1)
        raise ConnectionResetError("connection reset")

    with pytest.raises(ConnectionResetError):
        run_with_retries(
            always_reset, predicate=lambda e: True, policy=ARTIFACT_TRANSFERS, sleep=waits.append
        )
    # Four retries after the first attempt.
    assert len(attempts) == 5 and len(waits) == 4


def test_artifact_rule_retries_408_and_every_5xx_but_not_other_client_errors() -> None:
    from ct_core.errors import APIError, ArtifactMissing, ArtifactUnavailable, TLSVerificationError
    from ct_core.http.retry import artifact_retryable, is_transient

    for status in (408, 409, 429, 500, 501, 503, 599):
        assert artifact_retryable(APIError("x", status_code=status)), status
    for status in (400, 401, 403, 404, 410):
        assert not artifact_retryable(APIError("x", status_code=status)), status
    # The general rule keeps 408 final; the artifact rule does not.
    assert not is_transient(APIError("x", status_code=408))
    assert artifact_retryable(ArtifactUnavailable("busy")) and not artifact_retryable(ArtifactMissing("gone"))
    assert artifact_retryable(TimeoutError()) and artifact_retryable(TLSVerificationError("cert"))
    assert not artifact_retryable(ValueError("bad"))
