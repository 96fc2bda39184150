"""What the Resources and Training tabs share: download while shown, refresh on a period, notes,
and drawing once the layout has settled.

A tab downloads when it is first shown, then every `refresh_s` seconds while it is on screen and
no download is running. Its `start_download` hands `run_download` the download to make; that runs
on a worker thread (one at a time per tab) and hands its entries, or its failure as a note, back
through `finished`. A redraw waits for the layout (the width is only known then) and draws with
the tab's own `_draw`.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
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

    def on_mount(self) -> None:
        self.set_interval(self.refresh_s, self.tick)  # type: ignore[attr-defined]
        self.redraw()

    def on_resize(self) -> None:
        self.redraw()

    def on_show(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Draw again once the layout is settled (the width is only known then); repeated calls
        before that draw once."""
        if self.is_mounted and not self._draw_pending:  # type: ignore[attr-defined]
            self._draw_pending = True
            self.call_after_refresh(self._draw)  # type: ignore[attr-defined]

    def _draw(self) -> None:
        raise NotImplementedError

    def start_download(self) -> None:
        """Start this tab's download (through `run_download`)."""
        raise NotImplementedError

    def run_download(
        self,
        operation: str,
        download: Callable[..., list[dict[str, Any]]],
        folder: str,
        first: str | None,
        on_data: Callable[..., object],
    ) -> None:
        """Run ``download`` (a `ct_cli.tui.metrics` download) for the job on a worker thread; a new
        one replaces a running one of this tab.

        It gets the job's client and id, the app's private ``folder`` for it, the sub-job whose
        rows come first and the sub-jobs in scope, and hands each sub-job's rows to ``on_data``
        (on the worker thread: post them to the app). ``operation`` names it in the note a
        failure leaves (its traceback goes to the error log).
        """
        owner, tui = self.owner, self.owner.tui
        sub_job_ids = owner.scoped_sub_jobs()

        def run() -> None:
            try:
                entries = download(
                    owner.job_client,
                    owner.job_id,
                    owner.download_dir(folder),
                    first=first,
                    sub_job_ids=sub_job_ids,
                    on_data=on_data,
                )
            except Exception as exc:
                self.post_failure(tui, operation, exc)
                return
            tui.post(self.finished, entries, None)

        self.run_worker(run, thread=True, exclusive=True, group=f"download-{self.id}")  # type: ignore[attr-defined]

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
