"""Checkpoint download against ct_local and a scriptable presigned-link server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from ct_core import CortexTrainingClient
from ct_core.downloads.checkpoint import (
    CheckpointDownloader,
    CheckpointDownloadError,
    parse_size_bytes,
    safe_destination,
)
from ct_core.errors import NotFoundError

DATABASE = "CT_DL_DB"
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}


def _no_sleep(_: float) -> None:
    return None


class _Stopped(Exception):
    """Raised from a progress callback: the download stops as a killed one would."""


def _stop_after(at: int) -> Any:
    def on_bytes(name: str, done: int, total: int) -> None:
        if done >= at:
            raise _Stopped

    return on_bytes


def _interrupted(link_server: Any, out: Path, at: int, export: Any = None) -> None:
    """An earlier ct download stopped after ``at`` bytes: its .partial, recorded as this file's."""
    link_server.drop_after, link_server.drops_left = at, 1
    downloader = CheckpointDownloader(
        export or link_server.export, out, on_bytes=_stop_after(at), sleep=_no_sleep
    )
    with pytest.raises(_Stopped):
        downloader.run()
    downloader.close()
    link_server.requests.clear()


@pytest.fixture
def sdk(local_server: Any) -> Any:
    schema = "S_" + uuid.uuid4().hex[:10].upper()
    with CortexTrainingClient(base_url=local_server.base_url, database=DATABASE, schema=schema) as client:
        yield client


@pytest.fixture
def checkpoint(local_server: Any, sdk: CortexTrainingClient) -> dict[str, Any]:
    """A job with checkpoint cp_big: a 3 MiB random weights file, a config and a nested tokenizer file."""
    job_id = sdk.create_job_from_body({"sub_job_configs": [TRAINING]})["job_id"]
    local_server.add_checkpoint(
        job_id,
        checkpoint_id="cp_big",
        files={"model.safetensors": "x", "config.json": '{"a": 1}', "tok/vocab.txt": "abc"},
    )
    weights = os.urandom(3 * 1024 * 1024 + 17)
    folder = Path(local_server.state_dir) / "checkpoints" / job_id / "cp_big"
    (folder / "model.safetensors").write_bytes(weights)
    return {"job_id": job_id, "weights": weights, "folder": folder}


def test_downloads_every_file_and_keeps_finished_ones(sdk, checkpoint, tmp_path) -> None:
    out = tmp_path / "out"
    files_seen: list[tuple[str, int, int]] = []
    summary = sdk.download_checkpoint(
        checkpoint["job_id"], "cp_big", out, on_file=lambda *args: files_seen.append(args)
    )
    assert summary["job_id"] == checkpoint["job_id"] and summary["checkpoint_id"] == "cp_big"
    names = sorted(f["filename"] for f in summary["files"])
    assert names == ["config.json", "model.safetensors", "tok/vocab.txt"]
    assert (out / "model.safetensors").read_bytes() == checkpoint["weights"]
    assert (out / "tok" / "vocab.txt").read_text() == "abc"
    assert not list(out.rglob("*.partial"))
    assert [count for _, _, count in files_seen] == [3, 3, 3]
    # A second run finds every file complete and fetches nothing again.
    again = sdk.download_checkpoint(checkpoint["job_id"], "cp_big", out)
    assert all(f["already_present"] for f in again["files"])


def test_include_globs_filter_by_name(sdk, checkpoint, tmp_path) -> None:
    summary = sdk.download_checkpoint(checkpoint["job_id"], "cp_big", tmp_path, include=["*.json", "tok/*"])
    assert sorted(f["filename"] for f in summary["files"]) == ["config.json", "tok/vocab.txt"]
    assert not (tmp_path / "model.safetensors").exists()


def _weights_of(sdk: Any, checkpoint: dict[str, Any], out: Path, on_bytes: Any) -> dict[str, Any]:
    """Download only cp_big's weights into `out`, reporting bytes to `on_bytes`."""
    return sdk.download_checkpoint(
        checkpoint["job_id"], "cp_big", out, include=["model.safetensors"], on_bytes=on_bytes
    )


def test_partial_file_is_continued_with_range(sdk, checkpoint, tmp_path) -> None:
    weights = checkpoint["weights"]
    # An earlier download of this checkpoint stopped after a million bytes.
    with pytest.raises(_Stopped):
        _weights_of(sdk, checkpoint, tmp_path, _stop_after(1_000_000))
    # One socket read can bring more than a million bytes (all of the file, on a slow machine):
    # keep exactly the first million, as a download cut there would have.
    partial = tmp_path / "model.safetensors.partial"
    with partial.open("r+b") as handle:
        handle.truncate(1_000_000)
    progress: list[int] = []
    summary = _weights_of(sdk, checkpoint, tmp_path, lambda name, done, total: progress.append(done))
    assert summary["files"][0]["resumed"] is True
    assert (tmp_path / "model.safetensors").read_bytes() == weights
    # The first reported count already includes the bytes kept from the partial file.
    assert progress[0] > 1_000_000 and progress[-1] == len(weights)


def test_a_partial_file_that_is_already_whole_still_reports_its_bytes(sdk, checkpoint, tmp_path) -> None:
    weights = checkpoint["weights"]
    with pytest.raises(_Stopped):
        _weights_of(sdk, checkpoint, tmp_path, _stop_after(1))
    # Stopped only after the last byte was written (the same file, so its record still holds).
    partial = tmp_path / "model.safetensors.partial"
    with partial.open("r+b") as handle:
        handle.seek(0)
        handle.write(weights)
    progress: list[tuple[int, int]] = []
    summary = _weights_of(sdk, checkpoint, tmp_path, lambda name, done, total: progress.append((done, total)))
    assert summary["files"][0]["resumed"] is True
    assert (tmp_path / "model.safetensors").read_bytes() == weights
    # Nothing was left to fetch, and a progress bar still reaches the end.
    assert progress == [(len(weights), len(weights))]


def test_expired_link_is_exported_again_once(sdk, checkpoint, tmp_path) -> None:
    exports: list[dict[str, Any]] = []

    def export() -> dict[str, Any]:
        answer = sdk.export_checkpoint(checkpoint["job_id"], "cp_big")
        if not exports:
            # ct_local signs the expiry into the link: a past expiry is refused with 403.
            for entry in answer["files"]:
                entry["url"] = entry["url"].replace("expires=", "expires=1", 1)
        exports.append(answer)
        return answer

    downloader = CheckpointDownloader(export, tmp_path, include=["config.json"], sleep=_no_sleep)
    try:
        result = downloader.run()
    finally:
        downloader.close()
    assert len(exports) == 2
    assert result[0]["filename"] == "config.json"
    assert (tmp_path / "config.json").read_text() == '{"a": 1}'


def test_unknown_checkpoint_is_not_found(sdk, checkpoint, tmp_path) -> None:
    with pytest.raises(NotFoundError, match="cp_missing"):
        sdk.download_checkpoint(checkpoint["job_id"], "cp_missing", tmp_path)
    assert not list(tmp_path.iterdir())


def test_server_ignoring_range_restarts_the_file(link_server: Any, tmp_path) -> None:
    data = os.urandom(200_000)
    link_server.blobs["w.bin"] = data
    _interrupted(link_server, tmp_path, 50_000)
    link_server.ignore_range = True
    # A partial file whose bytes do not even match: a 200 answer must start it over, not append.
    with open(tmp_path / "w.bin.partial", "r+b") as partial:
        partial.write(b"\0" * 50_000)
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=_no_sleep)
    result = downloader.run()
    downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == data
    # The range was asked for, but the whole file came back and replaced the partial one: nothing of
    # the earlier .partial was continued, so the summary must not say it was.
    assert link_server.requests[0]["range"] == "bytes=50000-"
    assert result[0]["resumed"] is False


def test_dropped_connections_resume_without_refetching(link_server: Any, tmp_path) -> None:
    data = os.urandom(300_000)
    link_server.blobs["w.bin"] = data
    link_server.drop_after, link_server.drops_left = 100_000, 2
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=_no_sleep)
    downloader.run()
    downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == data
    ranges = [r["range"] for r in link_server.requests]
    assert ranges[0] is None
    # Each retry asked only for what was still missing.
    assert ranges[1] == "bytes=100000-" and ranges[2] == "bytes=200000-"


def test_link_refused_again_after_reexport_fails(link_server: Any, tmp_path) -> None:
    link_server.blobs["w.bin"] = b"data"
    link_server.expired_generations = {0, 1}
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=_no_sleep)
    with pytest.raises(CheckpointDownloadError, match="expired again"):
        downloader.run()
    downloader.close()
    assert link_server.exports == 2
    assert not (tmp_path / "w.bin").exists()


def test_past_expires_at_reexports_before_the_first_get(link_server: Any, tmp_path) -> None:
    link_server.blobs["w.bin"] = b"data"
    link_server.expired_generations = {0}
    calls = iter(["2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z"])
    downloader = CheckpointDownloader(lambda: link_server.export(expires_at=next(calls)), tmp_path)
    downloader.run()
    downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == b"data"
    assert all("gen=1" in r["path"] for r in link_server.requests)


def test_short_body_is_never_promoted(link_server: Any, tmp_path) -> None:
    link_server.blobs["w.bin"] = b"0123456789"

    def export() -> dict[str, Any]:
        answer = link_server.export()
        answer["files"][0]["size_bytes"] = 20
        return answer

    downloader = CheckpointDownloader(export, tmp_path, sleep=_no_sleep)
    with pytest.raises(CheckpointDownloadError):
        downloader.run()
    downloader.close()
    assert not (tmp_path / "w.bin").exists()


def test_unsatisfiable_range_restarts_a_partial_that_is_not_complete(link_server: Any, tmp_path) -> None:
    # The partial holds every byte the link serves, yet fewer than the export announced: the 416
    # answer leads to a size check, and the file is started over instead of being promoted.
    link_server.blobs["w.bin"] = b"0123456789"

    def export() -> dict[str, Any]:
        answer = link_server.export()
        answer["files"][0]["size_bytes"] = 20
        return answer

    _interrupted(link_server, tmp_path, 10, export)
    assert (tmp_path / "w.bin.partial").read_bytes() == b"0123456789"
    downloader = CheckpointDownloader(export, tmp_path, sleep=_no_sleep)
    with pytest.raises(CheckpointDownloadError):
        downloader.run()
    downloader.close()
    ranges = [r["range"] for r in link_server.requests]
    assert ranges[:2] == ["bytes=10-", None]
    assert not (tmp_path / "w.bin").exists()


def test_larger_body_than_announced_is_refused(link_server: Any, tmp_path) -> None:
    link_server.blobs["w.bin"] = b"0123456789"

    def export() -> dict[str, Any]:
        answer = link_server.export()
        answer["files"][0]["size_bytes"] = "4"
        return answer

    downloader = CheckpointDownloader(export, tmp_path, sleep=_no_sleep)
    with pytest.raises(CheckpointDownloadError, match="larger"):
        downloader.run()
    downloader.close()
    assert not (tmp_path / "w.bin").exists()


@pytest.mark.parametrize("name", ["../escape.bin", "/etc/passwd", "a\\b", "a/../../b", "", "./x", "a//b"])
def test_unsafe_names_are_refused(link_server: Any, tmp_path, name: str) -> None:
    link_server.blobs["ok.bin"] = b"ok"
    out = tmp_path / "out"

    def export() -> dict[str, Any]:
        entries = [{"filename": name, "url": f"{link_server.base}/f/ok.bin?gen=0", "size_bytes": 2}]
        return link_server.export(names=entries)

    downloader = CheckpointDownloader(export, out)
    with pytest.raises(CheckpointDownloadError, match=r"unsafe|leaves"):
        downloader.run()
    downloader.close()
    assert link_server.requests == []
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_symlink_out_of_the_folder_is_refused(tmp_path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "link").symlink_to(tmp_path)
    with pytest.raises(CheckpointDownloadError, match="leaves"):
        safe_destination(tmp_path / "out", "link/x")


@pytest.mark.parametrize("value, expected", [(0, 0), (12, 12), ("34", 34), ("0", 0)])
def test_size_bytes_accepts_integers_and_decimal_strings(value: Any, expected: int) -> None:
    assert parse_size_bytes(value, "f") == expected


@pytest.mark.parametrize("value", [-1, 1.5, True, "12a", "", " 3", "-4", None, "1e3"])
def test_size_bytes_rejects_everything_else(value: Any) -> None:
    with pytest.raises(CheckpointDownloadError, match="size_bytes"):
        parse_size_bytes(value, "f")


_KILLED_DOWNLOADER = """
import sys, json
from pathlib import Path
from ct_core.downloads.checkpoint import CheckpointDownloader
answer = json.loads(sys.argv[2])
CheckpointDownloader(lambda: answer, Path(sys.argv[1])).run()
"""


def test_sigkill_midway_then_resume_is_byte_identical(link_server: Any, tmp_path, wait_until) -> None:
    data = os.urandom(2 * 1024 * 1024)
    link_server.blobs["w.bin"] = data
    link_server.stall_after = 700_000
    import json

    answer = link_server.export()
    process = subprocess.Popen([sys.executable, "-c", _KILLED_DOWNLOADER, str(tmp_path), json.dumps(answer)])
    partial = tmp_path / "w.bin.partial"
    try:
        wait_until(lambda: partial.exists() and partial.stat().st_size >= 600_000)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert not (tmp_path / "w.bin").exists()
    kept = partial.stat().st_size
    assert 0 < kept <= 700_000 and partial.read_bytes() == data[:kept]

    link_server.stall_after = None
    downloader = CheckpointDownloader(link_server.export, tmp_path)
    result = downloader.run()
    downloader.close()
    assert result[0]["resumed"] is True
    assert (tmp_path / "w.bin").read_bytes() == data
    assert link_server.requests[-1]["range"] == f"bytes={kept}-"
    assert not partial.exists()


@pytest.mark.parametrize("durable", [False, True])
def test_fsync_only_when_durable(link_server: Any, tmp_path, monkeypatch, durable: bool) -> None:
    link_server.blobs["w.bin"] = b"x" * 5000
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    downloader = CheckpointDownloader(link_server.export, tmp_path, durable=durable)
    downloader.run()
    downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == b"x" * 5000
    # The file before its rename, then its folder after it.
    assert len(synced) == (2 if durable else 0)


def test_checkpoint_links_back_off_from_a_fifth_of_a_second_to_five_without_jitter() -> None:
    from ct_core.http.retry import CHECKPOINT_LINKS

    assert [CHECKPOINT_LINKS.wait_before(n) for n in range(1, 7)] == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0]
    assert CHECKPOINT_LINKS.max_retries == 5


def test_transient_link_failures_wait_between_attempts_and_give_up_after_five_retries(
    link_server: Any, tmp_path
) -> None:
    link_server.blobs["w.bin"] = b"0123456789"
    waits: list[float] = []
    attempts: list[int] = []

    class _Busy:
        """A link client whose every GET answers 503."""

        def get(self, url: str, headers: Any) -> Any:
            import contextlib

            attempts.append(1)
            return contextlib.nullcontext(type("R", (), {"status_code": 503, "headers": {}})())

        def close(self) -> None:
            return None

    busy: Any = _Busy()
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=waits.append, links=busy)
    with pytest.raises(CheckpointDownloadError, match="kept failing"):
        downloader.run()
    assert len(attempts) == 6
    assert waits == [0.2, 0.4, 0.8, 1.6, 3.2]
