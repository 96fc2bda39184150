"""ct_core.fs on real files: what lands, with which permissions, and that a failed write leaves no trace."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from ct_core import fs

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("durable", [True, False])
def test_atomic_write_replaces_the_file_with_bytes_or_text(tmp_path: Path, durable: bool) -> None:
    target = tmp_path / "config.json"
    target.write_text("old", encoding="utf-8")
    fs.atomic_write(target, b"\x00binary\xff", durable=durable)
    assert target.read_bytes() == b"\x00binary\xff"
    fs.atomic_write(target, "naïve\nline\n", durable=durable)
    # Text is UTF-8 and its newlines are written as given.
    assert target.read_bytes() == "naïve\nline\n".encode()
    assert _leftovers(tmp_path) == []


@posix_only
def test_atomic_write_sets_the_mode_exactly(tmp_path: Path) -> None:
    target = tmp_path / "connections.toml"
    target.write_text("token = 'x'\n", encoding="utf-8")
    target.chmod(0o644)
    fs.atomic_write(target, "token = 'y'\n", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    fs.atomic_write(target, "token = 'z'\n", mode=0o640)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


@posix_only
def test_atomic_write_without_a_mode_gives_what_a_plain_write_gives(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text("{}", encoding="utf-8")
    atomic = tmp_path / "atomic.json"
    fs.atomic_write(atomic, "{}")
    assert stat.S_IMODE(atomic.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    # A folder in the destination's place: the rename fails after the data was written.
    target = tmp_path / "manifest.json"
    target.mkdir()
    (target / "inside").write_text("kept", encoding="utf-8")
    with pytest.raises(OSError):
        fs.atomic_write(target, b"new")
    assert (target / "inside").read_text(encoding="utf-8") == "kept"
    assert _leftovers(tmp_path) == []


def test_a_write_that_fails_midway_leaves_no_temporary(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "state.json"
    target.write_text("old", encoding="utf-8")

    def refuse(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", refuse)
    with pytest.raises(OSError, match="No space left"):
        fs.atomic_write(target, "new", durable=True)
    assert target.read_text(encoding="utf-8") == "old"
    assert _leftovers(tmp_path) == []


def test_temporary_names_stay_hidden_beside_their_destination(tmp_path: Path) -> None:
    # A leftover of a killed process sorts with its destination, so a cleanup glob finds it.
    assert fs.temp_path_for(tmp_path / "stdout.log").name.startswith(".stdout.log.")
    assert fs.temp_path_for(tmp_path / ".stdout.log.manifest.json").name.startswith(
        ".stdout.log.manifest.json."
    )
    assert fs.temp_path_for(tmp_path / "a").parent == tmp_path
    assert fs.temp_path_for(tmp_path / "a") != fs.temp_path_for(tmp_path / "a")
    assert fs.temp_path_for(tmp_path / "a").suffix == ".tmp"


@pytest.mark.parametrize("durable", [True, False])
def test_atomic_replace_promotes_a_finished_file(tmp_path: Path, durable: bool) -> None:
    partial = tmp_path / "w.bin.partial"
    partial.write_bytes(b"payload")
    final = tmp_path / "w.bin"
    final.write_bytes(b"older")
    fs.atomic_replace(partial, final, durable=durable)
    assert final.read_bytes() == b"payload"
    assert not partial.exists()


def test_atomic_replace_fsyncs_file_and_folder_only_when_durable(tmp_path: Path, monkeypatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    (tmp_path / "a.partial").write_bytes(b"a")
    fs.atomic_replace(tmp_path / "a.partial", tmp_path / "a", durable=False)
    assert synced == []
    (tmp_path / "b.partial").write_bytes(b"b")
    fs.atomic_replace(tmp_path / "b.partial", tmp_path / "b", durable=True)
    assert len(synced) == (2 if sys.platform != "win32" else 1)


def test_fsync_dir_of_a_missing_folder_is_a_no_op(tmp_path: Path) -> None:
    fs.fsync_dir(tmp_path / "missing")
    fs.fsync_dir(tmp_path)


def _held_elsewhere(path: Path) -> bool:
    """Whether another open file description is refused the lock on `path` right now."""
    import fcntl
    import os

    probe = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False
    finally:
        os.close(probe)


def test_exclusive_lock_is_held_for_the_block_and_released_after(tmp_path: Path) -> None:
    lock = tmp_path / "state.lock"
    with fs.exclusive_lock(lock):
        assert _held_elsewhere(lock)
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert not _held_elsewhere(lock)


def test_exclusive_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    lock = tmp_path / "state.lock"
    with pytest.raises(RuntimeError), fs.exclusive_lock(lock):
        raise RuntimeError("boom")
    assert not _held_elsewhere(lock)


def test_kept_secret_is_made_once_and_read_back_afterwards(tmp_path: Path) -> None:
    from ct_core.fs import kept_secret

    path = tmp_path / "service-key"
    made = kept_secret(path, lambda: "first")
    again = kept_secret(path, lambda: "second")
    assert made == ("first", True)
    assert again == ("first", False)
    assert path.stat().st_mode & 0o777 == 0o600
    path.write_text("\n")
    assert kept_secret(path, lambda: "third") == ("third", True)


def test_kept_secret_started_together_gives_every_caller_the_same_secret(tmp_path: Path) -> None:
    import secrets
    import threading

    from ct_core.fs import kept_secret

    path = tmp_path / "service-token"
    barrier = threading.Barrier(8)
    seen: list[str] = []

    def start() -> None:
        barrier.wait()
        seen.append(kept_secret(path, lambda: secrets.token_hex(8))[0])

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == 1 and len(seen) == 8
