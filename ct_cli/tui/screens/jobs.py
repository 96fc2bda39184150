"""The job picker: the schema's jobs, newest first, with a filter; Enter opens a job's screen.

Jobs are read with `client.list_jobs` on a worker thread, so a slow service never freezes the
screen. The list refreshes itself every `REFRESH_S` seconds, but only while the picker is the screen
on top (a user reading logs does not make it poll), and the cursor stays on the job it was on.

A filter that names a location (`@DATABASE`, `@DATABASE.SCHEMA`, or `DATABASE.SCHEMA`) switches to
the account-wide list: that location's jobs are read in full with `client.list_jobs_page`, page
after page (`ct_cli.tui.account`), each row ending with its `DATABASE.SCHEMA`. The keys of the
other screens (model deployments, runs, plugins' screens) are bound by the app and work here.
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

from ct_cli.tui import account
from ct_cli.tui import format as fmt

if TYPE_CHECKING:
    from ct_cli.tui.screens.views import TuiApp

#: Seconds between automatic refreshes while the picker is visible.
REFRESH_S = 20.0
#: Option ids of job rows start with this; the empty and error rows have none.
ROW_PREFIX = "job:"
#: A location typed into the filter is searched once typing has paused this long (seconds).
ACCOUNT_SEARCH_DELAY_S = 0.4


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
        #: The location the filter names (account-wide mode), and what was read of it.
        self.location: account.Location | None = None
        self.walk: account.AccountWalk | None = None
        self.account_error: str | None = None
        self.searching = False
        self._search_timer: Any = None

    @property
    def tui(self) -> TuiApp:
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
        busy = self.searching if self.location is not None else self.refreshing
        state = "refreshing…" if busy else f"last refreshed {self.last_refreshed or '—'}"
        where = f"account-wide: {self.location.label()}{fmt.SEPARATOR}" if self.location is not None else ""
        self.sub_title = f"select a job (↑/↓, Enter · / filter · r refresh){fmt.SEPARATOR}{where}{state}"

    def action_refresh(self) -> None:
        if self.location is not None:
            self._search(self.location)
            return
        self.refreshing = True
        self._update_subtitle()
        self._fetch()

    # --- the account-wide list ----------------------------------------------------------------

    def _search(self, location: account.Location) -> None:
        self.searching = True
        self._update_subtitle()
        self._fetch_account(location)

    @work(thread=True, exclusive=True, group="account-jobs")
    def _fetch_account(self, location: account.Location) -> None:
        walk = account.AccountWalk(location)
        try:
            walk.read(self.tui.client)
        except Exception as exc:  # shown as the error row, like the schema's list
            self.tui.post(
                self._show_account, location, None, f"list_jobs_page failed: {type(exc).__name__}: {exc}"
            )
            return
        self.tui.post(self._show_account, location, walk, None)

    def _show_account(
        self, location: account.Location, walk: account.AccountWalk | None, error: str | None
    ) -> None:
        if location != self.location:
            return  # the filter changed while this location was read
        self.searching = False
        self.account_error = error
        if walk is not None:
            walk.jobs = fmt.newest_first(walk.jobs)
            self.walk = walk
            self.last_refreshed = time.strftime("%H:%M:%S")
        self._update_subtitle()
        self._render_rows()

    def _location_changed(self, location: account.Location | None) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        self.location = location
        self.walk = None
        self.account_error = None
        self.searching = location is not None
        self._update_subtitle()
        if location is not None:
            self._search_timer = self.set_timer(ACCOUNT_SEARCH_DELAY_S, lambda: self._search(location))

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
        if self.location is not None:
            return [job for job in (self.walk.jobs if self.walk else []) if fmt.job_id_of(job)]
        return [job for job in self.jobs if fmt.job_id_of(job) and fmt.job_matches(job, self.query_text)]

    def _render_rows(self) -> None:
        rows = self.query_one("#jobs", OptionList)
        keep = self.highlighted_job_id()
        previous = rows.highlighted
        rows.clear_options()
        error = self.account_error if self.location is not None else self.error
        if error is not None:
            rows.add_option(Option(Text(f"[error] {error}", style="bold"), disabled=True))
            return
        if self.location is not None and self.walk is None:
            where = self.location.label()
            rows.add_option(
                Option(Text(f"(reading the jobs of {where} across the account…)", style="dim"), disabled=True)
            )
            return
        visible = self.visible_jobs()
        if not visible:
            if self.location is not None:
                empty = f"(no jobs found in {self.location.label()})"
            else:
                empty = "(no matching jobs)" if self.query_text else "(no jobs found)"
            rows.add_option(Option(Text(empty, style="dim"), disabled=True))
            return
        options = []
        for job in visible:
            status, rest = fmt.job_row(job)
            where = account.location_of(job) if self.location is not None else ""
            prompt = Text.assemble((status, fmt.status_style(job.get("status"))), rest)
            if where:
                prompt.append(f" │ {where}", style="dim")
            options.append(Option(prompt, id=ROW_PREFIX + fmt.job_id_of(job)))
        rows.add_options(options)
        if self.walk is not None and self.location is not None and self.walk.truncated:
            note = f"(the newest {len(self.walk.jobs)} jobs of {self.location.label()} are shown)"
            rows.add_option(Option(Text(note, style="dim"), disabled=True))
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
            location = account.location_in(self.query_text)
            if location != self.location:
                self._location_changed(location)
            if self.loaded or self.location is not None:
                self._render_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "job-filter":
            self.query_one("#jobs", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if not option_id.startswith(ROW_PREFIX):
            return
        job_id = option_id.removeprefix(ROW_PREFIX)
        job = next((job for job in self.visible_jobs() if fmt.job_id_of(job) == job_id), None)
        status = job.get("status") if job else None
        self.tui.open_job(job_id, status=status, job=job if self.location is not None else None)
