"""Persisted stdout reconstruction against ct_local: chunk order, damaged or missing chunks, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ct_testing import wait_until

from ct_core.downloads import ChunkDamaged
from ct_core.errors import DownloadCancelled, NoChunksError


def _lines(count: int, start: int = 0) -> list[str]:
    return [f"line {i}: " + "x" * (i % 17) + "\n" for i in range(start, start + count)]


def _stage(tree: Any, sub: str, texts: list[str], *, first: int = 0) -> None:
    for offset, text in enumerate(texts):
        tree.console(sub, first + offset, text)


def test_chunks_are_appended_in_name_order_with_many_workers(tree, tmp_path) -> None:
    sub = tree.sub()
    texts = _lines(60)
    _stage(tree, sub, texts)
    progress: list[str] = []
    counts: list[tuple[int, int]] = []
    result = tree.client.download_stdout_logs(
        tree.job_id,
        tmp_path,
        max_workers=8,
        progress=progress.append,
        on_chunk=lambda s, done, total, size: counts.append((done, total)),
        stale_after_seconds=None,
    )
    [entry] = result
    assert entry["sub_job_id"] == sub and entry["chunk_count"] == 60
    assert entry["first_artifact_uri"].startswith("snow://experiment/")
    assert entry["first_artifact_uri"].endswith(".gz") and "/_stdout/" in entry["first_artifact_uri"]
    saved = Path(entry["saved_path"])
    assert saved == tmp_path / sub / "stdout.log"
    assert saved.read_text() == "".join(texts)
    manifest = json.loads((tmp_path / sub / ".stdout.log.manifest.json").read_text())
    assert manifest["version"] == 1 and manifest["bytes"] == saved.stat().st_size
    assert len(manifest["names"]) == 60 and manifest["names"] == sorted(manifest["names"])
    assert not (tmp_path / sub / ".stdout.log.partial").exists()
    assert progress[0] == f"stdout: [--------------------] 0/60 {sub}"
    assert progress[-2] == f"stdout: [####################] 60/60 {sub}" and progress[-1] == "\n"
    assert counts[0] == (0, 60) and counts[-1] == (60, 60)
    assert [done for done, _ in counts] == sorted(done for done, _ in counts)


def test_both_roots_are_merged_and_the_primary_copy_wins(tree, tmp_path) -> None:
    sub = tree.sub()
    first = tree.console(sub, 1, "primary one\n")
    tree.put("checkpoints/_stdout", sub, first.name, b"shadowed copy\n")
    tree.console(sub, 2, "from checkpoints\n", folder="checkpoints/_stdout")
    tree.console(sub, 3, "primary three\n")
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=None)
    assert Path(entry["saved_path"]).read_text() == "primary one\nfrom checkpoints\nprimary three\n"
    assert entry["chunk_count"] == 3
    assert any("both" in warning for warning in entry["warnings"])


def test_resume_extends_and_a_fresh_download_rebuilds(tree, tmp_path) -> None:
    sub = tree.sub()
    _stage(tree, sub, _lines(5))
    tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=None)
    saved = tmp_path / sub / "stdout.log"
    # Bytes past the recorded length (a crash between write and manifest) are cut off on resume.
    with saved.open("ab") as sink:
        sink.write(b"garbage after the committed length")
    _stage(tree, sub, _lines(3, start=5), first=5)
    progress: list[str] = []
    [entry] = tree.client.download_stdout_logs(
        tree.job_id, tmp_path, resume=True, progress=progress.append, stale_after_seconds=None
    )
    assert saved.read_text() == "".join(_lines(8))
    assert entry["chunk_count"] == 8
    # Only the three new chunks were counted (and fetched).
    assert progress[0].endswith(f"0/3 {sub}")
    nothing_new: list[str] = []
    tree.client.download_stdout_logs(
        tree.job_id, tmp_path, resume=True, progress=nothing_new.append, stale_after_seconds=None
    )
    assert nothing_new == [f"stdout: no new chunks for {sub}\n"]
    rebuilt: list[str] = []
    tree.client.download_stdout_logs(tree.job_id, tmp_path, progress=rebuilt.append, stale_after_seconds=None)
    assert rebuilt[0].endswith(f"0/8 {sub}")
    assert saved.read_text() == "".join(_lines(8))


def test_damaged_chunk_is_rolled_back_skipped_and_listed(tree, tmp_path) -> None:
    sub = tree.sub()
    _stage(tree, sub, ["one\n", "two\n"])
    bad = tree.put("_stdout", sub, "console.20260101-000002.bad.gz", b"\x1f\x8b\x08\x00truncated", raw=True)
    tree.console(sub, 3, "four\n")
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=None)
    saved = Path(entry["saved_path"])
    assert saved.read_text() == "one\ntwo\nfour\n"
    assert entry["chunk_count"] == 3
    assert entry["skipped_chunks"] == [entry["first_artifact_uri"].rsplit("/", 1)[0] + "/" + bad.name]
    manifest = json.loads((tmp_path / sub / ".stdout.log.manifest.json").read_text())
    assert manifest["skipped"] == [f"_stdout/{sub}/{bad.name}"]
    assert f"_stdout/{sub}/{bad.name}" in manifest["names"]

    # strict raises on the first damaged chunk.
    with pytest.raises(ChunkDamaged, match=bad.name):
        tree.client.download_stdout_logs(
            tree.job_id, tmp_path / "strict", strict=True, stale_after_seconds=None
        )

    # Once repaired, a resume keeps the skip but a fresh download includes it.
    bad.write_bytes(__import__("gzip").compress(b"three\n"))
    tree.client.download_stdout_logs(tree.job_id, tmp_path, resume=True, stale_after_seconds=None)
    assert saved.read_text() == "one\ntwo\nfour\n"
    [fresh] = tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=None)
    assert saved.read_text() == "one\ntwo\nthree\nfour\n"
    assert "skipped_chunks" not in fresh


def test_transient_errors_are_retried(tree, tmp_path) -> None:
    sub = tree.sub()
    _stage(tree, sub, _lines(4))
    tree.server.set_faults(
        {"path": "/_artifacts/.*console\\.", "method": "GET", "status": 503, "count": 3},
        {"path": "/_artifacts/[^/]+/[^/]+$", "method": "GET", "status": 502, "count": 1},
    )
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path, max_workers=2, stale_after_seconds=None)
    assert Path(entry["saved_path"]).read_text() == "".join(_lines(4))


def test_a_chunk_removed_after_the_listing_is_skipped(tree, tmp_path) -> None:
    sub = tree.sub()
    _stage(tree, sub, _lines(3))
    doomed = tree.console(sub, 9, "gone\n")

    def delete_at_start(sub_job_id: str, done: int, total: int, size: int) -> None:
        if done == 0:
            doomed.unlink(missing_ok=True)

    [entry] = tree.client.download_stdout_logs(
        tree.job_id, tmp_path, max_workers=1, on_chunk=delete_at_start, stale_after_seconds=None
    )
    assert Path(entry["saved_path"]).read_text() == "".join(_lines(3))
    assert entry["skipped_chunks"][0].endswith(doomed.name)


def test_cancel_keeps_progress_for_resume(tree, tmp_path) -> None:
    sub = tree.sub()
    _stage(tree, sub, _lines(20))

    def cancel_after_five(sub_job_id: str, done: int, total: int, size: int) -> None:
        if done == 5:
            raise DownloadCancelled("stop here")

    with pytest.raises(DownloadCancelled) as caught:
        tree.client.download_stdout_logs(
            tree.job_id, tmp_path, max_workers=2, on_chunk=cancel_after_five, stale_after_seconds=None
        )
    assert getattr(caught.value, "download_progress_saved", False) is True
    assert not (tmp_path / sub / "stdout.log").exists()
    partial_manifest = json.loads((tmp_path / sub / ".stdout.log.partial.manifest.json").read_text())
    assert len(partial_manifest["names"]) == 5
    progress: list[str] = []
    tree.client.download_stdout_logs(
        tree.job_id, tmp_path, resume=True, progress=progress.append, stale_after_seconds=None
    )
    assert progress[0].endswith(f"0/15 {sub}")
    assert (tmp_path / sub / "stdout.log").read_text() == "".join(_lines(20))


def test_named_sub_job_without_chunks_raises_before_any_get(tree, tmp_path) -> None:
    _stage(tree, tree.sub(), ["a\n"])
    with pytest.raises(NoChunksError) as caught:
        tree.client.download_stdout_logs(
            tree.job_id, tmp_path, sub_job_ids=[tree.sub("sampling:0")], stale_after_seconds=None
        )
    assert isinstance(caught.value, ValueError)
    assert caught.value.sub_job_ids == [tree.sub("sampling:0")]
    assert caught.value.available == [tree.sub()]
    assert not list(tmp_path.iterdir())


def test_listing_scope_and_foreign_folders(tree, tmp_path) -> None:
    _stage(tree, tree.sub(), ["train\n"])
    _stage(tree, tree.sub("sampling:0"), ["sample\n"])
    tree.put("_stdout", "other-job:training:0", "console.20260101-000001.x.gz", b"foreign\n")
    tree.put("_stdout", tree.sub(), "notes.txt.gz", b"not a chunk name\n")
    only = tree.client.download_stdout_logs(
        tree.job_id, tmp_path / "one", sub_job_ids=[tree.sub("sampling:0")], stale_after_seconds=None
    )
    assert [e["sub_job_id"] for e in only] == [tree.sub("sampling:0")]
    every = tree.client.download_stdout_logs(tree.job_id, tmp_path / "all", stale_after_seconds=None)
    assert sorted(e["sub_job_id"] for e in every) == sorted([tree.sub(), tree.sub("sampling:0")])
    assert (tmp_path / "all" / tree.sub() / "stdout.log").read_text() == "train\n"


def test_job_without_chunks_reports_zero(tree, tmp_path) -> None:
    progress: list[str] = []
    assert (
        tree.client.download_stdout_logs(
            tree.job_id, tmp_path, progress=progress.append, stale_after_seconds=None
        )
        == []
    )
    assert progress == ["stdout: found 0 chunks\n"]


def test_running_job_gets_a_late_chunk_warning(tree, tmp_path) -> None:
    tree.client.wait_for_job(tree.job_id)
    _stage(tree, tree.sub(), ["a\n"])
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path)
    assert any("resume=True" in warning for warning in entry["warnings"])


_KILLED = """
import sys
from ct_core import CortexTrainingClient
client = CortexTrainingClient(base_url=sys.argv[1], database=sys.argv[2], schema=sys.argv[3])
client.download_stdout_logs(sys.argv[4], sys.argv[5], max_workers=1, stale_after_seconds=None)
"""


def test_sigkill_midway_then_resume_is_byte_identical(tree, tmp_path, monkeypatch) -> None:
    sub = tree.sub()
    texts = _lines(120)
    _stage(tree, sub, texts)
    # Slow every GET down so the download is still running when it is killed. The first partial
    # manifest is written after 5 s (or 64 chunks); the delay leaves the rest of the download, about
    # 25 s, for this process to see it and kill, even on a machine too busy to poll often.
    tree.server.set_faults(
        {"path": "/_artifacts/.*console\\.", "action": "delay", "delay_s": 0.25, "count": None}
    )
    out = tmp_path / "out"
    args = [tree.server.base_url, tree.client.database, tree.client.schema, tree.job_id, str(out)]
    process = subprocess.Popen([sys.executable, "-c", _KILLED, *args])
    partial_manifest = out / sub / ".stdout.log.partial.manifest.json"

    def partial_written() -> bool:
        assert process.poll() is None, "the download ended before it could be killed"
        return partial_manifest.exists()

    try:
        wait_until(partial_written, timeout=60, message="the download never wrote its partial manifest")
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert not (out / sub / "stdout.log").exists()
    tree.server.clear_faults()
    [entry] = tree.client.download_stdout_logs(tree.job_id, out, resume=True, stale_after_seconds=None)
    assert Path(entry["saved_path"]).read_bytes() == "".join(texts).encode()
    assert not (out / sub / ".stdout.log.partial").exists()


def _wait_for_server_clock(tree: Any, *, seconds_in_state: float) -> None:
    from ct_core.downloads.logs import _parse_time, job_and_server_now

    def long_enough_in_state() -> bool:
        job, now = job_and_server_now(tree.client, tree.job_id)
        changed = _parse_time(job["state_changed_at"])
        assert changed is not None
        return (now - changed).total_seconds() >= seconds_in_state

    wait_until(long_enough_in_state, timeout=60, interval=0.2, message="the server clock never moved on")


def test_old_newest_chunk_of_a_running_job_warns_of_a_stall(tree, tmp_path) -> None:
    # The staged chunk is named 2026-01-01 00:00:01; the job has been running for a moment only.
    _stage(tree, tree.sub(), ["a\n"], first=1)
    [fresh_job] = tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=600)
    assert not any("stalled" in w for w in fresh_job.get("warnings", []))
    # Once the job has been in its state longer than the threshold, the old chunk is a stall. Ages
    # are judged by the server's Date header (whole seconds, refreshed about once a second by the
    # server's loop), so wait until that clock itself is past the threshold.
    tree.client.wait_for_job(tree.job_id)
    _wait_for_server_clock(tree, seconds_in_state=2)
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=1)
    [stall] = [w for w in entry["warnings"] if "stalled" in w]
    assert stall.startswith(f"newest saved stdout output for {tree.sub()} is from 2026-01-01 00:00:01 UTC (")
    assert stall.endswith("uploads may be stalled. Contact support if this persists.")
    tree.server.force_status(tree.job_id, "failed", "boom")
    [ended] = tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=1)
    assert not any("stalled" in w for w in ended.get("warnings", []))


def test_a_second_download_into_the_same_folder_is_refused(tree, tmp_path) -> None:
    from ct_core.downloads.chunks import STDOUT, DownloadInProgress, exclusive

    _stage(tree, tree.sub(), ["a\n"])
    with exclusive(tmp_path, STDOUT), pytest.raises(DownloadInProgress, match="another stdout download"):
        tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=None)
    # Metrics may share the folder meanwhile, and the lock is free again afterwards.
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path, stale_after_seconds=None)
    assert Path(entry["saved_path"]).read_text() == "a\n"


def _job_route(tree: Any) -> str:
    return f"/cortex-training/{tree.job_id}$"


def test_a_slow_status_lookup_never_holds_the_download_back(tree, tmp_path, monkeypatch) -> None:
    from ct_core.downloads import logs

    monkeypatch.setattr(logs, "STATUS_LOOKUP_GRACE_S", 0.3)
    _stage(tree, tree.sub(), ["a\n", "b\n"])
    # The lookup is held for a minute; a download that waited for it would take that long. The bound
    # below is that minute, far from the 0.3 s grace, so a busy machine cannot make it fail.
    tree.server.set_faults({"path": _job_route(tree), "method": "GET", "action": "delay", "delay_s": 60})
    started = time.monotonic()
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path)
    elapsed = time.monotonic() - started
    tree.server.clear_faults()
    assert Path(entry["saved_path"]).read_text() == "a\nb\n"
    # The lookup was still waiting out its delay: the download returned after the short grace,
    # without the notices that need the job's status.
    assert elapsed < 50.0
    assert "warnings" not in entry


def test_a_lookup_slower_than_the_fetches_is_waited_for_within_the_grace(tree, tmp_path) -> None:
    tree.client.wait_for_job(tree.job_id)
    _stage(tree, tree.sub(), _lines(3))
    tree.server.set_faults({"path": _job_route(tree), "method": "GET", "action": "delay", "delay_s": 1.0})
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path)
    assert any("resume=True" in warning for warning in entry["warnings"])


def test_a_failed_status_lookup_costs_only_the_notices(tree, tmp_path) -> None:
    _stage(tree, tree.sub(), ["a\n"])
    tree.server.set_faults(
        {"path": _job_route(tree), "method": "GET", "action": "respond", "status": 404, "count": None}
    )
    [entry] = tree.client.download_stdout_logs(tree.job_id, tmp_path)
    assert Path(entry["saved_path"]).read_text() == "a\n"
    assert "warnings" not in entry


def test_first_progress_line_comes_before_the_folder_changes(tree, tmp_path) -> None:
    _stage(tree, tree.sub(), ["a\n", "b\n"])

    def stop(text: str) -> None:
        raise DownloadCancelled("seen the first line")

    with pytest.raises(DownloadCancelled):
        tree.client.download_stdout_logs(tree.job_id, tmp_path, progress=stop, stale_after_seconds=None)
    # Stopped at the first line: the sub-job's folder was never created, nothing was saved.
    assert not (tmp_path / tree.sub()).exists()
