"""The Snowflake artifact store with a fake Connector session over a real directory tree."""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ct_core.downloads.artifacts import ArtifactError
from ct_core.downloads.chunks import STDOUT, ChunkDownload
from ct_core.downloads.snowflake_store import SnowflakeArtifactStore, pat_connect_kwargs, sql_literal
from ct_core.http.retry import ARTIFACT_TRANSFERS

RUN = {"experiment_name": "DB.SCHEMA.EXP", "experiment_run_name": "RUN_1"}
JOB = "job-1"
#: The artifact policy with no first wait, so a retried attempt starts at once.
NO_WAIT = replace(ARTIFACT_TRANSFERS, initial_wait=0.0)


def _stage_console(tree: Path, sub: str, count: int, *, root: str = "_stdout") -> list[str]:
    texts = [f"console line {i}\n" for i in range(count)]
    folder = tree / root / sub
    folder.mkdir(parents=True, exist_ok=True)
    for index, text in enumerate(texts):
        (folder / f"console.20260101-{index // 60:04d}{index % 60:02d}.id{index}.gz").write_bytes(
            gzip.compress(text.encode())
        )
    return texts


def test_stdout_rebuild_over_a_connector_session(fake_connection: Any, tmp_path: Path) -> None:
    sub = f"{JOB}:training:0"
    texts = _stage_console(fake_connection.tree, sub, 40)
    fake_connection.latency_s = 0.005
    opened: list[Any] = []

    def connect() -> Any:
        opened.append(fake_connection)
        return fake_connection

    store = SnowflakeArtifactStore(connect, RUN)
    try:
        [entry] = ChunkDownload(store, JOB, tmp_path / "out", STDOUT, max_workers=8).run()
    finally:
        store.close()
    assert Path(entry["saved_path"]).read_text() == "".join(texts)
    assert entry["first_artifact_uri"].startswith("snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/_stdout/")
    # One login for the whole download, parallel statements on their own cursors, closed at the end.
    assert len(opened) == 1 and fake_connection.closed
    assert fake_connection.peak > 1
    assert fake_connection.cursors_closed == len(fake_connection.statements)
    lists = [s for s in fake_connection.statements if s.startswith("LIST ")]
    assert sorted(lists) == sorted(
        [
            "LIST 'snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/_stdout/'",
            "LIST 'snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/checkpoints/_stdout/'",
        ]
    )
    get = next(s for s in fake_connection.statements if s.startswith("GET "))
    assert get.endswith("/'") and " 'file:///" in get


def test_single_sub_job_lists_only_its_folders(fake_connection: Any, tmp_path: Path) -> None:
    sub = f"{JOB}:sampling:0"
    _stage_console(fake_connection.tree, sub, 2)
    store = SnowflakeArtifactStore(lambda: fake_connection, RUN)
    ChunkDownload(store, JOB, tmp_path, STDOUT, sub_job_ids=[sub]).run()
    store.close()
    lists = sorted(s for s in fake_connection.statements if s.startswith("LIST "))
    assert lists == [
        f"LIST 'snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/_stdout/{sub}/'",
        f"LIST 'snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/checkpoints/_stdout/{sub}/'",
    ]


def test_get_that_creates_nothing_is_an_error(fake_connection: Any, tmp_path: Path) -> None:
    store = SnowflakeArtifactStore(lambda: fake_connection, RUN)
    with pytest.raises(ArtifactError, match="did not create expected artifact"):
        store.get("_logs/job-1:training:0/missing.jsonl", tmp_path)
    with pytest.raises(ArtifactError, match="unsafe"):
        store.get("_logs/../../etc/passwd", tmp_path)


def test_sql_literals_double_quotes() -> None:
    assert sql_literal("a'b") == "'a''b'"


def test_pat_login_uses_the_host_and_skips_platform_probes() -> None:
    kwargs = pat_connect_kwargs("org-acct.snowflakecomputing.com", "tok", "ME", "TRAINER", "DB", "SC")
    assert kwargs["account"] == kwargs["host"] == "org-acct.snowflakecomputing.com"
    assert kwargs["platform_detection_timeout_seconds"] == 0
    assert kwargs["authenticator"] == "PROGRAMMATIC_ACCESS_TOKEN" and kwargs["role"] == "TRAINER"
    assert "role" not in pat_connect_kwargs("h", "t", "ME", None, "DB", "SC")


def test_a_sub_jobs_single_root_is_remembered(fake_connection: Any, tmp_path: Path) -> None:
    from ct_core.downloads.chunks import RootMemory

    sub = f"{JOB}:training:0"
    _stage_console(fake_connection.tree, sub, 2, root="checkpoints/_stdout")
    memory = RootMemory()
    store = SnowflakeArtifactStore(lambda: fake_connection, RUN)

    def lists() -> list[str]:
        return [s for s in fake_connection.statements if s.startswith("LIST ")]

    ChunkDownload(store, JOB, tmp_path / "a", STDOUT, root_memory=memory).run()
    assert len(lists()) == 2
    ChunkDownload(store, JOB, tmp_path / "b", STDOUT, sub_job_ids=[sub], root_memory=memory).run()
    # Only checkpoints/_stdout/<sub>/ was listed: the whole-run listing found the chunks there alone.
    assert lists()[2:] == [
        f"LIST 'snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/checkpoints/_stdout/{sub}/'"
    ]
    # When the remembered root has nothing any more, both are listed again.
    for chunk in (fake_connection.tree / "checkpoints" / "_stdout" / sub).iterdir():
        chunk.rename(fake_connection.tree / "x")
    _stage_console(fake_connection.tree, sub, 1)
    ChunkDownload(store, JOB, tmp_path / "c", STDOUT, sub_job_ids=[sub], root_memory=memory).run()
    assert len(lists()) == 6
    store.close()


# --- the artifact retry policy over the Connector's errors -----------------------------------------


def _connector_error(kind: str, errno: int, message: str) -> BaseException:
    from snowflake.connector import errors

    return getattr(errors, kind)(msg=message, errno=errno)


def test_network_errors_are_retried_and_statement_errors_fail_at_once(
    fake_connection: Any, tmp_path: Path
) -> None:
    sub = f"{JOB}:training:0"
    texts = _stage_console(fake_connection.tree, sub, 3)
    fake_connection.failures.append(
        ("GET ", _connector_error("OperationalError", 250001, "could not connect"))
    )
    store = SnowflakeArtifactStore(lambda: fake_connection, RUN)
    download = ChunkDownload(store, JOB, tmp_path / "a", STDOUT, max_workers=1, retry_policy=NO_WAIT)
    [entry] = download.run()
    assert Path(entry["saved_path"]).read_text() == "".join(texts)
    store.close()

    # Missing privileges: one LIST attempt, and the Connector's own error reaches the caller.
    fake_connection.closed = False
    before = len(fake_connection.statements)
    denied = _connector_error("ProgrammingError", 3001, "Insufficient privileges to operate on stage")
    fake_connection.failures.append(("LIST ", denied))
    store = SnowflakeArtifactStore(lambda: fake_connection, RUN)
    with pytest.raises(type(denied), match="Insufficient privileges"):
        ChunkDownload(store, JOB, tmp_path / "b", STDOUT, sub_job_ids=[sub]).list_chunks()
    store.close()
    assert len([s for s in fake_connection.statements[before:] if s.startswith("LIST ")]) == 2


def test_an_expired_session_is_opened_again(fake_connection: Any, tmp_path: Path) -> None:
    sub = f"{JOB}:training:0"
    texts = _stage_console(fake_connection.tree, sub, 2)
    logins: list[int] = []

    def connect() -> Any:
        logins.append(1)
        fake_connection.closed = False
        return fake_connection

    expired = _connector_error("ProgrammingError", 390112, "Your session has expired. Please login again.")
    fake_connection.failures.append(("GET ", expired))
    store = SnowflakeArtifactStore(connect, RUN)
    [entry] = ChunkDownload(store, JOB, tmp_path, STDOUT, max_workers=1, retry_policy=NO_WAIT).run()
    store.close()
    assert Path(entry["saved_path"]).read_text() == "".join(texts)
    assert len(logins) == 2


def test_a_chunk_gone_after_the_listing_is_skipped(fake_connection: Any, tmp_path: Path) -> None:
    from ct_core.downloads import ChunkDamaged

    sub = f"{JOB}:training:0"
    texts = _stage_console(fake_connection.tree, sub, 3)
    store = SnowflakeArtifactStore(lambda: fake_connection, RUN)
    download = ChunkDownload(store, JOB, tmp_path / "a", STDOUT, max_workers=1)
    grouped = download.list_chunks()
    gone = sorted((fake_connection.tree / "_stdout" / sub).iterdir())[1]
    gone.unlink()
    [entry] = download.run(grouped)
    assert Path(entry["saved_path"]).read_text() == texts[0] + texts[2]
    assert entry["skipped_chunks"] == [RUN_URI + f"_stdout/{sub}/{gone.name}"]
    strict = ChunkDownload(store, JOB, tmp_path / "b", STDOUT, max_workers=1, strict=True)
    with pytest.raises(ChunkDamaged):
        strict.run(grouped)
    store.close()


RUN_URI = "snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/"
