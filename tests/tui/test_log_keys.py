"""The log screen's cache, keys and session warm-up, driven with Pilot against a real ct_local job."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Any

from textual.geometry import Offset
from textual.selection import Selection
from textual.widgets import Log, OptionList

from ct_cli.tui import format as fmt
from ct_cli.tui.app import CtTui
from ct_cli.tui.cache import LogCache
from ct_cli.tui.screens import logs
from ct_cli.tui.screens.jobs import JobPickerScreen
from ct_cli.tui.screens.logs import LogScreen
from tests.tui.conftest import DATABASE, SCHEMA, fwd_bwd, run, server_log_lines, wait_until

SIZE = (160, 45)
LIVE = "— live —"


def _screen(app: CtTui) -> LogScreen:
    screen = app.screen
    assert isinstance(screen, LogScreen)
    return screen


def _error_log(home: Path) -> str:
    path = home / ".cortex-training-errors.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_save_names_follow_the_rule_and_stay_one_file() -> None:
    assert fmt.save_name("0123456789abcdef", "0123456789abcdef:training:0") == (
        "cortex-training-01234567-0123456789abcdef-training-0.log"
    )
    name = fmt.save_name("job/../x", "../../etc/passwd\\:\n")
    assert "/" not in name and "\\" not in name and "\n" not in name
    assert name == "cortex-training-job_.._x-.._.._etc_passwd_-_.log"


def test_reopening_replays_the_cache_then_reads_only_what_is_new(
    client: Any, running_job: str, local_server: Any, cache_dir: Path
) -> None:
    sub = f"{running_job}:training:0"

    async def first_visit() -> str:
        app = CtTui(client, running_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: LIVE in _screen(app).shown_lines(), "the live marker")
            request_id = await asyncio.to_thread(fwd_bwd, local_server.base_url, running_job)
            await wait_until(
                pilot, lambda: any(request_id in line for line in _screen(app).log_lines()), "the request"
            )
            # The cache holds what was shown, and the cursor after it.
            await wait_until(
                pilot,
                lambda: any(
                    request_id in entry.get("_raw", "") for entry in LogCache(running_job).load(sub).entries
                ),
                "the request's lines in the cache",
            )
            await pilot.press("q")
        return request_id

    async def second_visit(before: list[str], while_closed: str) -> None:
        app = CtTui(client, running_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(
                pilot,
                lambda: any(while_closed in line for line in _screen(app).log_lines()),
                "the new request",
            )
            shown = _screen(app).shown_lines()
            live = shown.index(LIVE)
            # Replayed from the cache: everything read before comes ahead of the live marker ...
            assert [line for line in shown[:live] if not line.startswith("—")] == before
            # ... and the tail resumed from the cursor: the log, once, with no line twice and none missing.
            lines = _screen(app).log_lines()
            server = await asyncio.to_thread(server_log_lines, client, running_job, sub)
            assert lines == server[: len(lines)]
            assert len(lines) > len(before)

    cache_file = LogCache(running_job).path_for(sub)
    request_id = asyncio.run(first_visit())
    assert cache_file.is_relative_to(cache_dir) and _mode(cache_file) == 0o600
    before = [fmt.entry_text(entry) for entry in LogCache(running_job).load(sub).entries]
    assert any(request_id in line for line in before)
    while_closed = fwd_bwd(local_server.base_url, running_job)
    run(second_visit(before, while_closed))


def test_save_copy_refresh_and_panel_keys(
    client: Any, running_job: str, local_server: Any, home: Path
) -> None:
    sub = f"{running_job}:training:0"

    async def scenario() -> None:
        app = CtTui(client, running_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = _screen(app)
            await wait_until(pilot, lambda: LIVE in screen.shown_lines(), "the live marker")
            request_id = await asyncio.to_thread(fwd_bwd, local_server.base_url, running_job)
            # The request's last line: the server writes it after the answer the client polls for, so a
            # page may bring the start line alone. With it shown the log is still, and the lines that
            # s, y and c take cannot change between a key and its check.
            await wait_until(
                pilot,
                lambda: any(request_id in line and " done in " in line for line in screen.log_lines()),
                "the request's last line",
            )
            keys = set(screen.active_bindings)
            assert {"s", "y", "c", "r", "left_square_bracket", "right_square_bracket"} <= keys

            # s: the lines the filter lets through, to the file the rule names, owner-only.
            await pilot.press("slash", *request_id[:12], "enter")
            filtered = screen.log_lines()
            assert filtered and all(request_id[:12] in line for line in filtered)
            await pilot.press("s")
            saved = home / f"cortex-training-{running_job[:8]}-{sub.replace(':', '-')}.log"
            assert saved.read_text(encoding="utf-8") == "".join(f"{line}\n" for line in filtered)
            assert _mode(saved) == 0o600
            assert f"[saved] {len(filtered)} line(s) → {saved}" in screen.shown_lines()
            await pilot.press("escape")  # clears the filter

            # y: every shown line of the log (not the screen's own notes) to the clipboard.
            await pilot.press("y")
            everything = screen.log_lines()
            assert app.clipboard == "\n".join(everything) and len(everything) > len(filtered)
            assert f"[copied] {len(everything)} line(s) to clipboard" in screen.shown_lines()

            # c: with nothing selected the last line; with a selection, the selected text.
            await pilot.press("c")
            assert app.clipboard == everything[-1]
            assert screen.shown_lines()[-1] == "[copied] the last line to clipboard"
            log = screen.query_one("#log", Log)
            screen.selections = {log: Selection.from_offsets(Offset(0, 0), Offset(10, 1))}
            await pilot.pause()
            await pilot.press("c")
            assert app.clipboard == log.lines[0] + "\n" + log.lines[1][:10]
            assert screen.shown_lines()[-1] == "[copied] the selection (2 line(s)) to clipboard"

            # [ and ]: the panel's width in steps of 8, within its bounds; the log is wrapped again.
            panel = screen.query_one("#sources", OptionList)
            assert panel.outer_size.width == logs.PANEL_DEFAULT
            await pilot.press("left_square_bracket")
            await wait_until(pilot, lambda: panel.outer_size.width == 40, "a narrower panel")
            await pilot.press(*["left_square_bracket"] * 5)
            await wait_until(pilot, lambda: panel.outer_size.width == logs.PANEL_MIN, "the narrowest panel")
            narrow_rows = len(screen.visible_text())
            await pilot.press(*["right_square_bracket"] * 20)
            await wait_until(pilot, lambda: panel.outer_size.width == logs.PANEL_MAX, "the widest panel")
            width = screen.query_one("#log", Log).scrollable_content_region.width
            # The pane is cut again after a refresh, for each step of the panel on the way: wait for
            # the cut that fits the final width, not just for more rows than before.
            await wait_until(
                pilot,
                lambda: (
                    len(screen.visible_text()) > narrow_rows
                    and all(len(row) <= width for row in screen.visible_text())
                ),
                "the log wrapped again",
            )

            # r: the job is read again and its source restarted from the cache: the same log, once.
            await pilot.press(*["left_square_bracket"] * 12)
            await pilot.press("p")
            screen._show_note("a note from before the refresh")
            await pilot.press("r")
            await wait_until(
                pilot,
                lambda: (
                    "a note from before the refresh" not in screen.shown_lines()
                    and LIVE in screen.shown_lines()
                ),
                "the restarted source",
            )
            assert not screen.paused and "PAUSED" not in (screen.sub_title or "")
            lines = screen.log_lines()
            server = await asyncio.to_thread(server_log_lines, client, running_job, sub)
            assert lines == server[: len(lines)] and any(request_id in line for line in lines)
            assert (screen.sub_title or "").startswith(f"{running_job}  ·  running")
            assert panel.highlighted == 0 and screen.source == sub
            await pilot.press("q")

    run(scenario())


class CountingClient:
    """The real SDK client, counting the warm-ups the screens ask for."""

    def __new__(cls, base_url: str) -> Any:
        from ct_core import CortexTrainingClient

        class Counting(CortexTrainingClient):
            warm_ups: list[str]

            def warm_artifact_session(self, job_id: str) -> None:
                self.warm_ups.append(job_id)
                super().warm_artifact_session(job_id)

        sdk = Counting(base_url=base_url, database=DATABASE, schema=SCHEMA, poll_interval=0.05)
        sdk.warm_ups = []
        return sdk


def test_the_session_is_warmed_once_per_job_screen_and_closed_at_the_end(
    running_job: str, local_server: Any, home: Path
) -> None:
    sdk = CountingClient(local_server.base_url)

    async def scenario() -> None:
        app = CtTui(sdk, running_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: LIVE in _screen(app).shown_lines(), "the live marker")
            await wait_until(pilot, lambda: sdk.warm_ups == [running_job], "the warm-up")
            assert sdk.keep_artifact_sessions is True  # kept while the TUI runs
            _screen(app)._show_note("a note from before the refresh")
            await pilot.press("r")
            await wait_until(
                pilot,
                lambda: (
                    "a note from before the refresh" not in _screen(app).shown_lines()
                    and LIVE in _screen(app).shown_lines()
                ),
                "the restarted source",
            )
            await pilot.press("b")
            assert isinstance(app.screen, JobPickerScreen)
            app.open_job(running_job)  # a new job screen warms up again
            await wait_until(pilot, lambda: sdk.warm_ups == [running_job, running_job], "the second warm-up")

    try:
        run(scenario())
        # The app closed the sessions it kept on its way out.
        assert sdk.keep_artifact_sessions is False
        assert "warm-up" not in _error_log(home)
    finally:
        sdk.close()


def test_a_failed_warm_up_is_silent_and_logged_once_and_cached_sources_stand_in(
    client: Any, local_server: Any, home: Path
) -> None:
    missing = "ct-tui-no-such-job"
    sub = f"{missing}:training:0"
    LogCache(missing).append(
        sub, [{"_raw": "2025-01-01T00:00:00Z a line read on an earlier day"}], "c1", start=None
    )

    async def scenario() -> None:
        app = CtTui(client, missing, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = _screen(app)
            # get_job fails: the panel offers the sub-job with cached lines, and replays them.
            await wait_until(
                pilot,
                lambda: "2025-01-01T00:00:00Z a line read on an earlier day" in screen.shown_lines(),
                "replay",
            )
            panel = screen.query_one("#sources", OptionList)
            assert [str(panel.get_option_at_index(i).prompt) for i in range(panel.option_count)] == [
                "training #0"
            ]
            assert any(
                line.startswith(f"[error] get_job {missing} failed: ") for line in screen.shown_lines()
            )
            await wait_until(pilot, lambda: "warm-up for" in _error_log(home), "the logged warm-up failure")
            await pilot.press("r")  # the screen reads the job again; it does not warm up again
            await wait_until(
                pilot,
                lambda: (
                    sum(line.startswith("[error] get_job") for line in screen.shown_lines()) >= 1
                    and "a line read on an earlier day" in "\n".join(screen.shown_lines())
                ),
                "the refreshed screen",
            )
            await pilot.pause(2 * logs.WARM_AFTER_S)
            shown = "\n".join(screen.shown_lines())
            assert "warm" not in shown and "artifact" not in shown

    run(scenario())
    text = _error_log(home)
    assert text.count("artifact session warm-up for") == 1 and missing in text
    assert "Traceback (most recent call last)" in text
    assert _mode(home / ".cortex-training-errors.log") == 0o600
    assert os.path.isfile(home / ".cortex-training-errors.log")


def test_a_saved_cursor_the_service_refuses_starts_the_log_afresh(
    client: Any, running_job: str, cache_dir: Path
) -> None:
    sub = f"{running_job}:training:0"
    LogCache(running_job).append(
        sub, [{"_raw": "a line of another server's log"}], "not-a-cursor", start=None
    )

    async def scenario() -> None:
        app = CtTui(client, running_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = _screen(app)
            await wait_until(
                pilot,
                lambda: any("job status initializing -> running" in line for line in screen.log_lines()),
                "the newest lines",
            )
            shown = screen.shown_lines()
            assert any(line.startswith("[cache] the service refused the saved cursor") for line in shown)
            assert "a line of another server's log" not in shown
            server = await asyncio.to_thread(server_log_lines, client, running_job, sub)
            assert screen.log_lines() == server[: len(screen.log_lines())]

    run(scenario())
    replay = LogCache(running_job).load(sub)
    assert replay.cursor and replay.cursor != "not-a-cursor"
    assert all(entry.get("_raw") != "a line of another server's log" for entry in replay.entries)
