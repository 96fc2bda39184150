"""Writing files so that a reader only ever sees the old content or the whole new content.

Every file ct writes in place of another (connection profiles, the remembered login, download
manifests, finished downloads) goes through here:

- `atomic_write` writes bytes or text to a hidden temporary file in the destination's folder and
  renames it over the destination;
- `atomic_replace` promotes a file (or a private staging folder) the caller has finished writing
  (a download's partial file, a checkpoint folder of the local server);
- `fsync_dir` makes a rename in a folder survive a power cut;
- `exclusive_lock` holds an advisory lock file, so processes (and threads) take turns at a
  read-modify-write of files they share;
- `kept_secret` reads a secret kept in a file (0600), or creates it once under that lock;
- `service_state_dir` names the folder a ct service keeps its state in by default.

With ``durable`` the bytes are fsynced before the rename and the folder after it, so the new content
is on disk when the call returns; without it a killed process still never leaves a half-written
destination, only the page cache is trusted to reach the disk. The temporary file is in the same
folder because a rename is only atomic within one file system; it is removed when the write fails.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

#: Attempts at a temporary name nobody else holds (random names, so a clash is already unlikely).
_TEMP_NAME_TRIES = 16
_TEMP_SUFFIX = ".tmp"


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a folder's entries (a rename, a new or removed file) to disk; best effort.

    Platforms that cannot open a folder (Windows) or fsync one skip it: the data itself is synced
    through its own file.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def temp_path_for(path: str | os.PathLike[str]) -> Path:
    """A fresh hidden name beside ``path``: ``.<name>.<random>.tmp`` (``<name>.<random>.tmp`` when the
    name is already hidden), so a leftover of a killed process still sorts with its destination."""
    target = Path(path)
    stem = target.name if target.name.startswith(".") else f".{target.name}"
    # os.urandom, as the secrets module uses, without importing it (hmac, hashlib, random).
    return target.with_name(f"{stem}.{os.urandom(6).hex()}{_TEMP_SUFFIX}")


def _create_temp(target: Path, create_mode: int) -> tuple[int, Path]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOINHERIT", 0)
    for _ in range(_TEMP_NAME_TRIES):
        temp = temp_path_for(target)
        try:
            return os.open(temp, flags, create_mode), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    durable: bool = True,
    mode: int | None = None,
) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8, newlines as given) in one rename.

    ``mode`` sets the file's permission bits exactly (0o600 for a file that may hold a token; the
    temporary file has them from its creation, so the data is never readable by others). Without
    it the file gets what a plain ``open(path, "w")`` would give (0o666 less the umask). The folder
    must exist. On any failure the destination is untouched and the temporary file removed.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, temp = _create_temp(target, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "wb") as sink:
            if mode is not None:
                os.chmod(temp, mode)
            sink.write(payload)
            if durable:
                sink.flush()
                os.fsync(sink.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    if durable:
        fsync_dir(target.parent)


def atomic_replace(
    source: str | os.PathLike[str], destination: str | os.PathLike[str], *, durable: bool = True
) -> None:
    """Give the finished file ``source`` the name ``destination`` (same file system), in one rename.

    With ``durable`` the file's bytes are fsynced before the rename and the destination's folder
    after it.
    """
    if durable:
        with open(source, "rb+") as handle:
            os.fsync(handle.fileno())
    os.replace(source, destination)
    if durable:
        fsync_dir(Path(destination).parent)


@contextlib.contextmanager
def exclusive_lock(path: str | os.PathLike[str], *, blocking: bool = True) -> Iterator[int]:
    """Hold an exclusive ``flock`` on the file `path` (created 0600) until the block ends.

    Every caller opens its own descriptor, so two threads of one process exclude each other as two
    processes do. The block gets the descriptor (a holder may write a note, such as its pid, into
    the file). With ``blocking=False`` a lock held elsewhere raises BlockingIOError at once instead
    of waiting. Where the platform has no ``flock`` (Windows) the block runs unlocked.
    """
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl
        except ImportError:
            pass
        else:
            fcntl.flock(descriptor, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield descriptor
    finally:
        os.close(descriptor)  # closing the descriptor releases the lock


def kept_secret(path: str | os.PathLike[str], new: Callable[[], str]) -> tuple[str, bool]:
    """The secret kept in `path` (its text, stripped), made with `new()` and written 0600 if the file is
    missing or empty; True as the second value when this call made it. Two processes starting at once
    take turns under a lock beside the file, so both end up with the same secret."""
    target = Path(path)
    with exclusive_lock(target.with_name(f".{target.name}.lock")):
        if target.is_file():
            text = target.read_text(encoding="utf-8").strip()
            if text:
                return text, False
        secret = new()
        atomic_write(target, secret + "\n", mode=0o600)
        return secret, True


#: Where ct's services keep their state by default: a folder per service under this one, in the
#: user's data folder (`$XDG_DATA_HOME`, else ~/.local/share, as the XDG base-directory rule says).
SERVICE_STATE_ROOT = "cortex-training"


def service_state_dir(name: str) -> Path:
    """`$XDG_DATA_HOME/cortex-training/<name>`, or under ~/.local/share without XDG_DATA_HOME (a
    blank value counts as unset). `ct runs serve` and `ct tinker serve` keep their state there."""
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    root = Path(base).expanduser() if base else Path.home() / ".local" / "share"
    return root / SERVICE_STATE_ROOT / name
