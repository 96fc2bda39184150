"""The TUI's local log cache: what a sub-job's live tail has read, and the cursor to resume it from.

Reopening a job's screen replays the cached lines at once and asks the service only for what came
after, so a long log is not read again. Nothing here imports Textual.

Layout, under `cache_root()`:

    jobs/<safe job id>/<safe sub-job id>.jsonl     one file per sub-job, mode 0600
    jobs/<safe job id>/.lock                       taken while a file is appended to or rotated

Folders the cache makes are 0700. A safe name percent-escapes (`%XX`, upper-case hex) every byte of
the id's UTF-8 outside `A-Z a-z 0-9 - _ .`, and escapes `.` and `..` whole, so each id has exactly
one name and `original_name` gives the id back. A name longer than `MAX_NAME` is cut and ends with
`%~` and 12 hex digits of the id's SHA-1 (`%~` never appears in an escaped name, so a cut name
cannot equal another id's name); its id is then read from the file's first line.

Each line of a file is one JSON object:

    {"cache": 1, "job_id": ..., "sub_job_id": ...}   the first line: which log this is
    {"e": {...}}                                     one log entry, as the service sent it
    {"cursor": "...", "from": "...", "n": N, "at": T} closes a page: the N entry lines just before it
                                                     are covered by this cursor

A page is appended in one write, its entries before the cursor that covers them, and fsynced. A
reader counts only entries a cursor line covers, so a page cut short by a crash is not replayed and
is read again from the previous cursor. A line that is not valid JSON of one of these shapes is
skipped and counted. Two screens (or two `ct tui`) following the same sub-job do not double its
lines: a page is written only when the file's newest cursor is the one the page was read from.

When a file grows past `ROTATE_BYTES` it is rewritten (through `ct_core.fs.atomic_write`) with its
newest entries only: at most `ROTATE_KEEP_LINES`, and no more than fill `ROTATE_KEEP_FRACTION` of
the limit, so the next pages do not rotate it again at once. The cursor is kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ct_core.fs import atomic_write, exclusive_lock

#: Environment variable naming the cache folder (used as given).
ENV_VAR = "CORTEX_TRAINING_TUI_CACHE_DIR"
#: A sub-job's file is cut back once it passes this size.
ROTATE_BYTES = 50 * 1024 * 1024
#: At most this many entries survive a rotation ...
ROTATE_KEEP_LINES = 100_000
#: ... and no more than fill this share of the size limit.
ROTATE_KEEP_FRACTION = 0.75
#: Entries a screen replays when it opens: the newest ones.
REPLAY_LINES = 2000
#: Longest file or folder name the cache makes (before `.jsonl`); file systems allow 255 bytes.
MAX_NAME = 200
FORMAT_VERSION = 1

_SAFE_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
_CUT_MARK = "%~"
_HASH_DIGITS = 12
_SUFFIX = ".jsonl"
#: How much of a file's end is read to find its newest cursor before an append.
_TAIL_WINDOW = 1024 * 1024


def cache_root() -> Path:
    """`$CORTEX_TRAINING_TUI_CACHE_DIR`, else `$XDG_CACHE_HOME/cortex-training/tui`, else
    `~/.cache/cortex-training/tui`."""
    explicit = os.environ.get(ENV_VAR, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "cortex-training" / "tui"


def safe_name(identifier: str) -> str:
    """The file-system name of a job or sub-job id: one name per id, with no separator or `..`."""
    if not isinstance(identifier, str) or not identifier:
        raise ValueError(f"a log cache name needs a non-empty id, got {identifier!r}")
    raw = identifier.encode("utf-8", errors="surrogatepass")
    if identifier in (".", ".."):
        name = "".join(f"%{byte:02X}" for byte in raw)
    else:
        name = "".join(chr(byte) if byte in _SAFE_BYTES else f"%{byte:02X}" for byte in raw)
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(raw, usedforsecurity=False).hexdigest()[:_HASH_DIGITS]
    return name[: MAX_NAME - len(_CUT_MARK) - _HASH_DIGITS] + _CUT_MARK + digest


def original_name(name: str) -> str | None:
    """The id `safe_name` made `name` from; None for a cut name (its id is inside the file) or a
    name `safe_name` never makes."""
    if _CUT_MARK in name:
        return None
    out = bytearray()
    index = 0
    while index < len(name):
        char = name[index]
        if char == "%":
            pair = name[index + 1 : index + 3]
            if len(pair) != 2 or any(c not in "0123456789ABCDEF" for c in pair):
                return None
            out.append(int(pair, 16))
            index += 3
            continue
        if ord(char) > 127 or ord(char) not in _SAFE_BYTES:
            return None
        out.append(ord(char))
        index += 1
    try:
        identifier = out.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        return None
    return identifier if safe_name(identifier) == name else None


@dataclass
class Replay:
    """What a sub-job's cache holds: its newest entries, the cursor after them, and what was skipped."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    cursor: str | None = None
    #: Lines that were not valid cache lines (torn or damaged), skipped.
    corrupt: int = 0
    #: Entry lines no cursor covers (a page a crash cut short), not replayed.
    uncovered: int = 0
    #: Entries the file holds in all (`entries` is the newest `limit` of them).
    total: int = 0


def _chmod(path: Path, mode: int) -> None:
    with contextlib.suppress(OSError):
        os.chmod(path, mode)


def _make_private_dirs(path: Path) -> None:
    """Create `path` and the folders above it that are missing, each 0700 (existing ones untouched)."""
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
        _chmod(folder, 0o700)


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"


def _encode(text: str) -> bytes:
    # A lone surrogate (a log line that was not valid UTF-8) becomes a `\udcXX` JSON escape, which
    # reads back as the same string, instead of bytes no JSON reader accepts.
    return text.encode("utf-8", errors="backslashreplace")


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _is_cursor_line(record: dict[str, Any]) -> bool:
    return "cursor" in record and isinstance(record.get("n"), int) and record["n"] >= 0


class LogCache:
    """The cached logs of one job, one file per sub-job.

    `max_bytes` and `keep_lines` are the rotation limits (smaller in tests). Nothing touches the
    disk until the first `load` or `append`; errors of the file system propagate as `OSError`
    (the screen then follows the log without a cache), except unreadable lines, which are counted.
    """

    def __init__(
        self,
        job_id: str,
        *,
        root: Path | None = None,
        max_bytes: int = ROTATE_BYTES,
        keep_lines: int = ROTATE_KEEP_LINES,
    ) -> None:
        if max_bytes <= 0 or keep_lines <= 0:
            raise ValueError("the log cache's rotation limits must be positive")
        self.job_id = job_id
        self.root = Path(root) if root is not None else cache_root()
        self.folder = self.root / "jobs" / safe_name(job_id)
        self.max_bytes = max_bytes
        self.keep_lines = keep_lines

    def path_for(self, sub_job_id: str) -> Path:
        return self.folder / (safe_name(sub_job_id) + _SUFFIX)

    def _header(self, sub_job_id: str) -> dict[str, Any]:
        return {"cache": FORMAT_VERSION, "job_id": self.job_id, "sub_job_id": sub_job_id}

    def _read_header(self, path: Path) -> dict[str, Any] | None:
        with path.open("rb") as handle:
            record = _parse(handle.readline())
        return record if record is not None and "cache" in record else None

    # --- reading ----------------------------------------------------------------------------------

    def load(self, sub_job_id: str, *, limit: int | None = REPLAY_LINES) -> Replay:
        """The cached entries of `sub_job_id` (the newest `limit`; all with None) and its cursor.

        A sub-job without a file gives an empty `Replay`; so does a file that holds another id's log
        (two ids that only differ in case, on a file system that ignores case).
        """
        path = self.path_for(sub_job_id)
        if not path.is_file():
            return Replay()
        newest: deque[dict[str, Any]] = deque(maxlen=limit) if limit is not None else deque()
        pending: list[dict[str, Any]] = []
        replay = Replay()
        with path.open("rb") as handle:
            for number, line in enumerate(handle):
                if not line.strip():
                    continue
                record = _parse(line)
                if record is None:
                    replay.corrupt += 1
                elif "cache" in record:
                    if number == 0 and (
                        record.get("job_id") != self.job_id or record.get("sub_job_id") != sub_job_id
                    ):
                        return Replay()
                elif "e" in record and isinstance(record["e"], dict):
                    pending.append(record["e"])
                elif _is_cursor_line(record):
                    covered = pending[len(pending) - record["n"] :] if record["n"] else []
                    replay.uncovered += len(pending) - len(covered)
                    newest.extend(covered)
                    replay.total += len(covered)
                    pending = []
                    if record["cursor"]:
                        replay.cursor = str(record["cursor"])
                else:
                    replay.corrupt += 1
        replay.uncovered += len(pending)
        replay.entries = list(newest)
        return replay

    def sources(self) -> list[str]:
        """The sub-jobs of this job that have a cache file, sorted by id (each file's first line read)."""
        if not self.folder.is_dir():
            return []
        found: list[str] = []
        for path in self.folder.glob("*" + _SUFFIX):
            # The first line says whose log the file holds; without it, the name does.
            try:
                header = self._read_header(path)
            except OSError:
                continue
            if header is None:
                identifier: Any = original_name(path.name.removesuffix(_SUFFIX))
            else:
                identifier = header.get("sub_job_id") if header.get("job_id") == self.job_id else None
            if isinstance(identifier, str) and identifier and self.path_for(identifier) == path:
                found.append(identifier)
        return sorted(found)

    # --- writing ----------------------------------------------------------------------------------

    def _newest_cursor(self, path: Path) -> tuple[bool, str | None, bool]:
        """(known, the file's newest cursor, whether it ends in the middle of a line)."""
        size = path.stat().st_size
        start = max(0, size - _TAIL_WINDOW)
        with path.open("rb") as handle:
            handle.seek(start)
            block = handle.read()
        torn = bool(block) and not block.endswith(b"\n")
        lines = block.split(b"\n")
        if start > 0:
            lines = lines[1:]  # the first piece may be the end of a longer line
        for line in reversed(lines):
            record = _parse(line) if line.strip() else None
            if record is not None and _is_cursor_line(record):
                cursor = record.get("cursor")
                return True, (str(cursor) if cursor else None), torn
        return start == 0, None, torn

    def append(
        self,
        sub_job_id: str,
        entries: Sequence[dict[str, Any]],
        cursor: str | None,
        *,
        start: str | None,
    ) -> bool:
        """Add one page: `entries`, read from cursor `start`, then `cursor`, the cursor after them.

        Returns False (and writes nothing) when the page has no entries, when the file's newest
        cursor is not `start` (another reader of the same sub-job wrote that page, or a later one),
        or when the file holds another id's log.
        """
        if not entries:
            return False
        path = self.path_for(sub_job_id)
        _make_private_dirs(self.folder)
        with exclusive_lock(self.folder / ".lock"):
            lead = _dumps(self._header(sub_job_id))
            if path.exists() and path.stat().st_size > 0:
                header = self._read_header(path)
                if header is not None and (
                    header.get("job_id") != self.job_id or header.get("sub_job_id") != sub_job_id
                ):
                    return False
                known, newest, torn = self._newest_cursor(path)
                if known and newest != start:
                    return False
                lead = "\n" if torn else ""  # never glue a page onto a line a crash cut short
            page = [_dumps({"e": entry}) for entry in entries]
            closing = {
                "cursor": cursor or start or "",
                "from": start or "",
                "n": len(page),
                "at": time.time(),
            }
            payload = _encode(lead + "".join(page) + _dumps(closing))
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                with contextlib.suppress(OSError):
                    os.fchmod(descriptor, 0o600)
                written = 0
                while written < len(payload):
                    written += os.write(descriptor, payload[written:])
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            if path.stat().st_size > self.max_bytes:
                self._rotate(sub_job_id, path)
        return True

    def _rotate(self, sub_job_id: str, path: Path) -> None:
        """Rewrite `path` with its newest entries only (see the module docstring), keeping the cursor."""
        replay = self.load(sub_job_id, limit=self.keep_lines)
        budget = int(self.max_bytes * ROTATE_KEEP_FRACTION)
        header = _dumps(self._header(sub_job_id))
        closing_size = len(_dumps({"cursor": replay.cursor or "", "from": "", "n": 0, "at": time.time()}))
        kept: deque[str] = deque()
        size = len(header.encode()) + closing_size + 16
        for entry in reversed(replay.entries):
            line = _dumps({"e": entry})
            cost = len(_encode(line))
            if size + cost > budget:
                break
            kept.appendleft(line)
            size += cost
        closing = {
            "cursor": replay.cursor or "",
            "from": replay.cursor or "",
            "n": len(kept),
            "at": time.time(),
        }
        text = header + "".join(kept) + _dumps(closing)
        atomic_write(path, _encode(text), mode=0o600)

    def reset(self, sub_job_id: str) -> None:
        """Forget `sub_job_id`'s cache (its cursor was refused: the log is read afresh)."""
        with contextlib.suppress(FileNotFoundError):
            self.path_for(sub_job_id).unlink()
