"""A checkpoint download never keeps, nor continues, bytes of another checkpoint or file version.

Two checkpoints of one model have files of equal names and sizes, so name and size prove nothing.
Each test downloads from a real ct_local (whose export links carry an ETag) or the scriptable link
server into one folder, in the orders a user would: A then B, A interrupted then B, A interrupted
while the server's file changes, a file swapped by hand.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from ct_testing.plugin import run_ct

from ct_core import CortexTrainingClient
from ct_core.downloads.checkpoint import CheckpointDownloader, CheckpointDownloadError

DATABASE = "CT_DL_ID_DB"
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}
WEIGHTS = "model.safetensors"
SIZE = 3 * 1024 * 1024 + 5


class _Interrupted(Exception):
    """Raised from a progress callback: the download stops as a killed or cancelled one would."""


@pytest.fixture
def schema() -> str:
    return "S_" + uuid.uuid4().hex[:10].upper()


@pytest.fixture
def sdk(local_server: Any, schema: str) -> Any:
    with CortexTrainingClient(base_url=local_server.base_url, database=DATABASE, schema=schema) as client:
        yield client


def _checkpoint(server: Any, job_id: str, checkpoint_id: str) -> tuple[bytes, Path]:
    """A checkpoint with a random weights file of SIZE bytes (equal for every checkpoint) and a config."""
    server.add_checkpoint(job_id, checkpoint_id=checkpoint_id, files={WEIGHTS: "x", "config.json": "{}"})
    folder = Path(server.state_dir) / "checkpoints" / job_id / checkpoint_id
    weights = os.urandom(SIZE)
    (folder / WEIGHTS).write_bytes(weights)
    return weights, folder


@pytest.fixture
def two(local_server: Any, sdk: Any) -> dict[str, Any]:
    job_id = sdk.create_job_from_body({"sub_job_configs": [TRAINING]})["job_id"]
    a, folder_a = _checkpoint(local_server, job_id, "cp_a")
    b, _ = _checkpoint(local_server, job_id, "cp_b")
    return {"job_id": job_id, "a": a, "b": b, "folder_a": folder_a}


def _interrupt(sdk: Any, job_id: str, checkpoint_id: str, out: Path, keep: int = 1_000_000) -> int:
    """A download of the weights stopped at its first write, its ``.partial`` cut to ``keep`` bytes
    (one socket read can bring all of the file on a slow machine); the bytes kept."""

    def on_bytes(name: str, done: int, total: int) -> None:
        raise _Interrupted

    with pytest.raises(_Interrupted):
        sdk.download_checkpoint(job_id, checkpoint_id, out, include=[WEIGHTS], on_bytes=on_bytes)
    partial = out / f"{WEIGHTS}.partial"
    if partial.stat().st_size > keep:
        with partial.open("r+b") as handle:
            handle.truncate(keep)
    assert 0 < partial.stat().st_size < SIZE
    return partial.stat().st_size


def _weights(summary: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in summary["files"] if f["filename"] == WEIGHTS)


def test_files_of_another_checkpoint_are_fetched_again_not_reported_present(sdk, two, tmp_path) -> None:
    out = tmp_path / "ckpt"
    sdk.download_checkpoint(two["job_id"], "cp_a", out)
    assert (out / WEIGHTS).read_bytes() == two["a"]
    summary = sdk.download_checkpoint(two["job_id"], "cp_b", out)
    assert not any(f["already_present"] for f in summary["files"])
    assert (out / WEIGHTS).read_bytes() == two["b"]
    # Once B is complete, B again is already present; A again is fetched again.
    assert all(f["already_present"] for f in sdk.download_checkpoint(two["job_id"], "cp_b", out)["files"])
    sdk.download_checkpoint(two["job_id"], "cp_a", out)
    assert (out / WEIGHTS).read_bytes() == two["a"]


def test_a_partial_file_of_another_checkpoint_is_started_over(sdk, two, tmp_path) -> None:
    _interrupt(sdk, two["job_id"], "cp_a", tmp_path)
    summary = sdk.download_checkpoint(two["job_id"], "cp_b", tmp_path, include=[WEIGHTS])
    assert _weights(summary)["resumed"] is False
    assert (tmp_path / WEIGHTS).read_bytes() == two["b"]
    assert not (tmp_path / f"{WEIGHTS}.partial").exists()


def test_a_partial_file_of_the_same_checkpoint_is_continued(sdk, two, tmp_path) -> None:
    kept = _interrupt(sdk, two["job_id"], "cp_a", tmp_path)
    progress: list[int] = []
    summary = sdk.download_checkpoint(
        two["job_id"], "cp_a", tmp_path, include=[WEIGHTS], on_bytes=lambda n, d, t: progress.append(d)
    )
    assert _weights(summary)["resumed"] is True
    assert progress[0] > kept
    assert (tmp_path / WEIGHTS).read_bytes() == two["a"]


def test_a_partial_file_nobody_recorded_is_started_over(sdk, two, tmp_path) -> None:
    # Bytes of checkpoint A left by another tool: nothing says which file they belong to.
    (tmp_path / f"{WEIGHTS}.partial").write_bytes(two["a"][:1_000_000])
    summary = sdk.download_checkpoint(two["job_id"], "cp_b", tmp_path, include=[WEIGHTS])
    assert _weights(summary)["resumed"] is False
    assert (tmp_path / WEIGHTS).read_bytes() == two["b"]


def test_a_file_that_changed_on_the_server_is_not_spliced_onto_its_old_bytes(sdk, two, tmp_path) -> None:
    _interrupt(sdk, two["job_id"], "cp_a", tmp_path)
    changed = os.urandom(SIZE)
    target = two["folder_a"] / WEIGHTS
    target.write_bytes(changed)
    # A new version of the file: its ETag changes with it (a later modification time is enough).
    os.utime(target, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    summary = sdk.download_checkpoint(two["job_id"], "cp_a", tmp_path, include=[WEIGHTS])
    assert _weights(summary)["resumed"] is False
    assert (tmp_path / WEIGHTS).read_bytes() == changed


def test_a_file_replaced_by_hand_is_fetched_again(sdk, two, tmp_path) -> None:
    sdk.download_checkpoint(two["job_id"], "cp_a", tmp_path, include=[WEIGHTS])
    downloaded = (tmp_path / WEIGHTS).stat().st_mtime_ns
    (tmp_path / WEIGHTS).write_bytes(two["b"])
    # An edit made later than the download, as by hand: a rewrite within the same clock tick could
    # keep the modification time on a file system with coarse timestamps.
    os.utime(tmp_path / WEIGHTS, ns=(downloaded + 10**9, downloaded + 10**9))
    summary = sdk.download_checkpoint(two["job_id"], "cp_a", tmp_path, include=[WEIGHTS])
    assert _weights(summary)["already_present"] is False
    assert (tmp_path / WEIGHTS).read_bytes() == two["a"]


def test_a_file_nobody_recorded_is_fetched_again(sdk, two, tmp_path) -> None:
    (tmp_path / WEIGHTS).write_bytes(two["b"])
    summary = sdk.download_checkpoint(two["job_id"], "cp_a", tmp_path, include=[WEIGHTS])
    assert _weights(summary)["already_present"] is False
    assert (tmp_path / WEIGHTS).read_bytes() == two["a"]


def test_export_links_carry_the_etag_the_file_route_answers_with(sdk, two) -> None:
    export = sdk.export_checkpoint(two["job_id"], "cp_a")
    other = {f["filename"]: f for f in sdk.export_checkpoint(two["job_id"], "cp_b")["files"]}
    for entry in export["files"]:
        etag = entry["etag"]
        assert etag.startswith('"') and etag.endswith('"')
        # Files of equal name and size in two checkpoints never share an ETag.
        assert etag != other[entry["filename"]]["etag"]
        whole = httpx.get(entry["url"])
        assert whole.status_code == 200 and whole.headers["etag"] == etag
        # Resuming against the current version continues; against another one sends the whole file.
        same = httpx.get(entry["url"], headers={"Range": "bytes=1-", "If-Range": etag})
        assert same.status_code == 206
        stale = httpx.get(entry["url"], headers={"Range": "bytes=1-", "If-Range": '"older"'})
        assert stale.status_code == 200 and stale.content == whole.content


def test_ct_download_checkpoint_into_a_folder_of_another_checkpoint(
    local_server, two, schema, ct_home
) -> None:
    out = ct_home / "ckpt"
    args = ["--base-url", local_server.base_url, "--database", DATABASE, "--schema", schema]
    first = run_ct(*args, "download-checkpoint", two["job_id"], "cp_a", "--output-dir", str(out))
    assert first.returncode == 0, first
    second = run_ct(*args, "download-checkpoint", two["job_id"], "cp_b", "--output-dir", str(out))
    assert second.returncode == 0, second
    assert not any(f["already_present"] for f in second.json["files"])
    assert (out / WEIGHTS).read_bytes() == two["b"]


def test_a_link_that_serves_another_version_than_exported_is_refused(link_server: Any, tmp_path) -> None:
    link_server.blobs["w.bin"] = b"0123456789"

    def export() -> dict[str, Any]:
        answer = link_server.export()
        answer["files"][0]["etag"] = '"exported"'
        return answer

    _serve_etags(link_server, {"now": '"served"'}, [])
    downloader = CheckpointDownloader(export, tmp_path)
    with pytest.raises(CheckpointDownloadError, match="ETag"):
        downloader.run()
    downloader.close()
    assert not (tmp_path / "w.bin").exists()


def _serve_etags(link_server: Any, etag: dict[str, str], if_ranges: list[str | None]) -> None:
    """Make the link server answer with ``etag["now"]`` and note each request's If-Range header."""
    served = link_server.handle

    def handle(handler: Any) -> None:
        if_ranges.append(handler.headers.get("If-Range"))
        original = handler.send_response

        def send_response(code: int, message: Any = None) -> None:
            original(code, message)
            handler.send_header("ETag", etag["now"])

        handler.send_response = send_response
        served(handler)

    link_server.handle = handle


def test_a_resume_names_the_version_it_continues_and_restarts_when_it_changed(
    link_server: Any, tmp_path
) -> None:
    link_server.blobs["w.bin"] = os.urandom(300_000)
    etag = {"now": '"v1"'}
    if_ranges: list[str | None] = []
    _serve_etags(link_server, etag, if_ranges)
    link_server.drop_after, link_server.drops_left = 100_000, 1

    def stop(name: str, done: int, total: int) -> None:
        if done >= 100_000:
            raise _Interrupted

    first = CheckpointDownloader(link_server.export, tmp_path, on_bytes=stop)
    with pytest.raises(_Interrupted):
        first.run()
    first.close()
    # The object behind the link changes; this server (like some proxies) ignores If-Range.
    link_server.blobs["w.bin"] = new = os.urandom(300_000)
    etag["now"] = '"v2"'
    link_server.requests.clear()
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=lambda _: None)
    result = downloader.run()
    downloader.close()
    assert [r["range"] for r in link_server.requests] == ["bytes=100000-", None]
    assert if_ranges[-2:] == ['"v1"', None]
    assert result[0]["resumed"] is False
    assert (tmp_path / "w.bin").read_bytes() == new


@pytest.mark.parametrize(
    "name", ["%2e%2e/evil", "%2E%2E/evil", "..%2fevil", "a/%2e%2e/%2e%2e/evil", "%252e%252e/evil", "a%5cb"]
)
def test_percent_encoded_traversal_is_refused_like_the_plain_one(
    link_server: Any, tmp_path, name: str
) -> None:
    link_server.blobs["ok.bin"] = b"ok"
    out = tmp_path / "out"

    def export() -> dict[str, Any]:
        entries = [{"filename": name, "url": f"{link_server.base}/f/ok.bin?gen=0", "size_bytes": 2}]
        return link_server.export(names=entries)

    downloader = CheckpointDownloader(export, out)
    with pytest.raises(CheckpointDownloadError, match="unsafe"):
        downloader.run()
    downloader.close()
    assert link_server.requests == []
    assert not out.exists()


def test_the_record_folder_is_not_a_checkpoint_file_name(link_server: Any, tmp_path) -> None:
    link_server.blobs["ok.bin"] = b"ok"

    def export() -> dict[str, Any]:
        entries = [
            {
                "filename": ".ct-download/ok.bin.json",
                "url": f"{link_server.base}/f/ok.bin?gen=0",
                "size_bytes": 2,
            }
        ]
        return link_server.export(names=entries)

    downloader = CheckpointDownloader(export, tmp_path)
    with pytest.raises(CheckpointDownloadError, match="records"):
        downloader.run()
    downloader.close()
    assert link_server.requests == []
