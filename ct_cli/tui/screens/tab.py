"""What the Resources and Training tabs share: download while shown, refresh on a period, notes.

A tab downloads when it is first shown, then every `refresh_s` seconds while it is on screen and
no download is running; the download runs on a worker thread (`start_download`, the tab's own
`@work` method) and hands its result back through `finished`.
"""

from __future__ import annotations

import time
import traceback
from typing import TYPE_CHECKING, Any

from ct_cli.tui import metrics

if TYPE_CHECKING:
    from ct_cli.tui.screens.views import JobView, TuiApp


class DownloadingTab:
    """Mixed into a tab widget: its download state and the download-refresh cycle."""

    owner: JobView
    refresh_s: float

    def init_tab(self, owner: JobView) -> None:
        self.owner = owner
        self.notes: list[str] = []
        self.error: str | None = None
        # True while a download runs (not `loading`: that is Textual's, and shows its indicator).
        self.fetching = False
        self.downloads = 0
        self.updated: str | None = None
        self._draw_pending = False

    def redraw(self) -> None:
        raise NotImplementedError

    def start_download(self) -> None:
        raise NotImplementedError

    def activate(self) -> None:
        """The tab was shown: download now unless a download is running or one ran recently."""
        if not self.fetching and self.downloads == 0:
            self.load()
        self.redraw()

    def tick(self) -> None:
        if self.display and self.app.screen is self.owner and not self.fetching:  # type: ignore[attr-defined]
            self.load()

    def load(self) -> None:
        self.fetching = True
        self.redraw()
        self.start_download()

    def post_failure(self, tui: TuiApp, operation: str, exc: Exception) -> None:
        """From the worker thread: log the traceback, show one line naming the error log."""
        tui.record_error(f"{operation} {self.owner.job_id} failed", traceback.format_exc())
        note = (
            f"[error] {operation} failed: {type(exc).__name__}: {exc}  "
            f"(full traceback: {tui.error_log_label})"
        )
        tui.post(self.finished, None, note)

    def finished(self, entries: list[dict[str, Any]] | None, error: str | None) -> None:
        # True while a download runs (not `loading`: that is Textual's, and shows its indicator).
        self.fetching = False
        self.downloads += 1
        self.error = error
        if entries is not None:
            self.notes = metrics.notes_of(entries)
            self.updated = time.strftime("%H:%M:%S")
        self.redraw()
