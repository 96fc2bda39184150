"""The log screen of one job: a summary line, one source per sub-job, and the live tail of the chosen one.

Reading happens on worker threads (the job record, the local log cache, the tail, the saved
console); the screen keeps the lines it was given in a bounded buffer and draws from it, so the
level and text filters, and a new pane width, apply to everything received without asking the
service again. The workers also cut each line to the pane's width before handing it over, so a page
of 2,000 lines costs the UI thread only the drawing; a line cut for a width the pane no longer has
(it was resized meanwhile) is cut again when drawn, and a resize cuts the whole buffer again.

A sub-job's cached lines are shown first and the tail resumes from the cursor the cache saved, so
reopening a job reads only what is new. When the job ends the screen says so and shows the
sub-job's saved console, never an HTTP error.

Once the first lines are drawn (or `WARM_AFTER_S` after the screen opens) the screen prepares a
download session for the job on a worker thread, so the first metrics download starts sooner; a
warm-up that fails is silent on screen and leaves its traceback in the error log.
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Log, OptionList, Static
from textual.widgets.option_list import Option

from ct_cli.tui import cache as log_cache
from ct_cli.tui import format as fmt
from ct_cli.tui import tail
from ct_core.fs import atomic_write

if TYPE_CHECKING:
    from ct_cli.tui.screens.views import TuiApp

#: Lines the screen keeps (and the log pane shows) per source.
BUFFER_LINES = 20_000
#: The saved console is downloaded again until its chunk count stops growing or this many seconds
#: pass, then every `CONSOLE_REFRESH_S` while the screen is open.
CONSOLE_SETTLE_S = 60.0
CONSOLE_RETRY_S = 2.0
CONSOLE_REFRESH_S = 30.0
NO_OUTPUT = "No log output is available."
#: The sources panel's width in columns: its default, bounds and the step of `[` and `]`; the log
#: pane always keeps `LOG_MIN_WIDTH` columns.
PANEL_DEFAULT = 48
PANEL_MIN = 24
PANEL_MAX = 140
PANEL_STEP = 8
LOG_MIN_WIDTH = 20
#: Seconds after the screen opens when the download session is warmed up if no line came before.
WARM_AFTER_S = 1.5


@dataclass(eq=False)
class Line:
    """One buffered line: its text, the entry it came from (None for the screen's own notes), and
    the pieces it was last cut into with the width they were cut for (`width` None: never cut).

    A worker cuts a line before handing it to the UI thread; after that only the UI thread touches
    it. Keeping the pieces means a filter or level change redraws without cutting anything again.
    """

    text: str
    entry: dict[str, Any] | None = None
    pieces: tuple[str, ...] = ()
    width: int | None = None

    def wrapped(self, width: int) -> tuple[str, ...]:
        """The line cut to `width` columns, cut again only when the width changed."""
        if self.width != width:
            self.pieces = tuple(fmt.wrap(self.text, width))
            self.width = width
        return self.pieces


def prewrap(lines: list[Line], width: int) -> list[Line]:
    """Cut `lines` to `width` columns ahead, on the worker thread that made them; while the pane's
    width is not known yet (0 or less) they are left for the UI thread to cut."""
    if width > 0:
        for line in lines:
            line.wrapped(width)
    return lines


class LogScreen(Screen[None]):
    """One job's logs. Strictly read-only: nothing here changes the job."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b", "back", "Back"),
        Binding("escape", "escape", "Back/clear", show=False),
        Binding("slash", "focus_filter", "Filter"),
        Binding("L", "cycle_level", "Level"),
        Binding("p", "toggle_pause", "Pause"),
        Binding("s", "save", "Save"),
        Binding("y", "copy_all", "Copy all"),
        Binding("c", "copy_selection", "Copy sel."),
        Binding("r", "refresh", "Refresh"),
        Binding("left_square_bracket", "narrow_panel", "Narrower", key_display="["),
        Binding("right_square_bracket", "widen_panel", "Wider", key_display="]"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(
        self, job_id: str, *, status: Any = None, sub_job_id: str | None = None, client: Any = None
    ) -> None:
        super().__init__()
        self.job_id = job_id
        self._client = client
        self.status: Any = status
        self.reason: str | None = None
        self.only_sub_job = sub_job_id
        self.sources: list[tuple[str, str]] = []
        self.source: str | None = None
        self.query_text = ""
        self.level: str | None = None
        self.paused = False
        self.updated: str | None = None
        self.buffer: deque[Line] = deque(maxlen=BUFFER_LINES)
        self._stop = threading.Event()
        #: The width the whole buffer was last cut for (a resize compares against it), and the
        #: width lines were last drawn at, which the workers cut their lines for (0: not known yet).
        self._drawn_width = -1
        self._wrap_width = 0
        self.panel_width = PANEL_DEFAULT
        self.cache: log_cache.LogCache | None = None
        self._cache_broken = False
        self.warmed = False

    @property
    def tui(self) -> TuiApp:
        return self.app  # type: ignore[return-value]

    @property
    def job_client(self) -> Any:
        """The SDK client the job is read with: the one given (a job the account-wide search found in
        another database and schema), else the app's."""
        return self._client if self._client is not None else self.tui.client

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="summary")
        with Horizontal():
            yield OptionList(id="sources")
            yield Log(id="log", max_lines=BUFFER_LINES, highlight=False, auto_scroll=False)
        yield Input(placeholder="filter lines  (/ focus · Esc clear)", id="log-filter")
        yield Footer()

    def on_mount(self) -> None:
        try:
            self.cache = log_cache.LogCache(self.job_id)
        except ValueError:
            self.cache = None  # an id the cache cannot name: follow the log without it
        self._update_subtitle()
        self.set_timer(WARM_AFTER_S, self._warm_up)
        self._load_job()

    def on_unmount(self) -> None:
        self._stop.set()

    # --- the job and its sources ------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="job")
    def _load_job(self) -> None:
        try:
            job = self.job_client.get_job(self.job_id) or {}
        except Exception as exc:
            self.tui.post(self._job_failed, f"{type(exc).__name__}: {exc}")
            return
        self.tui.post(self._job_loaded, job)

    def _has_left(self) -> bool:
        """Whether the screen has left (a worker's answer that comes later is dropped)."""
        return not self.is_attached or self not in self.app.screen_stack

    def _job_loaded(self, job: dict[str, Any]) -> None:
        if self._has_left():
            return
        self.status = job.get("status") or self.status
        self.reason = job.get("reason") or None
        self.query_one("#summary", Static).update(fmt.job_summary(job))
        sources = fmt.sources_of(job)
        if self.only_sub_job and any(sub == self.only_sub_job for sub, _ in sources):
            sources = [(sub, label) for sub, label in sources if sub == self.only_sub_job]
        self._update_subtitle()
        if not self._show_sources(sources or self._cached_sources()):
            self._show_note("[no logs] this job has no sub-jobs and no cached logs are available")

    def _job_failed(self, error: str) -> None:
        if self._has_left():
            return
        note = f"[error] get_job {self.job_id} failed: {error}"
        if self.only_sub_job:
            sources = [(self.only_sub_job, fmt.source_label(self.only_sub_job))]
        else:
            # The service cannot say which sub-jobs there are: offer those with cached lines.
            sources = self._cached_sources() or self.sources
        shown = self._show_sources(sources)
        self._show_note(note)
        if not shown:
            self._show_note("[no logs] this job has no sub-jobs and no cached logs are available")

    def _cached_sources(self) -> list[tuple[str, str]]:
        if self.cache is None or self._cache_broken:
            return []
        try:
            found = self.cache.sources()
        except OSError:
            return []
        if self.only_sub_job:
            found = [sub for sub in found if sub == self.only_sub_job]
        return [(sub, fmt.source_label(sub)) for sub in found]

    def _show_sources(self, sources: list[tuple[str, str]]) -> bool:
        """Fill the panel and show the source shown before (after `r`), else the first; False if none."""
        self.sources = sources
        panel = self.query_one("#sources", OptionList)
        panel.clear_options()
        panel.add_options([Option(label, id=sub) for sub, label in sources])
        if not sources:
            return False
        ids = [sub for sub, _ in sources]
        chosen = self.source if self.source in ids else ids[0]
        panel.highlighted = ids.index(chosen)
        self.start_source(chosen)
        return True

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "sources" and event.option.id and event.option.id != self.source:
            self.start_source(event.option.id)

    def start_source(self, sub_job_id: str) -> None:
        """Show `sub_job_id` from the start: its live tail, or its saved console once the job ended."""
        self._stop.set()
        self._stop = threading.Event()
        self.source = sub_job_id
        self.paused = False
        self.buffer.clear()
        self.query_one("#log", Log).clear()
        self._update_subtitle()
        self._append([Line(f"— tailing {sub_job_id} —")])
        if fmt.is_terminal(self.status):
            self._append([Line(f"[ended] job {self.job_id} is {fmt.status_word(self.status)}")])
            self._read_saved_console(sub_job_id, self._stop, replay=True)
        else:
            self._tail(sub_job_id, self._stop)

    # --- reading ----------------------------------------------------------------------------------

    # --- the local log cache ----------------------------------------------------------------------

    def _cache_failed(self, what: str) -> None:
        """Note a disk error of the cache once in the error log; the screen goes on without it."""
        if not self._cache_broken:
            self._cache_broken = True
            self.tui.record_error(
                f"log cache of job {self.job_id}: {what}; following the log without the cache",
                traceback.format_exc(),
            )

    def _replay(self, sub_job_id: str, stop: threading.Event) -> str | None:
        """Show the cached lines of `sub_job_id` (worker thread); the cursor to resume from."""
        store = self.cache
        if store is None or self._cache_broken:
            return None
        try:
            replay = store.load(sub_job_id)
        except OSError:
            self._cache_failed(f"reading {sub_job_id} failed")
            return None
        if replay.corrupt:
            self.tui.record_error(
                f"log cache of {sub_job_id}",
                f"skipped {replay.corrupt} unreadable line(s) of {store.path_for(sub_job_id)}",
            )
        if replay.entries:
            lines = [Line(fmt.entry_text(entry), entry) for entry in replay.entries]
            self.tui.post(self._replayed, sub_job_id, prewrap(lines, self._wrap_width), stop)
        return replay.cursor

    def _store(self, sub_job_id: str, page: tail.Page) -> None:
        store = self.cache
        if store is None or self._cache_broken or not page.entries:
            return
        try:
            store.append(sub_job_id, page.entries, page.cursor, start=page.start)
        except OSError:
            self._cache_failed(f"writing {sub_job_id} failed")

    def _replayed(self, sub_job_id: str, lines: list[Line], stop: threading.Event) -> None:
        if stop.is_set() or sub_job_id != self.source:
            return
        self._append(lines)
        self._warm_up()

    def _cursor_refused(self, sub_job_id: str, note: str, stop: threading.Event) -> None:
        """The saved cursor was refused: drop the replayed lines, the newest ones come again."""
        if stop.is_set() or sub_job_id != self.source:
            return
        notes = [line for line in self.buffer if line.entry is None]
        self.buffer.clear()
        self.buffer.extend([*notes, Line(note)])
        self.redraw()

    # --- artifact session warm-up -----------------------------------------------------------------

    def _warm_up(self) -> None:
        """Start the warm-up once per screen: at the first drawn lines or `WARM_AFTER_S` after opening."""
        if self.warmed or not self.is_mounted:
            return
        self.warmed = True
        self._warm()

    @work(thread=True, group="warm")
    def _warm(self) -> None:
        warm = getattr(self.job_client, "warm_artifact_session", None)
        if not callable(warm):
            return
        try:
            warm(self.job_id)
        except Exception:
            # The download that needs the session logs in itself and says what failed: nothing here.
            self.tui.record_error(
                f"artifact session warm-up for job {self.job_id} failed", traceback.format_exc()
            )

    # --- reading ----------------------------------------------------------------------------------

    @work(thread=True, group="tail")
    def _tail(self, sub_job_id: str, stop: threading.Event) -> None:
        live = False
        try:
            cursor = self._replay(sub_job_id, stop)
            for page in tail.follow(
                self.job_client,
                self.job_id,
                sub_job_id,
                stop=stop,
                cursor=cursor,
                poll_interval=self.tui.poll_interval,
                # Quiet logs back off up to the usual ceiling, never below the interval asked for.
                max_interval=max(tail.MAX_POLL_INTERVAL_S, self.tui.poll_interval),
            ):
                if page.refused is not None:
                    self.tui.record_error(f"tail {sub_job_id}: saved cursor refused", page.refused)
                    if self.cache is not None:
                        with contextlib.suppress(OSError):
                            self.cache.reset(sub_job_id)
                    note = "[cache] the service refused the saved cursor; reading the newest lines again"
                    self.tui.post(self._cursor_refused, sub_job_id, note, stop)
                    continue
                # Cached even when stopped: the page has been read, so the next open need not read it again.
                self._store(sub_job_id, page)
                if stop.is_set():
                    return
                if page.ended is not None:
                    self.tui.post(self._ended, sub_job_id, page.ended, stop)
                    return
                lines = [Line(fmt.entry_text(entry), entry) for entry in page.entries]
                if not live:
                    live = True
                    lines.insert(0, Line("— live —"))
                if not lines:
                    continue
                prewrap(lines, self._wrap_width)
                if not self.tui.post(self._received, sub_job_id, lines, stop):
                    return
        except Exception as exc:
            if not stop.is_set():
                self.tui.record_error(f"tail {sub_job_id} failed", traceback.format_exc())
                note = (
                    f"[error] tail {sub_job_id} failed: {type(exc).__name__}: {exc}  "
                    f"(full traceback: {self.tui.error_log_label})"
                )
                self.tui.post(self._received, sub_job_id, [Line(note)], stop)

    def _received(self, sub_job_id: str, lines: list[Line], stop: threading.Event) -> None:
        if stop.is_set() or sub_job_id != self.source:
            return
        if any(line.entry is not None for line in lines):
            self.updated = time.strftime("%H:%M:%S")
            self._update_subtitle()
        self._append(lines)
        if any(line.entry is not None for line in lines):
            self._warm_up()

    def _ended(self, sub_job_id: str, why: str, stop: threading.Event) -> None:
        if stop.is_set() or sub_job_id != self.source:
            return
        self._append([Line(f"[ended] {why}; showing the saved console")])
        self._refresh_status()
        self._read_saved_console(sub_job_id, stop)

    @work(thread=True, group="status")
    def _refresh_status(self) -> None:
        try:
            job = self.job_client.get_job(self.job_id) or {}
        except Exception:
            return
        self.tui.post(self._status_known, job.get("status"), job.get("reason"))

    def _status_known(self, status: Any, reason: Any) -> None:
        if self._has_left():
            return
        self.status = status or self.status
        self.reason = reason or None
        self._update_subtitle()

    @work(thread=True, group="console")
    def _read_saved_console(self, sub_job_id: str, stop: threading.Event, *, replay: bool = False) -> None:
        if replay:
            self._replay(sub_job_id, stop)  # what the cache holds, until the saved console arrives
        stage = self.tui.stage_dir(self.job_id)
        shown: list[str] | None = None
        chunks = -1
        settle_until = time.monotonic() + CONSOLE_SETTLE_S
        while not stop.is_set():
            try:
                console = tail.saved_console(
                    self.job_client, self.job_id, sub_job_id, Path(stage), keep=BUFFER_LINES
                )
            except Exception as exc:
                self.tui.record_error(f"saved console of {sub_job_id} failed", traceback.format_exc())
                note = f"[error] saved console of {sub_job_id} failed: {type(exc).__name__}: {exc}"
                self.tui.post(self._received, sub_job_id, [Line(note)], stop)
                return
            if console.lines != shown:
                shown = console.lines
                lines = [Line(text, {"_raw": text}) for text in console.lines]
                self.tui.post(self._show_console, sub_job_id, prewrap(lines, self._wrap_width), stop)
            settling = console.chunk_count > chunks and time.monotonic() < settle_until
            chunks = console.chunk_count
            stop.wait(CONSOLE_RETRY_S if settling else CONSOLE_REFRESH_S)

    def _show_console(self, sub_job_id: str, lines: list[Line], stop: threading.Event) -> None:
        """Replace the pane's lines with the saved console (the screen's own notes stay on top)."""
        if stop.is_set() or sub_job_id != self.source:
            return
        marker = f"— saved console of {sub_job_id} —"
        if self.paused and any(line.text == marker for line in self.buffer):
            return  # a paused reader keeps the text they are reading; a later refresh catches up
        notes = [line for line in self.buffer if line.entry is None and line.text not in (marker, NO_OUTPUT)]
        received = [line for line in self.buffer if line.entry is not None]
        self.buffer.clear()
        self.buffer.extend(notes)
        if lines:
            self.buffer.append(Line(marker))
            self.buffer.extend(lines)
        elif received:
            self.buffer.extend(received)  # nothing saved yet: keep what the live tail showed
        else:
            self.buffer.append(Line(NO_OUTPUT))
        self.redraw()

    def _show_note(self, text: str) -> None:
        self._append([Line(text)])

    # --- drawing ----------------------------------------------------------------------------------

    def _visible(self, line: Line) -> bool:
        if line.entry is None:
            return True
        return fmt.passes_level(line.entry, self.level) and fmt.passes_filter(line.text, self.query_text)

    def _width(self) -> int:
        log = self.query_one("#log", Log)
        width = log.scrollable_content_region.width
        return width if width > 0 else log.size.width

    def _append(self, lines: list[Line]) -> None:
        self.buffer.extend(lines)
        width = self._width()
        self._wrap_width = width
        # Lines a worker cut for this width are drawn as they are; any other width cuts them here.
        wrapped = [piece for line in lines if self._visible(line) for piece in line.wrapped(width)]
        if wrapped:
            self.query_one("#log", Log).write_lines(wrapped, scroll_end=not self.paused)

    def redraw(self) -> None:
        """Draw the whole buffer again (after a filter, level or width change)."""
        log = self.query_one("#log", Log)
        width = self._width()
        self._drawn_width = self._wrap_width = width
        log.clear()
        wrapped = [piece for line in self.buffer if self._visible(line) for piece in line.wrapped(width)]
        log.write_lines(wrapped, scroll_end=not self.paused)

    def on_resize(self) -> None:
        self.call_after_refresh(self._rewrap)

    def _rewrap(self) -> None:
        if self.is_mounted and self._width() != self._drawn_width:
            self.redraw()

    def visible_text(self) -> list[str]:
        """The lines the log pane holds now, as wrapped to its width."""
        return list(self.query_one("#log", Log).lines)

    def shown_lines(self) -> list[str]:
        """The buffered lines that pass the filters, unwrapped: what the pane shows."""
        return [line.text for line in self.buffer if self._visible(line)]

    def log_lines(self) -> list[str]:
        """The log's own lines that pass the filters (not the screen's notes): what `s` and `y` take."""
        return [line.text for line in self.buffer if line.entry is not None and self._visible(line)]

    def _update_subtitle(self) -> None:
        parts = [self.job_id]
        if self.status:
            parts.append(fmt.status_word(self.status))
        if self.reason:
            parts.append(f"reason: {self.reason}")
        if self.query_text:
            parts.append(f"filter:{self.query_text}")
        if self.level:
            parts.append(f"≥{self.level}")
        if self.paused:
            parts.append("PAUSED")
        if self.updated:
            parts.append(f"updated {self.updated}")
        if self.tui.poll_interval != tail.DEFAULT_POLL_INTERVAL_S:
            parts.append(f"polls every {self.tui.poll_interval:g} s")  # only when --poll-interval set it
        self.sub_title = fmt.SEPARATOR.join(parts)

    # --- keys -------------------------------------------------------------------------------------

    def action_back(self) -> None:
        self._stop.set()
        self.tui.back_from(self)

    def action_escape(self) -> None:
        box = self.query_one("#log-filter", Input)
        if self.query_text or self.focused is box:
            box.value = ""
            self.query_one("#log", Log).focus()
        else:
            self.action_back()

    def action_focus_filter(self) -> None:
        self.query_one("#log-filter", Input).focus()

    def action_cycle_level(self) -> None:
        index = fmt.LEVEL_CYCLE.index(self.level) if self.level in fmt.LEVEL_CYCLE else 0
        self.level = fmt.LEVEL_CYCLE[(index + 1) % len(fmt.LEVEL_CYCLE)]
        self._update_subtitle()
        self.redraw()

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        if not self.paused:
            self.query_one("#log", Log).scroll_end(animate=False)
        self._update_subtitle()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "log-filter":
            self.query_text = event.value.strip()
            self._update_subtitle()
            self.redraw()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "log-filter":
            self.query_one("#log", Log).focus()

    def action_save(self) -> None:
        """Write the shown log lines to `~/cortex-training-<job>-<source>.log` (0600) and say where."""
        if self.source is None:
            self._show_note("[save] there is no log to save yet")
            return
        lines = self.log_lines()
        path = Path.home() / fmt.save_name(self.job_id, self.source)
        try:
            atomic_write(path, "".join(f"{line}\n" for line in lines), mode=0o600)
        except OSError as exc:
            self.tui.record_error(f"saving the log to {path} failed", traceback.format_exc())
            self._show_note(f"[error] saving to {path} failed: {type(exc).__name__}: {exc}")
            return
        self._show_note(f"[saved] {len(lines)} line(s) → {path}")

    def action_copy_all(self) -> None:
        """Copy the shown log lines to the clipboard (OSC 52, through the terminal)."""
        lines = self.log_lines()
        self.app.copy_to_clipboard("\n".join(lines))
        self._show_note(f"[copied] {len(lines)} line(s) to clipboard")

    def action_copy_selection(self) -> None:
        """Copy the text selected with the mouse; with no selection, the last shown line."""
        selected = self.get_selected_text()
        if selected:
            self.app.copy_to_clipboard(selected)
            self._show_note(f"[copied] the selection ({len(selected.splitlines())} line(s)) to clipboard")
            return
        lines = self.log_lines()
        if not lines:
            self._show_note("[copy] there is no line to copy")
            return
        self.app.copy_to_clipboard(lines[-1])
        self._show_note("[copied] the last line to clipboard")

    def action_refresh(self) -> None:
        """Read the job again and restart the shown source: its cache, then the tail from its cursor."""
        self._load_job()

    def action_narrow_panel(self) -> None:
        self._set_panel_width(self.panel_width - PANEL_STEP)

    def action_widen_panel(self) -> None:
        self._set_panel_width(self.panel_width + PANEL_STEP)

    def _set_panel_width(self, width: int) -> None:
        """Resize the sources panel within its bounds (and the log pane's minimum), then rewrap."""
        most = PANEL_MAX
        if self.size.width > 0:
            most = max(PANEL_MIN, min(PANEL_MAX, self.size.width - LOG_MIN_WIDTH))
        self.panel_width = max(PANEL_MIN, min(width, most))
        self.query_one("#sources", OptionList).styles.width = self.panel_width
        self.call_after_refresh(self._rewrap)
