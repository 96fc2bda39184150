"""The TUI's pure rules: row order and shape, filters, levels, wrapping, and the tail's backoff."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

from ct_cli.tui import format as fmt
from ct_cli.tui import tail
from tests.tui.conftest import make_running_job


def test_jobs_are_newest_first_and_undated_ones_last() -> None:
    jobs = [
        {"job_id": "a", "created_at": "2026-01-01T00:00:00Z"},
        {"job_id": "b", "created_at": "not a date"},
        {"job_id": "c", "created_at": "2026-03-01T00:00:00+00:00"},
        {"job_id": "d"},
    ]
    assert [job["job_id"] for job in fmt.newest_first(jobs)] == ["c", "a", "b", "d"]


def test_a_row_strips_the_status_prefix_and_lists_sub_job_types() -> None:
    job = {
        "job_id": "j1",
        "status": "JOB_STATE_RUNNING",
        "sub_jobs": [{"job_type": "training"}, {"type": "sampling"}],
    }
    status, rest = fmt.job_row(job)
    assert status.strip() == "RUNNING"
    assert rest.endswith(" │ j1 │ training, sampling") and " │ — " in rest
    assert fmt.status_style("JOB_STATE_RUNNING") == "green" and fmt.status_style("failed") == ""


def test_the_job_filter_matches_id_status_types_and_models() -> None:
    job = {
        "job_id": "abc",
        "status": "running",
        "sub_jobs": [{"job_type": "training", "model_name": "Qwen/Q"}],
    }
    for query in ("AB", "Run", "train", "qwen/q", ""):
        assert fmt.job_matches(job, query)
    assert not fmt.job_matches(job, "sampling")


def test_terminal_statuses_stop_the_tail_and_unknown_ones_keep_it() -> None:
    for status in ("failed", "CANCELLED", "JOB_STATE_TERMINATED", "completed", "error"):
        assert fmt.is_terminal(status)
    for status in ("running", "pending", None, "", "some_new_status"):
        assert fmt.is_active(status)


def test_levels_come_from_the_entry_from_embedded_json_or_a_leading_word() -> None:
    assert fmt.entry_level({"level": "warning"}) == "warning"
    assert fmt.entry_level({"_raw": '2026-01-01T00:00:00Z {"level": "ERROR", "msg": "x"}'}) == "ERROR"
    assert fmt.entry_level({"_raw": "2026-01-01T00:00:00Z INFO [s] ready"}) == "INFO"
    assert fmt.entry_level({"_raw": "2026-01-01T00:00:00Z plain text"}) is None
    assert not fmt.passes_level({"_raw": "t INFO x"}, "WARNING")
    assert fmt.passes_level({"_raw": "t plain"}, "ERROR")  # lines without a level always pass
    assert fmt.entry_text({"_raw": "t x", "_truncated": True}) == "t x …[truncated]"
    assert fmt.entry_text({"ts": "t", "level": "INFO", "logger": "l", "msg": "m"}) == "t INFO  l: m"


def test_wrapping_prefers_words_breaks_long_tokens_and_splits_newlines() -> None:
    assert fmt.wrap("aaa bbb ccc", 7) == ["aaa bbb", " ccc"]
    assert fmt.wrap("x" * 10, 4) == ["xxxx", "xxxx", "xx"]
    assert fmt.wrap("one\ntwo", 80) == ["one", "two"]
    assert fmt.wrap("anything", 0) == ["anything"]


class _RecordedWaits(threading.Event):
    """A stop signal that records how long the tail waits instead of waiting, and stops it after a few."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(float(timeout or 0))
        if len(self.waits) >= self.count:
            self.set()
        return self.is_set()


def test_the_tail_asks_for_the_newest_lines_then_backs_off_on_empty_pages(
    local_server: Any, ct_home: Path
) -> None:
    from ct_core import CortexTrainingClient

    job_id = make_running_job(local_server.base_url)
    stop = _RecordedWaits(count=12)
    with CortexTrainingClient(
        base_url=local_server.base_url, database="CT_TUI_DB", schema="PUBLIC"
    ) as client:
        pages = list(tail.follow(client, job_id, f"{job_id}:training:0", stop=stop, poll_interval=1.0))
    assert pages and pages[0].entries and pages[0].cursor
    # After the page with lines: the poll interval; then each empty page waits 1.25 times longer, up to 6 s.
    empty = stop.waits[1:]
    assert stop.waits[0] == 1.0
    assert empty[:3] == [1.0, 1.25, 1.5625]
    assert all(later >= earlier for earlier, later in itertools.pairwise(empty))
    assert max(empty) == 6.0


def test_the_tail_reports_the_end_of_the_job_instead_of_an_error(local_server: Any, ct_home: Path) -> None:
    from ct_core import CortexTrainingClient

    job_id = make_running_job(local_server.base_url)
    local_server.force_status(job_id, "cancelled")
    with CortexTrainingClient(
        base_url=local_server.base_url, database="CT_TUI_DB", schema="PUBLIC"
    ) as client:
        pages = list(tail.follow(client, job_id, f"{job_id}:training:0", stop=threading.Event()))
    assert pages[-1].ended and "ended" in pages[-1].ended
