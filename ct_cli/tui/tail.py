"""Following one sub-job's live log page by page, and reading its saved console once the job ended.

`follow` is the loop the log screen runs on a worker thread: it asks `client.tail_logs` for pages
(the newest `FIRST_PAGE_LINES` on a first open, else from the cursor the cache saved), hands over
the first answer (so the screen can say it is live even when nothing is new) and then each
non-empty page whole, and backs off on empty pages. A page without a cursor keeps the previous one:
an empty cursor would read the log again from its start. When the job ends (the SDK's
`LogsUnavailableError`, a 410 answer, or an empty page marked `eof`) it reports that once and
returns, so the screen can turn to the saved console instead of showing an HTTP error. Nothing
here imports Textual.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Lines a first open asks for: the newest ones, not the whole backlog.
FIRST_PAGE_LINES = 2000
#: Seconds between polls after a page with lines (the global --poll-interval does not apply: a TUI
#: polling twice a second per open screen would be noisy for the service).
DEFAULT_POLL_INTERVAL_S = 1.0
#: Each empty page stretches the wait by this factor, up to `MAX_POLL_INTERVAL_S`.
BACKOFF = 1.25
MAX_POLL_INTERVAL_S = 6.0
#: The "gone" status of a live-log read whose job has ended.
GONE = 410
#: The answer to a cursor the service does not accept (the cache's cursor of an older log).
REFUSED = 400


@dataclass
class Page:
    """What `follow` yields: lines of the live log, or the news that the job has ended.

    `start` is the cursor the page was read from and `cursor` the one after it (the cache writes a
    page only on top of the cursor it was read from). `refused` says the service did not accept
    the saved cursor `start`; the loop then reads the newest lines again from no cursor.
    """

    entries: list[dict[str, Any]] = field(default_factory=list)
    cursor: str | None = None
    ended: str | None = None
    start: str | None = None
    refused: str | None = None


def follow(
    client: Any,
    job_id: str,
    sub_job_id: str | None,
    *,
    stop: threading.Event,
    cursor: str | None = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL_S,
    max_interval: float = MAX_POLL_INTERVAL_S,
) -> Iterator[Page]:
    """Pages of the live log until the job ends or `stop` is set; errors other than the end propagate."""
    from ct_core.errors import APIError, LogsUnavailableError

    delay = poll_interval
    answered = False
    while not stop.is_set():
        start = cursor
        try:
            page = client.tail_logs(
                job_id,
                cursor=cursor,
                max_lines=FIRST_PAGE_LINES if cursor is None else None,
                sub_job_id=sub_job_id,
            )
        except LogsUnavailableError as exc:
            yield Page(
                cursor=cursor, start=start, ended=f"the job has ended ({exc.status}); its live log is gone"
            )
            return
        except APIError as exc:
            if exc.status_code == REFUSED and cursor is not None and not answered:
                # A saved cursor the service no longer accepts: start again from the newest lines.
                yield Page(start=start, refused=f"{type(exc).__name__}: {exc}")
                cursor = None
                continue
            if exc.status_code != GONE:
                raise
            yield Page(cursor=cursor, start=start, ended="the job has ended; its live log is gone")
            return
        page = page if isinstance(page, dict) else {}
        if page.get("next_cursor"):
            cursor = str(page["next_cursor"])
        entries = [entry for entry in page.get("entries") or [] if isinstance(entry, dict)]
        first = not answered
        answered = True
        if entries or first:
            yield Page(entries=entries, cursor=cursor, start=start)
        if entries:
            delay = poll_interval
            stop.wait(poll_interval)
            continue
        if page.get("eof") is True:
            yield Page(cursor=cursor, ended="the job's log has ended")
            return
        stop.wait(delay)
        delay = min(delay * BACKOFF, max_interval)


@dataclass
class Console:
    """A sub-job's saved console as downloaded so far."""

    lines: list[str]
    chunk_count: int


def saved_console(client: Any, job_id: str, sub_job_id: str, stage_dir: Path, *, keep: int) -> Console:
    """Download (resuming) the saved console of `sub_job_id` under `stage_dir`; its last `keep` lines.

    A job that saved no console yet gives no lines rather than an error.
    """
    from ct_core.errors import NoChunksError

    try:
        results = client.download_stdout_logs(job_id, stage_dir, resume=True, sub_job_ids=[sub_job_id])
    except NoChunksError:
        return Console(lines=[], chunk_count=0)
    chunks = 0
    path: Path | None = None
    for result in results or []:
        if isinstance(result, dict) and result.get("sub_job_id") == sub_job_id:
            chunks = int(result.get("chunk_count") or 0)
            path = Path(result["saved_path"]) if result.get("saved_path") else None
    if path is None or not path.is_file():
        return Console(lines=[], chunk_count=chunks)
    with path.open(encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    return Console(lines=lines[-keep:], chunk_count=chunks)
