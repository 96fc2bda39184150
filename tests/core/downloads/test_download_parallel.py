"""Several files of one checkpoint fetched at once, each with its own partial file, resume and checks.

The link server of conftest.py is wrapped per test (its ``handle`` is replaced on the instance) to
see what concurrent downloads do on the wire: how many GETs are open at once, a barrier that only
opens when several files are being fetched together, one file that breaks while the others are
healthy. These tests ask for four workers, as links to another host get by default (this server is
on loopback, whose default follows the machine's cores; `default_workers` has tests of its own).
Against ct_local, a five-file checkpoint is downloaded, interrupted and resumed through the SDK.
Nothing is timed: waits have generous deadlines and fail only on a hang.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ct_core import CortexTrainingClient
from ct_core.constants import CHECKPOINT_DOWNLOAD_WORKERS
from ct_core.downloads.checkpoint import (
    RECORDS_DIR,
    CheckpointDownloader,
    CheckpointDownloadError,
    default_workers,
)
from ct_core.downloads.link_client import LinkClient, LinkTimeouts
from ct_core.errors import ValidationError

DATABASE = "CT_DL_PAR_DB"
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}
SHARDS = [f"model-{i:05d}-of-00005.safetensors" for i in range(1, 6)]
#: Longest a test waits for a condition that a working download reaches at once.
DEADLINE_S = 30.0


def _no_sleep(_: float) -> None:
    return None


class _Stopped(Exception):
    """Raised from a progress callback: the download stops as a killed or cancelled one would."""


def _wrap(link_server: Any, before: Callable[[Any, str], bool]) -> None:
    """Run ``before(handler, filename)`` ahead of the server's own answer; False: it answered itself."""
    original = link_server.handle

    def handle(handler: Any) -> None:
        name = handler.path.split("?", 1)[0].removeprefix("/f/")
        if before(handler, name):
            original(handler)

    link_server.handle = handle


def _answer(handler: Any, status: int) -> None:
    handler.send_response(status)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _download_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ct-checkpoint-download-")]


def _shards(link_server: Any, size: int = 300_000) -> dict[str, bytes]:
    blobs = {name: os.urandom(size + n) for n, name in enumerate(SHARDS)}
    link_server.blobs.update(blobs)
    return blobs


def test_five_files_are_fetched_four_at_once_and_land_whole(link_server: Any, tmp_path: Path) -> None:
    blobs = _shards(link_server)
    # The first four GETs wait for one another: a download fetching one file at a time never gets
    # past the first, and the test fails on the barrier's deadline.
    barrier = threading.Barrier(4, timeout=DEADLINE_S)
    lock = threading.Lock()
    seen: list[str] = []

    def before(handler: Any, name: str) -> bool:
        with lock:
            seen.append(name)
            first_four = len(seen) <= 4
        if first_four:
            barrier.wait()
        return True

    _wrap(link_server, before)
    in_callback = threading.Lock()
    overlaps: list[str] = []
    files: list[tuple[str, int, int]] = []

    def on_bytes(name: str, done: int, total: int) -> None:
        # Never two callbacks at once, whichever threads fetch the files.
        if not in_callback.acquire(blocking=False):
            overlaps.append(name)
            return
        in_callback.release()

    def on_file(name: str, done: int, count: int) -> None:
        if not in_callback.acquire(blocking=False):
            overlaps.append(name)
            return
        files.append((name, done, count))
        in_callback.release()

    # Four, as links to another host get by default (this server is on loopback, whose default
    # follows the machine's cores: see the tests of default_workers below).
    downloader = CheckpointDownloader(
        link_server.export, tmp_path, on_bytes=on_bytes, on_file=on_file, workers=4
    )
    try:
        result = downloader.run()
    finally:
        downloader.close()
    assert not barrier.broken
    assert [entry["filename"] for entry in result] == SHARDS  # the export's order, not the finishing one
    for name, data in blobs.items():
        assert (tmp_path / name).read_bytes() == data
        assert (tmp_path / RECORDS_DIR / f"{name}.json").is_file()
    assert not list(tmp_path.glob("*.partial"))
    assert overlaps == []
    assert sorted(name for name, _, _ in files) == sorted(SHARDS)
    assert [(done, count) for _, done, count in files] == [(n, 5) for n in range(1, 6)]
    assert not _download_threads()


def test_one_worker_fetches_one_file_at_a_time(link_server: Any, tmp_path: Path) -> None:
    blobs = _shards(link_server, 50_000)
    lock = threading.Lock()
    state = {"open": 0, "peak": 0}
    original = link_server.handle

    def handle(handler: Any) -> None:
        with lock:
            state["open"] += 1
            state["peak"] = max(state["peak"], state["open"])
        try:
            original(handler)
        finally:
            with lock:
                state["open"] -= 1

    link_server.handle = handle
    downloader = CheckpointDownloader(link_server.export, tmp_path, workers=1)
    try:
        downloader.run()
    finally:
        downloader.close()
    assert state["peak"] == 1
    assert all((tmp_path / name).read_bytes() == data for name, data in blobs.items())


def _peak_open_gets(link_server: Any, parties: int) -> dict[str, int]:
    """Count the GETs open at once; the first ``parties`` wait for one another (a barrier)."""
    lock = threading.Lock()
    barrier = threading.Barrier(parties, timeout=DEADLINE_S)
    state = {"open": 0, "peak": 0, "seen": 0}
    original = link_server.handle

    def handle(handler: Any) -> None:
        with lock:
            state["open"] += 1
            state["peak"] = max(state["peak"], state["open"])
            state["seen"] += 1
            first = state["seen"] <= parties
        try:
            if first:
                barrier.wait()
            original(handler)
        finally:
            with lock:
                state["open"] -= 1

    link_server.handle = handle
    return state


def test_the_default_over_loopback_is_the_one_default_workers_gives(link_server: Any, tmp_path: Path) -> None:
    blobs = _shards(link_server, 50_000)
    export = link_server.export()
    expected = min(default_workers([entry["url"] for entry in export["files"]]), len(SHARDS))
    state = _peak_open_gets(link_server, expected)
    downloader = CheckpointDownloader(link_server.export, tmp_path)
    try:
        downloader.run()
    finally:
        downloader.close()
    assert state["peak"] == expected
    assert all((tmp_path / name).read_bytes() == data for name, data in blobs.items())


LOOPBACK_HOSTS = ["127.0.0.1", "127.8.9.10", "localhost", "LOCALHOST.", "[::1]", "a.localhost"]


@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 1), (3, 1), (4, 2), (6, 3), (8, 4), (64, 4)])
def test_loopback_links_get_one_worker_per_two_cores(host: str, cores: int, workers: int) -> None:
    urls = [f"http://{host}:8080/a?sig=1", f"https://{host}/b"]
    assert default_workers(urls, cpu_count=cores) == workers


@pytest.mark.parametrize("cores", [1, 2, 64])
def test_links_to_another_host_get_the_fixed_default(cores: int) -> None:
    remote = "https://bucket.s3.us-west-2.amazonaws.com/ckpt/model.safetensors?X-Amz-Signature=x"
    assert default_workers([remote], cpu_count=cores) == CHECKPOINT_DOWNLOAD_WORKERS
    # One link elsewhere is enough: the files are not all on this machine.
    assert default_workers(["http://127.0.0.1:1/a", remote], cpu_count=cores) == CHECKPOINT_DOWNLOAD_WORKERS
    assert default_workers(["http://10.0.0.7/a", "http://[2001:db8::1]/b"], cpu_count=cores) == 4
    assert default_workers([], cpu_count=cores) == CHECKPOINT_DOWNLOAD_WORKERS


@pytest.mark.parametrize("workers", [0, -1, True, 1.5, "4"])
def test_workers_must_be_a_positive_whole_number(tmp_path: Path, workers: Any) -> None:
    with pytest.raises(ValidationError, match="workers must be a whole number"):
        CheckpointDownloader(dict, tmp_path, workers=workers)


def test_one_file_failing_midway_leaves_the_others_finished_then_resumes(
    link_server: Any, tmp_path: Path
) -> None:
    blobs = _shards(link_server)
    broken = SHARDS[2]
    cut = 120_000
    state = {"healthy": False, "cut": False}

    def before(handler: Any, name: str) -> bool:
        if name != broken or state["healthy"]:
            return True
        if not state["cut"]:
            # The first GET of this file sends part of the body, then the connection drops...
            state["cut"] = True
            data = blobs[broken]
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data[:cut])
            handler.wfile.flush()
            handler.close_connection = True
            return False
        # ...and every later one is refused as overloaded, until the retries are used up.
        _answer(handler, 503)
        return False

    _wrap(link_server, before)
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=_no_sleep, workers=4)
    with pytest.raises(CheckpointDownloadError, match="kept failing") as failure:
        downloader.run()
    downloader.close()
    assert broken in str(failure.value)
    assert not _download_threads()
    # The other four are finished and recorded; the broken one holds its first bytes as .partial.
    for name in SHARDS:
        if name != broken:
            assert (tmp_path / name).read_bytes() == blobs[name]
    assert not (tmp_path / broken).exists()
    assert (tmp_path / f"{broken}.partial").read_bytes() == blobs[broken][:cut]

    state["healthy"] = True
    link_server.requests.clear()
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=_no_sleep)
    try:
        result = downloader.run()
    finally:
        downloader.close()
    by_name = {entry["filename"]: entry for entry in result}
    assert by_name[broken]["resumed"] is True
    assert all(by_name[name]["already_present"] for name in SHARDS if name != broken)
    # Only the missing tail of the broken file went over the wire.
    assert [r["range"] for r in link_server.requests] == [f"bytes={cut}-"]
    assert all((tmp_path / name).read_bytes() == data for name, data in blobs.items())
    assert not list(tmp_path.glob("*.partial"))


def test_several_failed_files_are_named_together(link_server: Any, tmp_path: Path) -> None:
    blobs = _shards(link_server, 20_000)
    refused = {SHARDS[0], SHARDS[3]}

    def before(handler: Any, name: str) -> bool:
        if name in refused:
            _answer(handler, 500)
            return False
        return True

    _wrap(link_server, before)
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=_no_sleep, workers=4)
    with pytest.raises(CheckpointDownloadError, match="2 of 5 files failed") as failure:
        downloader.run()
    downloader.close()
    assert all(name in str(failure.value) for name in refused)
    assert all((tmp_path / name).read_bytes() == blobs[name] for name in SHARDS if name not in refused)


def test_a_stalled_file_is_abandoned_when_another_stops_it(link_server: Any, tmp_path: Path) -> None:
    _shards(link_server)
    first, stalled = SHARDS[0], SHARDS[1]
    stalled_read = threading.Event()
    original = link_server.handle

    def handle(handler: Any) -> None:
        name = handler.path.split("?", 1)[0].removeprefix("/f/")
        if name == first:
            # This file's bytes come only once the other one is stuck mid-body on the client.
            stalled_read.wait(DEADLINE_S)
        if name != stalled:
            original(handler)
            return
        # Headers and a few bytes, then nothing until the test ends: only an abort ends the read.
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(link_server.blobs[name])))
        handler.end_headers()
        handler.wfile.write(b"x" * 1000)
        handler.wfile.flush()
        link_server._stop.wait(DEADLINE_S * 4)

    link_server.handle = handle

    def on_bytes(name: str, done: int, total: int) -> None:
        if name == stalled and done == 1000:
            stalled_read.set()
        if name == first:
            raise _Stopped

    # A read timeout far past the deadline: the download can only return in time by aborting.
    links = LinkClient(timeouts=LinkTimeouts(connect=5.0, read=DEADLINE_S * 10), connections=4)
    downloader = CheckpointDownloader(link_server.export, tmp_path, on_bytes=on_bytes, links=links, workers=4)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            downloader.run()
        except BaseException as error:
            outcome.append(error)

    runner = threading.Thread(target=run)
    runner.start()
    runner.join(DEADLINE_S * 2)
    assert not runner.is_alive(), "the download kept waiting on the stalled file"
    links.close()
    assert stalled_read.is_set()
    assert len(outcome) == 1 and isinstance(outcome[0], _Stopped)
    assert not _download_threads()
    # The stalled file keeps what it got, as a partial file a later run continues.
    assert (tmp_path / f"{stalled}.partial").read_bytes() == b"x" * 1000
    assert not (tmp_path / stalled).exists()


def test_links_expired_for_several_files_are_exported_again_once(link_server: Any, tmp_path: Path) -> None:
    blobs = _shards(link_server, 30_000)
    link_server.expired_generations = {0}
    # The refusals of the first links wait until four files hold one, so several files see an
    # expired link before any fresh one exists (and a one-at-a-time download fails right here).
    barrier = threading.Barrier(4, timeout=DEADLINE_S)

    def before(handler: Any, name: str) -> bool:
        if "gen=0" in handler.path:
            barrier.wait()
        return True

    _wrap(link_server, before)
    downloader = CheckpointDownloader(link_server.export, tmp_path, sleep=_no_sleep, workers=4)
    try:
        downloader.run()
    finally:
        downloader.close()
    assert not barrier.broken
    assert link_server.exports == 2
    assert all((tmp_path / name).read_bytes() == data for name, data in blobs.items())


@pytest.mark.parametrize("names", [["w.bin", "w.bin.partial"], ["w.bin", "w.bin"]])
def test_names_that_would_share_a_path_are_refused_before_any_get(
    link_server: Any, tmp_path: Path, names: list[str]
) -> None:
    link_server.blobs.update(dict.fromkeys(names, b"data"))
    files = [{"filename": n, "url": f"{link_server.base}/f/{n}?gen=0", "size_bytes": 4} for n in names]
    downloader = CheckpointDownloader(lambda: {"files": files}, tmp_path)
    with pytest.raises(CheckpointDownloadError, match="share a path"):
        downloader.run()
    downloader.close()
    assert link_server.requests == []
    assert not list(tmp_path.iterdir())


def test_two_names_reaching_one_file_through_a_symlink_are_refused(link_server: Any, tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    names = ["real/w.bin", "alias/w.bin"]
    files = [{"filename": n, "url": f"{link_server.base}/f/{n}?gen=0", "size_bytes": 4} for n in names]
    downloader = CheckpointDownloader(lambda: {"files": files}, tmp_path)
    with pytest.raises(CheckpointDownloadError, match="share a path"):
        downloader.run()
    downloader.close()
    assert link_server.requests == []
    assert not list((tmp_path / "real").iterdir())


# --- against ct_local --------------------------------------------------------------------------------


@pytest.fixture
def five(local_server: Any) -> Iterator[dict[str, Any]]:
    """A job of ct_local with checkpoint cp_five: five random shards of about 1 MiB."""
    schema = "S_" + uuid.uuid4().hex[:10].upper()
    with CortexTrainingClient(base_url=local_server.base_url, database=DATABASE, schema=schema) as sdk:
        job_id = sdk.create_job_from_body({"sub_job_configs": [TRAINING]})["job_id"]
        local_server.add_checkpoint(job_id, checkpoint_id="cp_five", files=dict.fromkeys(SHARDS, "x"))
        folder = Path(local_server.state_dir) / "checkpoints" / job_id / "cp_five"
        blobs = {name: os.urandom(1024 * 1024 + 7 * n) for n, name in enumerate(SHARDS)}
        for name, data in blobs.items():
            (folder / name).write_bytes(data)
        yield {"sdk": sdk, "job_id": job_id, "blobs": blobs}


def test_ct_local_five_files_interrupted_midway_then_resumed(five: dict[str, Any], tmp_path) -> None:
    sdk, job_id, blobs = five["sdk"], five["job_id"], five["blobs"]
    lock = threading.Lock()
    progress: dict[str, int] = {}

    def on_bytes(name: str, done: int, total: int) -> None:
        with lock:
            progress[name] = done
            if sum(progress.values()) >= 2 * 1024 * 1024:
                raise _Stopped

    with pytest.raises(_Stopped):
        sdk.download_checkpoint(job_id, "cp_five", tmp_path, on_bytes=on_bytes)
    assert not _download_threads()
    # Whatever is under a shard's own name is the whole shard; everything else waits as .partial.
    partials = {p.name.removesuffix(".partial"): p.stat().st_size for p in tmp_path.glob("*.partial")}
    for name in SHARDS:
        if (tmp_path / name).exists():
            assert (tmp_path / name).read_bytes() == blobs[name]
    assert partials
    for name, size in partials.items():
        assert (tmp_path / f"{name}.partial").read_bytes() == blobs[name][:size]

    summary = sdk.download_checkpoint(job_id, "cp_five", tmp_path)
    by_name = {entry["filename"]: entry for entry in summary["files"]}
    assert [entry["filename"] for entry in summary["files"]] == SHARDS
    for name, size in partials.items():
        assert by_name[name]["resumed"] is (size > 0)
    assert all((tmp_path / name).read_bytes() == data for name, data in blobs.items())
    assert not list(tmp_path.glob("*.partial"))
    again = sdk.download_checkpoint(job_id, "cp_five", tmp_path, workers=2)
    assert all(entry["already_present"] for entry in again["files"])
