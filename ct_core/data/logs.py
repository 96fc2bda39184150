"""Live logs through the tail-logs operation of submitOperation: end-of-job handling and streaming.

A finished job's pods are gone, so tail-logs answers 404, 409 or 410 for it. Retrying that for a
minute helps nobody, so on the first such answer the job is read once:

- it has ended           -> `LogsUnavailableError` pointing at the saved console (download-log);
- the sub_job_id is not one of the job's sub-jobs -> `UnknownSubJobError` listing the real ones;
- otherwise (a job still starting) the normal retries go on.

`stream_logs` never loops forever: with follow=False it stops at the first empty page,
with follow=True it backs off between empty pages, and both stop at an empty page with eof: true
or when the job ends after the stream has read from it. An empty `next_cursor` keeps the previous
cursor (an empty one would re-read the log from the start).
docs/logs-and-metrics.md describes the user-facing side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ct_core import errors
from ct_core.control.polling import TERMINAL_JOB_STATES, normalize_job_status
from ct_core.errors import LogsUnavailableError, UnknownSubJobError

#: Tail-logs answers that may mean "this job's pods are gone".
ENDED_JOB_STATUSES = frozenset({404, 409, 410})


class EndOfJobCheck:
    """The `final` hook of one tail-logs call: reads the job on the first 404/409/410 answer only."""

    def __init__(self, get_job: Callable[[str], dict[str, Any]], job_id: str, sub_job_id: str | None) -> None:
        self._get_job = get_job
        self._job_id = job_id
        self._sub_job_id = sub_job_id
        self._checked = False

    def __call__(self, error: BaseException) -> bool:
        if not isinstance(error, errors.APIError) or error.status_code not in ENDED_JOB_STATUSES:
            return False
        if self._checked:
            # The job was still starting when we looked; let the general rule decide (410 is final).
            return False
        self._checked = True
        job = self._get_job(self._job_id)
        status = normalize_job_status(job.get("status"))
        if status in TERMINAL_JOB_STATES:
            raise LogsUnavailableError(self._job_id, status) from error
        if self._sub_job_id is not None:
            ids = [str(sj.get("sub_job_id")) for sj in job.get("sub_jobs") or [] if isinstance(sj, dict)]
            if self._sub_job_id not in ids:
                raise UnknownSubJobError(self._job_id, self._sub_job_id, ids) from error
        return False


TailPage = Callable[[str | None], dict[str, Any]]


def stream_entries(
    tail: TailPage,
    *,
    cursor: str | None,
    follow: bool,
    interval: float,
    multiplier: float,
    max_interval: float,
    sleep: Callable[[float], None],
    items_key: str = "entries",
) -> Iterator[dict[str, Any]]:
    """Yield the items of page after page. `tail(cursor)` fetches one page.

    `items_key` names the list a page carries: "entries" for tail-logs, "events" for zone events.
    """
    delay = interval
    read_once = False
    while True:
        try:
            page = tail(cursor)
        except LogsUnavailableError:
            if read_once:
                return
            raise
        read_once = True
        page = page if isinstance(page, dict) else {}
        next_cursor = page.get("next_cursor")
        if next_cursor:
            cursor = str(next_cursor)
        entries = page.get(items_key) or []
        if entries:
            yield from entries
            delay = interval
            continue
        if page.get("eof") is True or not follow:
            return
        sleep(delay)
        delay = min(delay * multiplier, max_interval)
