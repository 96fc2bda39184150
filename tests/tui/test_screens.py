"""The picker and the log screen, driven key by key with Textual's Pilot against a real ct_local job."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Log, OptionList

from ct_cli.tui.app import CtTui
from ct_cli.tui.screens.jobs import JobPickerScreen
from ct_cli.tui.screens.logs import LogScreen
from tests.tui.conftest import fwd_bwd, make_running_job, run, wait_until

SIZE = (160, 45)


def _rows(app: CtTui) -> list[str]:
    rows = app.screen.query_one("#jobs", OptionList)
    return [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count)]


def _log_text(app: CtTui) -> str:
    screen = app.screen
    assert isinstance(screen, LogScreen)
    return "\n".join(screen.shown_lines())


def test_picker_lists_jobs_newest_first_filters_refreshes_and_opens_a_job(
    client: Any, running_job: str, local_server: Any, home: Path
) -> None:
    newer = make_running_job(local_server.base_url)

    async def scenario() -> None:
        app = CtTui(client)
        async with app.run_test(size=SIZE) as pilot:
            picker = app.screen
            assert isinstance(picker, JobPickerScreen)
            await wait_until(pilot, lambda: any(running_job in row for row in _rows(app)), "the job's row")
            rows = _rows(app)
            order = [next(i for i, row in enumerate(rows) if job in row) for job in (newer, running_job)]
            assert order[0] < order[1], rows
            row = rows[order[1]]
            assert row.split(" │ ")[0].strip() == "running" and row.endswith("training, sampling")
            assert "last refreshed" in (picker.sub_title or "")

            # The cursor stays on the job it was on across a refresh.
            picker.query_one("#jobs", OptionList).highlighted = order[1]
            before = picker.last_refreshed
            picker.last_refreshed = "stale"
            await pilot.press("r")
            await wait_until(pilot, lambda: picker.loaded and picker.last_refreshed != "stale", "a refresh")
            assert before is not None
            assert picker.highlighted_job_id() == running_job

            await pilot.press("slash")
            assert isinstance(app.focused, Input)
            await pilot.press(*running_job[:10])
            await wait_until(pilot, lambda: len(_rows(app)) == 1, "the filtered list")
            assert running_job in _rows(app)[0]
            await pilot.press("z", "z", "q")  # typed into the filter, not a quit
            await wait_until(pilot, lambda: _rows(app) == ["(no matching jobs)"], "the empty-filter row")
            await pilot.press("escape")
            await wait_until(pilot, lambda: len(_rows(app)) >= 2, "the whole list again")
            assert not isinstance(app.focused, Input)

            await pilot.press("slash", *"sampling", "enter")
            assert all("sampling" in row for row in _rows(app))
            picker.query_one("#jobs", OptionList).highlighted = next(
                i for i, row in enumerate(_rows(app)) if running_job in row
            )
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, LogScreen), "the log screen")
            assert app.screen.job_id == running_job  # type: ignore[attr-defined]
            await pilot.press("q")
        assert app.return_code in (0, None)

    run(scenario())


def test_picker_shows_the_error_row_when_the_list_fails(home: Path) -> None:
    from ct_core import CortexTrainingClient

    async def scenario() -> None:
        # Nothing listens on port 9 of loopback: every request fails to connect. No retries: with the
        # SDK's default ten, their backoff alone sleeps about 70 s before the list gives up, close to
        # the wait's limit, and the error row is the same after one attempt.
        with CortexTrainingClient(
            base_url="http://127.0.0.1:9", database="D", schema="S", max_retries=0
        ) as sdk:
            sdk_app = CtTui(sdk)
            async with sdk_app.run_test(size=SIZE) as pilot:
                rows = await wait_until(
                    pilot, lambda: [r for r in _rows(sdk_app) if r.startswith("[error]")], "error"
                )
                assert rows[0].startswith("[error] list_jobs failed: ")

    run(scenario())


def test_picker_says_when_there_are_no_jobs(local_server: Any, home: Path) -> None:
    from ct_core import CortexTrainingClient

    async def scenario() -> None:
        with CortexTrainingClient(
            base_url=local_server.base_url, database="CT_TUI_EMPTY", schema="PUBLIC"
        ) as sdk:
            app = CtTui(sdk)
            async with app.run_test(size=SIZE) as pilot:
                await wait_until(pilot, lambda: _rows(app) == ["(no jobs found)"], "the empty row")

    run(scenario())


def test_log_screen_tails_live_lines_and_its_keys_filter_level_pause_and_back(
    client: Any, running_job: str, local_server: Any, home: Path
) -> None:
    async def scenario() -> None:
        app = CtTui(client, running_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, LogScreen)
            await wait_until(pilot, lambda: "— live —" in _log_text(app), "the live marker")
            text = _log_text(app)
            assert f"— tailing {running_job}:training:0 —" in text
            assert "job status initializing -> running" in text
            assert "training" in str(screen.query_one("#summary").render())
            summary = str(screen.query_one("#summary").render())
            assert "gpus=1" in summary and "seq=128" in summary and "opt=AdamW/lr=0.001" in summary
            assert (screen.sub_title or "").startswith(f"{running_job}  ·  running")

            request_id = await asyncio.to_thread(fwd_bwd, local_server.base_url, running_job)
            await wait_until(pilot, lambda: f"request {request_id}" in _log_text(app), "the fwd-bwd lines")
            assert "updated " in (screen.sub_title or "")

            await pilot.press("p")
            assert "PAUSED" in (screen.sub_title or "")
            await pilot.press("p")
            assert "PAUSED" not in (screen.sub_title or "")

            await pilot.press("L", "L")
            assert "≥WARNING" in (screen.sub_title or "")
            assert "job status initializing -> running" not in _log_text(app)  # an INFO line, below the floor
            assert "— live —" in _log_text(app)  # the screen's own notes always stay
            await pilot.press("L", "L")
            assert "≥" not in (screen.sub_title or "")
            assert "job status initializing -> running" in _log_text(app)

            await pilot.press("slash", *request_id[:12])
            assert f"filter:{request_id[:12]}" in (screen.sub_title or "")
            lines = [line for line in screen.shown_lines() if not line.startswith(("—", "["))]
            assert lines and all(request_id[:12] in line for line in lines)
            await pilot.press("escape")  # clears the filter
            assert "job status initializing -> running" in _log_text(app)
            assert isinstance(app.screen, LogScreen)
            await pilot.press("escape")  # no filter: back to the picker
            assert isinstance(app.screen, JobPickerScreen)
            app.open_job(running_job)
            await wait_until(pilot, lambda: isinstance(app.screen, LogScreen), "the log screen again")
            await pilot.press("b")
            assert isinstance(app.screen, JobPickerScreen)

    run(scenario())


def _has_saved_console(client: Any, job_id: str, folder: Path) -> bool:
    from ct_core.errors import NoChunksError

    try:
        client.download_stdout_logs(job_id, folder, sub_job_ids=[f"{job_id}:sampling:0"])
    except NoChunksError:
        return False
    return True


def test_log_screen_switches_sources_and_says_when_the_job_ends(
    client: Any, local_server: Any, home: Path, tmp_path: Path
) -> None:
    job_id = make_running_job(local_server.base_url)

    async def scenario() -> None:
        app = CtTui(client, job_id, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, LogScreen)
            await wait_until(pilot, lambda: "— live —" in _log_text(app), "the live marker")
            sources = screen.query_one("#sources", OptionList)
            labels = [str(sources.get_option_at_index(i).prompt) for i in range(sources.option_count)]
            assert labels == ["training #0", "sampling #0"]
            sources.focus()
            await pilot.press("down", "enter")
            await wait_until(
                pilot, lambda: f"— tailing {job_id}:sampling:0 —" in _log_text(app), "the switch"
            )
            await wait_until(pilot, lambda: "— live —" in _log_text(app), "the sampling tail")

            # The saved console is uploaded every few seconds while a job runs: end the job once it has some.
            await wait_until(pilot, lambda: _has_saved_console(client, job_id, tmp_path), "a saved console")
            await asyncio.to_thread(local_server.force_status, job_id, "terminated", "stopped by the test")
            await wait_until(pilot, lambda: "[ended]" in _log_text(app), "the end of the job", limit_s=60)
            await wait_until(
                pilot, lambda: "reason: stopped by the test" in (screen.sub_title or ""), "the reason"
            )
            text = _log_text(app)
            # No HTTP error reaches the screen: neither its name nor a 410 status (as a word: the
            # digits 410 may well sit inside a timestamp or an id).
            assert "HTTPError" not in text and re.search(r"\b410\b", text) is None, text
            assert not any(line.startswith("[error]") for line in screen.shown_lines())
            marker = f"— saved console of {job_id}:sampling:0 —"
            await wait_until(pilot, lambda: marker in _log_text(app), "the saved console")
            shown = screen.shown_lines()
            console = shown[shown.index(marker) + 1 :]
            assert any("job status initializing -> running" in line for line in console), shown
            assert "— live —" not in console

    run(scenario())


def test_log_screen_reads_the_job_with_the_client_it_was_given(
    client: Any, running_job: str, local_server: Any, home: Path
) -> None:
    """A job of another location (found by the account-wide search) is read with its own client: the
    app's client here names a database where the job is not, so only the given one can read it."""
    from ct_core import CortexTrainingClient

    async def scenario() -> None:
        with CortexTrainingClient(
            base_url=local_server.base_url, database="CT_TUI_ELSEWHERE", schema="PUBLIC"
        ) as elsewhere:
            app = CtTui(elsewhere, poll_interval=0.2)
            async with app.run_test(size=SIZE) as pilot:
                screen = LogScreen(running_job, client=client)
                await app.push_screen(screen)
                assert screen.job_client is client
                await wait_until(pilot, lambda: "— live —" in screen.shown_lines(), "the live log")
                assert "opt=AdamW/lr=0.001" in str(screen.query_one("#summary").render())
                assert not any(line.startswith("[error]") for line in screen.shown_lines())

    run(scenario())


def test_pages_are_wrapped_on_the_tail_thread_and_wrapped_again_on_resize(
    client: Any, running_job: str, local_server: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of lines is cut to the pane's width on the worker that read it, not on the UI thread;
    a resize cuts every line again, and a line cut for another width is cut again when drawn."""
    from ct_cli.tui import format as fmt
    from ct_cli.tui.screens.logs import Line

    real_wrap = fmt.wrap
    on_ui_thread: dict[str, bool] = {}

    def recording_wrap(line: str, width: int) -> list[str]:
        on_ui_thread[line] = (
            on_ui_thread.get(line, False) or threading.current_thread() is threading.main_thread()
        )
        return real_wrap(line, width)

    monkeypatch.setattr(fmt, "wrap", recording_wrap)

    def rows_match(screen: LogScreen) -> bool:
        width = screen.query_one("#log", Log).scrollable_content_region.width
        expected = [piece for line in screen.shown_lines() for piece in real_wrap(line, width)]
        return screen.visible_text() == expected

    async def scenario() -> None:
        app = CtTui(client, running_job, poll_interval=0.2)
        async with app.run_test(size=(100, 40)) as pilot:
            screen = app.screen
            assert isinstance(screen, LogScreen)
            await wait_until(pilot, lambda: "— live —" in screen.shown_lines(), "the live marker")
            request_id = await asyncio.to_thread(fwd_bwd, local_server.base_url, running_job)
            await wait_until(
                pilot, lambda: any(request_id in line for line in screen.log_lines()), "the request"
            )
            page = [line for line in screen.log_lines() if request_id in line]
            assert page and all(on_ui_thread[line] is False for line in page), on_ui_thread
            assert rows_match(screen)

            rows_before = len(screen.visible_text())
            await pilot.resize_terminal(80, 40)
            await wait_until(
                pilot,
                lambda: rows_match(screen) and len(screen.visible_text()) > rows_before,
                "the lines cut again to the narrower pane",
            )

            # Lines a worker cut for a width the pane no longer has are cut again when drawn.
            text = "a line cut ahead for a pane of twelve columns, " * 3
            stale = Line(text, {"msg": text})
            stale.wrapped(12)
            screen._received(screen.source or "", [stale], screen._stop)
            width = screen.query_one("#log", Log).scrollable_content_region.width
            assert stale.width == width and list(stale.pieces) == real_wrap(text, width)
            assert rows_match(screen)

    run(scenario())
