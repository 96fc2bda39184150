"""How a chunked download lists its two roots: together, and with a bounded wait."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ct_core.downloads import chunks
from ct_core.downloads.artifacts import ArtifactEntry, ArtifactError
from ct_core.downloads.chunks import STDOUT, ChunkDownload

RUN_URI = "snow://experiment/DB.SCHEMA.EXP/versions/RUN_1/"


class _StuckStore:
    """A store whose ``_stdout`` listing is refused and whose other listing waits for a release."""

    run_uri = RUN_URI

    def __init__(self) -> None:
        self.release = threading.Event()
        self.second_finished = threading.Event()

    def list(self, root: str) -> list[ArtifactEntry]:
        if root.startswith("_stdout"):
            raise ArtifactError("LIST refused")
        self.release.wait(60)
        self.second_finished.set()
        return []

    def get(self, path: str, directory: Path, *, timeout: float | None = None) -> Path:
        raise AssertionError("no GET after a failed listing")

    def close(self, *, keep: bool = False) -> None:
        return None


def test_a_failed_listing_waits_a_bounded_time_for_the_other(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(chunks, "LISTING_GRACE_S", 0.05)
    store = _StuckStore()
    download = ChunkDownload(store, "job-1", tmp_path, STDOUT)
    try:
        with pytest.raises(ArtifactError, match="LIST refused"):
            download.list_chunks()
        # The call returned while the other listing was still running; the session is not kept.
        assert not store.second_finished.is_set()
        assert download.listing_left_running
    finally:
        store.release.set()
    assert store.second_finished.wait(60)


def test_both_listings_finishing_leave_nothing_running(monkeypatch, tmp_path: Path) -> None:
    # The other listing returns at once; the grace only has to outlast a busy machine's scheduling.
    monkeypatch.setattr(chunks, "LISTING_GRACE_S", 60.0)
    store = _StuckStore()
    store.release.set()
    download = ChunkDownload(store, "job-1", tmp_path, STDOUT)
    with pytest.raises(ArtifactError, match="LIST refused"):
        download.list_chunks()
    assert store.second_finished.is_set() and not download.listing_left_running
