"""Newest-first previews of stdout and metrics downloads against ct_local."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ct_core.downloads.artifacts import LocalArtifactStore
from ct_core.errors import DownloadCancelled


def _minute_chunks(tree: Any, sub: str, count: int) -> list[str]:
    """``count`` console chunks one minute apart; returns their texts in order."""
    texts = [f"minute {i}\n" for i in range(count)]
    for i, text in enumerate(texts):
        tree.console(sub, i * 60, text)
    return texts


@pytest.fixture
def fetched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every chunk GET the store makes, in the order they start (the real GET still runs)."""
    seen: list[str] = []
    real_get = LocalArtifactStore.get

    def counting_get(self: LocalArtifactStore, path: str, directory: Path, **kwargs: Any) -> Path:
        seen.append(path.rsplit("/", 1)[-1])
        return real_get(self, path, directory, **kwargs)

    monkeypatch.setattr(LocalArtifactStore, "get", counting_get)
    return seen


def test_stdout_preview_shows_the_newest_minutes_first_without_extra_gets(tree, tmp_path, fetched) -> None:
    sub = tree.sub()
    texts = _minute_chunks(tree, sub, 40)
    shown: list[dict[str, Any]] = []
    counts: list[int] = []

    def on_preview(sub_job_id: str, path: str, chunk_count: int, first: str, last: str) -> None:
        shown.append(
            {
                "sub": sub_job_id,
                "text": Path(path).read_text(),
                "count": chunk_count,
                "first": first,
                "last": last,
                "path": path,
                "appended_before": list(counts),
            }
        )

    [entry] = tree.client.download_stdout_logs(
        tree.job_id,
        tmp_path,
        sub_job_ids=[sub],
        max_workers=1,
        stale_after_seconds=None,
        on_chunk=lambda s, done, total, size: counts.append(done),
        preview_seconds=300,
        on_preview=on_preview,
    )
    [preview] = shown
    # 300 s plus two minutes of name slack before the newest chunk (minute 39): minutes 32..39.
    assert preview["sub"] == sub and preview["count"] == 8
    assert preview["text"] == "".join(texts[32:])
    assert preview["first"].endswith(".gz") and "/_stdout/" in preview["first"]
    assert preview["first"] == entry["last_artifact_uri"].rsplit("/", 1)[0] + "/" + fetched[0]
    assert preview["last"] == entry["last_artifact_uri"]
    # Nothing was appended yet when the preview arrived, and its file is gone afterwards.
    assert preview["appended_before"] == [0]
    assert not Path(preview["path"]).exists()
    # The preview's chunks were fetched first, and no chunk was fetched twice.
    assert len(fetched) == 40 and len(set(fetched)) == 40
    assert fetched[:8] == sorted(fetched)[32:]
    assert Path(entry["saved_path"]).read_text() == "".join(texts)
    assert entry["chunk_count"] == 40


def test_no_preview_when_the_window_is_most_of_what_is_new(tree, tmp_path) -> None:
    sub = tree.sub()
    texts = _minute_chunks(tree, sub, 6)
    calls: list[Any] = []
    [entry] = tree.client.download_stdout_logs(
        tree.job_id,
        tmp_path,
        sub_job_ids=[sub],
        stale_after_seconds=None,
        preview_seconds=600,
        on_preview=lambda *args: calls.append(args),
    )
    assert calls == []
    assert Path(entry["saved_path"]).read_text() == "".join(texts)


def test_no_stdout_preview_without_sub_job_ids(tree, tmp_path) -> None:
    _minute_chunks(tree, tree.sub(), 30)
    calls: list[Any] = []
    tree.client.download_stdout_logs(
        tree.job_id,
        tmp_path,
        stale_after_seconds=None,
        preview_seconds=60,
        on_preview=lambda *args: calls.append(args),
    )
    assert calls == []


def test_a_damaged_chunk_is_left_out_of_the_preview_and_skipped(tree, tmp_path) -> None:
    sub = tree.sub()
    texts = _minute_chunks(tree, sub, 20)
    broken = tree.put("_stdout", sub, "console.20260101-001930.zzzz.gz", b"not gzip at all", raw=True)
    shown: list[str] = []
    [entry] = tree.client.download_stdout_logs(
        tree.job_id,
        tmp_path,
        sub_job_ids=[sub],
        stale_after_seconds=None,
        preview_seconds=120,
        on_preview=lambda s, path, count, first, last: shown.append(Path(path).read_text()),
    )
    # Window: 240 s before the broken chunk named 00:19:30 (the newest), so minutes 16..19 and the
    # broken one; only the readable ones show.
    assert shown == ["".join(texts[16:])]
    assert entry["skipped_chunks"] == [entry["first_artifact_uri"].rsplit("/", 1)[0] + "/" + broken.name]
    assert Path(entry["saved_path"]).read_text() == "".join(texts)


def test_an_exception_from_on_preview_stops_the_download(tree, tmp_path) -> None:
    sub = tree.sub()
    _minute_chunks(tree, sub, 20)

    def stop(*args: Any) -> None:
        raise DownloadCancelled("seen enough")

    with pytest.raises(DownloadCancelled):
        tree.client.download_stdout_logs(
            tree.job_id,
            tmp_path,
            sub_job_ids=[sub],
            stale_after_seconds=None,
            preview_seconds=60,
            on_preview=stop,
        )
    assert not (tmp_path / sub / "stdout.log").exists()


def test_preview_options_go_together(tree, tmp_path) -> None:
    with pytest.raises(ValueError, match="together"):
        tree.client.download_metrics(tree.job_id, tmp_path, preview_seconds=60)
    with pytest.raises(ValueError, match="together"):
        tree.client.download_stdout_logs(tree.job_id, tmp_path, on_preview=lambda *a: None)
    with pytest.raises(ValueError, match=">= 0"):
        tree.client.download_metrics(tree.job_id, tmp_path, preview_seconds=-1, on_preview=lambda *a: None)


def test_metrics_priority_sub_job_is_written_first_and_previewed(tree, tmp_path) -> None:
    training, sampling = tree.sub(), tree.sub("sampling:0")
    for sub in (training, sampling):
        for minute in range(12):
            row = {"record_version": 2, "sub_job_id": sub, "sample_ts": f"2026-01-01T00:{minute:02d}:00Z"}
            tree.put(
                "_metrics",
                sub,
                f"gpu.20260101-00{minute:02d}00.m{minute}.gz",
                (json.dumps(row) + "\n").encode(),
            )
    committed: list[str] = []
    previews: list[tuple[str, list[str]]] = []

    def on_preview(sub: str, path: str, count: int, first: str, last: str) -> None:
        rows = [json.loads(line)["sample_ts"] for line in Path(path).read_text().splitlines()]
        previews.append((sub, rows))

    tree.client.download_metrics(
        tree.job_id,
        tmp_path,
        stale_after_seconds=None,
        priority=[sampling],
        on_commit=lambda entry: committed.append(entry["sub_job_id"]),
        preview_seconds=60,
        on_preview=on_preview,
    )
    assert committed == [sampling, training]
    # 60 s plus the two-minute slack before 00:11: the rows of 00:08..00:11, oldest first.
    assert previews == [(sampling, [f"2026-01-01T00:{m:02d}:00Z" for m in range(8, 12)])]
