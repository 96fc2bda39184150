"""The TUI's local log cache on real files: names, round trips, damaged files, rotation, modes, location."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ct_cli.tui import cache
from ct_cli.tui.cache import LogCache

#: Ids a service could send, and ones it should not but the cache must still survive.
ODD_IDS = [
    "job-1:training:0",
    "job/../../etc/passwd",
    ".",
    "..",
    "a b\tc\nd",
    "100%_done",
    "%41",
    "A",
    "Ünïcödé 日本:sampling:1",
    "back\\slash",
    "x" * 150 + ":training:0",
    "y" * 400,
    "z" * 400 + "!",
]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """A umask that takes nothing away, so only the cache's own modes keep files private."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def _entries(start: int, count: int) -> list[dict[str, str]]:
    return [{"_raw": f"2025-01-01T00:00:00Z line {index}"} for index in range(start, start + count)]


def test_every_id_has_one_plain_name_that_maps_back() -> None:
    names = [cache.safe_name(identifier) for identifier in ODD_IDS]
    assert len(set(names)) == len(names)
    for identifier, name in zip(ODD_IDS, names, strict=True):
        assert "/" not in name and "\\" not in name and name not in (".", "..")
        assert len(name) <= cache.MAX_NAME
        assert all(char.isascii() and (char.isalnum() or char in "-_.%~") for char in name), name
        if len(identifier) < 100:
            assert cache.original_name(name) == identifier
    assert cache.safe_name("job-1:training:0") == "job-1%3Atraining%3A0"
    assert cache.safe_name("..") == "%2E%2E"
    # Two long ids that share their first 200 escaped characters still get different names.
    assert cache.safe_name("y" * 400) != cache.safe_name("y" * 401)
    assert cache.original_name(cache.safe_name("y" * 400)) is None
    assert cache.original_name("not%2") is None and cache.original_name("lower%3a") is None


def test_an_empty_id_is_refused_with_a_message() -> None:
    with pytest.raises(ValueError, match="non-empty id"):
        cache.safe_name("")


@pytest.mark.parametrize("job_id", ["job-1", "job/../../x", "..", "y" * 400])
def test_pages_round_trip_for_odd_ids(tmp_path: Path, job_id: str) -> None:
    store = LogCache(job_id, root=tmp_path / "cache")
    for index, sub in enumerate(ODD_IDS):
        assert store.append(
            sub,
            [{"_raw": f"only line of {index}"}, {"level": "INFO", "msg": "é\udc80"}],
            f"c{index}",
            start=None,
        )
    for index, sub in enumerate(ODD_IDS):
        replay = store.load(sub)
        assert replay.entries == [{"_raw": f"only line of {index}"}, {"level": "INFO", "msg": "é\udc80"}]
        assert replay.cursor == f"c{index}" and replay.corrupt == 0
    assert store.sources() == sorted(ODD_IDS)
    # Everything stays under the job's own folder, whatever the ids say.
    for path in (tmp_path / "cache").rglob("*"):
        assert path.resolve().is_relative_to((tmp_path / "cache" / "jobs").resolve())
    assert LogCache(job_id, root=tmp_path / "cache").load("never-written") == cache.Replay()


def test_pages_resume_from_their_cursor_and_a_page_from_an_old_cursor_is_not_written(tmp_path: Path) -> None:
    first = LogCache("job-1", root=tmp_path)
    second = LogCache("job-1", root=tmp_path)  # another screen, or another ct tui, on the same job
    sub = "job-1:training:0"
    assert first.append(sub, _entries(0, 3), "c3", start=None)
    assert not second.append(sub, _entries(0, 3), "c3", start=None)  # the same page again
    assert second.append(sub, _entries(3, 2), "c5", start="c3")
    assert not first.append(sub, _entries(3, 2), "c5", start="c3")
    assert not first.append(sub, [], "c9", start="c5")  # an empty page writes nothing
    replay = LogCache("job-1", root=tmp_path).load(sub)
    assert replay.entries == _entries(0, 5) and replay.cursor == "c5"
    assert LogCache("job-1", root=tmp_path).load(sub, limit=2).entries == _entries(3, 2)


def test_a_page_without_a_cursor_keeps_the_previous_one(tmp_path: Path) -> None:
    store = LogCache("job-1", root=tmp_path)
    store.append("s", _entries(0, 1), "c1", start=None)
    store.append("s", _entries(1, 1), None, start="c1")
    store.append("s", _entries(2, 1), "", start="c1")
    replay = store.load("s")
    assert replay.cursor == "c1" and replay.entries == _entries(0, 3)


def test_damaged_lines_are_skipped_and_counted_and_a_cut_page_is_not_replayed(tmp_path: Path) -> None:
    store = LogCache("job-1", root=tmp_path)
    store.append("s", _entries(0, 2), "c2", start=None)
    path = store.path_for("s")
    with path.open("ab") as handle:
        handle.write(b"{not json\n[1, 2]\n\xff\xfe\n")
        handle.write(json.dumps({"e": {"_raw": "a page a crash cut short"}}).encode() + b"\n")
        handle.write(b'{"e": {"_raw": "cut in the mid')  # no newline: the write stopped here
    replay = store.load("s")
    assert replay.entries == _entries(0, 2) and replay.cursor == "c2"
    assert replay.corrupt == 4 and replay.uncovered == 1  # three bad lines and the torn one
    # The next page lands on a line of its own, and the torn line stays one unreadable line.
    assert store.append("s", _entries(2, 1), "c3", start="c2")
    replay = store.load("s")
    assert replay.entries == _entries(0, 3) and replay.cursor == "c3"
    assert replay.corrupt == 4 and replay.uncovered == 1


def test_a_file_holding_another_ids_log_is_neither_read_nor_written(tmp_path: Path) -> None:
    store = LogCache("job-1", root=tmp_path)
    store.append("Sub", _entries(0, 1), "c1", start=None)
    # What a file system that ignores case would do: "sub" opens the file of "Sub".
    store.path_for("Sub").rename(store.path_for("sub"))
    assert store.load("sub") == cache.Replay()
    assert not store.append("sub", _entries(5, 1), "c9", start="c1")
    assert store.sources() == []


def test_rotation_keeps_the_newest_entries_and_the_cursor(tmp_path: Path) -> None:
    limit = 4096
    store = LogCache("job-1", root=tmp_path, max_bytes=limit, keep_lines=25)
    cursor: str | None = None
    for page in range(120):
        assert store.append("s", _entries(page * 2, 2), f"c{page}", start=cursor)
        cursor = f"c{page}"
        assert store.path_for("s").stat().st_size <= limit + 512  # at most one page over the limit
    replay = store.load("s", limit=None)
    numbers = [int(entry["_raw"].rsplit(" ", 1)[1]) for entry in replay.entries]
    assert replay.cursor == "c119" and numbers[-1] == 239
    assert numbers == list(range(numbers[0], 240))  # the newest part, with no gap
    assert 0 < len(numbers) < 240 and replay.corrupt == 0 and replay.uncovered == 0
    # Right after a rotation at most `keep_lines` entries are left.
    fresh = LogCache("job-2", root=tmp_path, max_bytes=limit, keep_lines=5)
    fresh.append("s", _entries(0, 100), "c0", start=None)  # about 5.5 KiB: past the limit
    assert fresh.load("s", limit=None).entries == _entries(95, 5)


def test_files_are_owner_only_whatever_the_umask(tmp_path: Path, loose_umask: None) -> None:
    root = tmp_path / "made" / "by-the-cache"
    store = LogCache("job-1", root=root)
    store.append("s", _entries(0, 1), "c1", start=None)
    assert _mode(store.path_for("s")) == 0o600
    assert _mode(store.folder / ".lock") == 0o600
    assert _mode(store.folder) == 0o700 and _mode(store.folder.parent) == 0o700
    assert _mode(root) == 0o700 and _mode(root.parent) == 0o700
    rotating = LogCache("job-1", root=root, max_bytes=200)
    rotating.append("s", _entries(1, 5), "c2", start="c1")  # rewritten by the rotation
    assert _mode(store.path_for("s")) == 0o600


def test_the_location_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    assert cache.cache_root() == tmp_path / "home" / ".cache" / "cortex-training" / "tui"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_root() == tmp_path / "xdg" / "cortex-training" / "tui"
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "mine"))
    assert cache.cache_root() == tmp_path / "mine"
    LogCache("job-1").append("s", _entries(0, 1), "c1", start=None)
    assert (tmp_path / "mine" / "jobs" / "job-1" / "s.jsonl").is_file()


def test_bad_rotation_limits_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="rotation limits"):
        LogCache("job-1", root=tmp_path, max_bytes=0)
