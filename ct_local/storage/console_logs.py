"""Per-sub-job console logs and the tail-logs pages served from them.

Each sub-job has one append-only file under ``<state_dir>/jobs/<job_id>/logs/``. A line is stored
as ``<RFC 3339 time with nanoseconds> <text>``, exactly the ``_raw`` form of a tail-logs entry, so
a page is a slice of lines. The cursor is the index of the next line to read, written as an
opaque string; it stays valid across restarts because the file does.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# A tail-logs page holds at most 2000 entries or 256 KiB.
PAGE_MAX_ENTRIES = 2000
PAGE_MAX_BYTES = 256 * 1024
CURSOR_PREFIX = "ln-"

_LOCK = threading.Lock()


class CursorError(ValueError):
    pass


def log_path(state_dir: Path, job_id: str, sub_job_id: str) -> Path:
    # Sub-job ids contain ':', which some file systems refuse.
    return state_dir / "jobs" / job_id / "logs" / (sub_job_id.replace(":", "_") + ".log")


def timestamp_ns(now_ns: int | None = None) -> str:
    """RFC 3339 UTC with nanosecond precision, as the container runtime stamps lines."""
    ns = time.time_ns() if now_ns is None else now_ns
    seconds, frac = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}Z"


def append(path: Path, *lines: str) -> None:
    """Append console lines (newlines inside a line become spaces: one entry per line)."""
    stamp = timestamp_ns()
    text = "".join(f"{stamp} {line.replace(chr(10), ' ')}\n" for line in lines)
    with _LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(text)


def _read_lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    with _LOCK:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()


def parse_cursor(cursor: Any) -> int | None:
    if cursor is None or cursor == "":
        return None
    if not isinstance(cursor, str) or not cursor.startswith(CURSOR_PREFIX):
        raise CursorError(f"invalid tail-logs cursor {cursor!r}")
    try:
        value = int(cursor.removeprefix(CURSOR_PREFIX))
    except ValueError as exc:
        raise CursorError(f"invalid tail-logs cursor {cursor!r}") from exc
    if value < 0:
        raise CursorError(f"invalid tail-logs cursor {cursor!r}")
    return value


def _entry(raw: str) -> dict[str, str]:
    ts, _, line = raw.partition(" ")
    return {"_raw": raw, "ts": ts, "line": line}


def page(path: Path, *, cursor: Any, max_lines: int | None, eof: bool) -> dict[str, Any]:
    """One tail-logs page: without a cursor, the newest ``max_lines`` lines or (no max) the start."""
    lines = _read_lines(path)
    start = parse_cursor(cursor)
    if start is None:
        start = max(0, len(lines) - max_lines) if max_lines is not None else 0
    start = min(start, len(lines))
    limit = PAGE_MAX_ENTRIES if max_lines is None else min(max_lines, PAGE_MAX_ENTRIES)
    entries: list[dict[str, str]] = []
    size = 0
    for raw in lines[start : start + limit]:
        size += len(raw.encode()) + 1
        if entries and size > PAGE_MAX_BYTES:
            break
        entries.append(_entry(raw))
    end = start + len(entries)
    return {"entries": entries, "next_cursor": f"{CURSOR_PREFIX}{end}", "eof": eof and end >= len(lines)}
