"""The job picker: the schema's jobs, newest first, with a filter; Enter opens a job's log screen.

Jobs are read with `client.list_jobs` on a worker thread, so a slow service never freezes the
screen. The list refreshes itself every `REFRESH_S` seconds, but only while the picker is the screen
on top (a user reading logs does not make it poll), and the cursor stays on the job it was on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList
from textual.widgets.option_list import Option

from ct_cli.tui import format as fmt

if TYPE_CHECKING:
    from ct_cli.tui.app import CtTui

#: Seconds between automatic refreshes while the picker is visible.
REFRESH_S = 20.0
#: Option ids of job rows start with this; the empty and error rows have none.
ROW_PREFIX = "job:"


class JobPickerScreen(Screen[None]):
    """Pick a job: `status │ created │ job_id │ sub-job types` rows, newest first."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("r", "refresh", "Refresh"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.jobs: list[dict[str, Any]] = []
        self.error: str | None = None
        self.query_text = ""
        self.loaded = False
        self.refreshing = False
        self.last_refreshed: str | None = None

    @property
    def tui(self) -> CtTui:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header()
        yield OptionList(id="jobs")
        yield Input(
            placeholder="filter jobs: id, status, type, model  (/ focus · Esc clear)", id="job-filter"
        )
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(REFRESH_S, self._tick_refresh)
        self._update_subtitle()

    def on_screen_resume(self) -> None:
        # The first time the picker is shown (it may sit below a log screen opened from the command
        # line until the user goes back), and whenever the user returns to it.
        self._update_subtitle()
        if not self.loaded and not self.refreshing:
            self.action_refresh()

    def _tick_refresh(self) -> None:
        if self.app.screen is self and not self.refreshing:
            self.action_refresh()

    def _update_subtitle(self) -> None:
        state = "refreshing…" if self.refreshing else f"last refreshed {self.last_refreshed or '—'}"
        self.sub_title = f"select a job (↑/↓, Enter · / filter · r refresh){fmt.SEPARATOR}{state}"

    def action_refresh(self) -> None:
        self.refreshing = True
        self._update_subtitle()
        self._fetch()

    @work(thread=True, exclusive=True, group="jobs")
    def _fetch(self) -> None:
        try:
            jobs = self.tui.client.list_jobs()
        except Exception as exc:  # every failure is shown as a row; the picker stays usable
            self.tui.post(self._show, None, f"list_jobs failed: {type(exc).__name__}: {exc}")
            return
        self.tui.post(self._show, jobs, None)

    def _show(self, jobs: list[dict[str, Any]] | None, error: str | None) -> None:
        self.refreshing = False
        self.loaded = True
        self.error = error
        if jobs is not None:
            self.jobs = fmt.newest_first(jobs)
            self.last_refreshed = time.strftime("%H:%M:%S")
        self._update_subtitle()
        self._render_rows()

    def visible_jobs(self) -> list[dict[str, Any]]:
        return [job for job in self.jobs if fmt.job_id_of(job) and fmt.job_matches(job, self.query_text)]

    def _render_rows(self) -> None:
        rows = self.query_one("#jobs", OptionList)
        keep = self.highlighted_job_id()
        previous = rows.highlighted
        rows.clear_options()
        if self.error is not None:
            rows.add_option(Option(Text(f"[error] {self.error}", style="bold"), disabled=True))
            return
        visible = self.visible_jobs()
        if not visible:
            empty = "(no matching jobs)" if self.query_text else "(no jobs found)"
            rows.add_option(Option(Text(empty, style="dim"), disabled=True))
            return
        options = []
        for job in visible:
            status, rest = fmt.job_row(job)
            prompt = Text.assemble((status, fmt.status_style(job.get("status"))), rest)
            options.append(Option(prompt, id=ROW_PREFIX + fmt.job_id_of(job)))
        rows.add_options(options)
        ids = [fmt.job_id_of(job) for job in visible]
        if keep in ids:
            rows.highlighted = ids.index(keep)
        else:
            rows.highlighted = min(previous or 0, len(ids) - 1)

    def highlighted_job_id(self) -> str | None:
        rows = self.query_one("#jobs", OptionList)
        option = rows.highlighted_option
        if option is None or not option.id or not option.id.startswith(ROW_PREFIX):
            return None
        return option.id.removeprefix(ROW_PREFIX)

    def action_focus_filter(self) -> None:
        self.query_one("#job-filter", Input).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#job-filter", Input)
        box.value = ""
        self.query_one("#jobs", OptionList).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "job-filter":
            self.query_text = event.value.strip()
            if self.loaded:
                self._render_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "job-filter":
            self.query_one("#jobs", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if not option_id.startswith(ROW_PREFIX):
            return
        job_id = option_id.removeprefix(ROW_PREFIX)
        status = next((job.get("status") for job in self.jobs if fmt.job_id_of(job) == job_id), None)
        self.tui.open_job(job_id, status=status)
