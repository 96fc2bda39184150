"""What the deployments and runs screens share: a list read on a worker thread, refreshed on a period.

A listing screen reads its records when it is mounted, again on `r`, and every `refresh_s`
seconds while it is the screen on top and no read is running. The read (`read`, the screen's
own) runs on a worker thread and answers the records or the one line that says why there are
none; the records are kept newest first and drawn by the screen's `_render_rows`. The subtitle
names the screen's keys and when the list was last read; `b` / `Esc` go back to the picker.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from textual import work
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ct_cli.tui import format as fmt


class ListingScreen(Screen[None]):
    """A read-only list of the service's records that refreshes itself while it is shown."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b", "back", "Back"),
        Binding("escape", "back", "Back", show=False),
        Binding("r", "refresh", "Refresh"),
        Binding("q", "app.quit", "Quit"),
    ]
    #: Seconds between refreshes while the screen is on top.
    refresh_s: ClassVar[float]
    #: The keys the subtitle names, before the refresh state.
    keys_hint: ClassVar[str]

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client
        self.records: list[dict[str, Any]] = []
        self.error: str | None = None
        self.loaded = False
        self.refreshing = False
        self.last_refreshed: str | None = None

    @property
    def post(self) -> Any:
        """The app's `post`: runs a callback on the UI thread from a worker."""
        return self.app.post  # type: ignore[attr-defined]

    def read(self) -> tuple[list[dict[str, Any]] | None, str | None]:
        """On the worker thread: the records, or None and the line that says why not."""
        raise NotImplementedError

    def _render_rows(self) -> None:
        raise NotImplementedError

    def start_refreshing(self) -> None:
        """From the screen's `on_mount`: refresh on the period, and read the list now."""
        self.set_interval(self.refresh_s, self._tick)
        self.action_refresh()

    def _tick(self) -> None:
        if self.app.screen is self and not self.refreshing:
            self.action_refresh()

    def _update_subtitle(self) -> None:
        state = "refreshing…" if self.refreshing else f"last refreshed {self.last_refreshed or '—'}"
        self.sub_title = f"read-only ({self.keys_hint}){fmt.SEPARATOR}{state}"

    def action_refresh(self) -> None:
        self.refreshing = True
        self._update_subtitle()
        self._fetch()

    @work(thread=True, exclusive=True, group="listing")
    def _fetch(self) -> None:
        found, error = self.read()
        self.post(self._show, found, error)

    def _show(self, found: list[dict[str, Any]] | None, error: str | None) -> None:
        self.refreshing = False
        self.loaded = True
        self.error = error
        if found is not None:
            # Newest first, like the job picker.
            self.records = sorted(found, key=lambda r: str(r.get("created_at") or ""), reverse=True)
            self.last_refreshed = time.strftime("%H:%M:%S")
        self._update_subtitle()
        self._render_rows()

    def action_back(self) -> None:
        if self.app.screen is self and len(self.app.screen_stack) > 1:
            self.app.pop_screen()
