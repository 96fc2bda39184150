"""The picker and the log screen, driven key by key with Textual's Pilot against a real ct_local job."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.widgets import Input, OptionList

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
        # Nothing listens on port 9 of loopback: every request fails to connect.
        with CortexTrainingClient(base_url="http://127.0.0.1:9", database="D", schema="S") as sdk:
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
            assert "HTTPError" not in text and "410" not in text
            marker = f"— saved console of {job_id}:sampling:0 —"
            await wait_until(pilot, lambda: marker in _log_text(app), "the saved console")
            shown = screen.shown_lines()
            console = shown[shown.index(marker) + 1 :]
            assert any("job status initializing -> running" in line for line in console), shown
            assert "— live —" not in console

    run(scenario())
