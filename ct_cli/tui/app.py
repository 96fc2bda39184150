"""The Textual application behind `ct tui`: the screens it stacks, and what they share.

The app holds the SDK client (already built by the command, so connection errors are printed the
way every command prints them), the poll interval of the live tail, the error log and the folder
where saved consoles are downloaded. Screens reach the service only on worker threads and hand
results back with `post`, which stays quiet once the app is shutting down.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ct_cli.tui import tail
from ct_cli.tui.screens.jobs import JobPickerScreen
from ct_cli.tui.screens.logs import LogScreen

#: Where failures' tracebacks go (the screen shows one line and points here).
ERROR_LOG = "~/.cortex-training-errors.log"


class CtTui(App[None]):
    """Job picker, then a job's log screen; with a job id the log screen opens at once."""

    TITLE = "ct tui"
    CSS = """
    #jobs { height: 1fr; }
    #summary { color: $text-muted; padding: 0 1; height: auto; }
    #sources { width: 48; height: 1fr; border-right: solid $panel; }
    #log { height: 1fr; padding: 0 1; }
    Input { dock: bottom; margin-bottom: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "Quit")]

    def __init__(
        self,
        client: Any,
        job_id: str | None = None,
        *,
        sub_job_id: str | None = None,
        poll_interval: float = tail.DEFAULT_POLL_INTERVAL_S,
    ) -> None:
        super().__init__()
        self.client = client
        self.start_job_id = job_id
        self.sub_job_id = sub_job_id
        self.poll_interval = poll_interval
        self.error_log_label = ERROR_LOG
        self._stage_root: Path | None = None
        self._error_lock = threading.Lock()

    def on_mount(self) -> None:
        self.push_screen(JobPickerScreen())
        if self.start_job_id:
            self.open_job(self.start_job_id)

    def open_job(self, job_id: str, *, status: Any = None) -> None:
        self.push_screen(LogScreen(job_id, status=status, sub_job_id=self.sub_job_id))

    def back_from(self, screen: Screen[Any]) -> None:
        if self.screen is screen and len(self.screen_stack) > 1:
            self.pop_screen()

    def post(self, callback: Any, *args: Any) -> bool:
        """Run `callback(*args)` on the UI thread from a worker; False once the app has gone."""
        try:
            self.call_from_thread(callback, *args)
        except RuntimeError:
            return False
        return True

    def record_error(self, what: str, details: str) -> None:
        """Append a failure's traceback to the error log; a log that cannot be written is skipped."""
        path = Path(os.path.expanduser(self.error_log_label))
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with self._error_lock, contextlib.suppress(OSError):
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
                handle.write(f"{stamp} {what}:\n{details}\n")

    def stage_dir(self, job_id: str) -> Path:
        """A private folder for downloads of `job_id` (saved consoles), removed when the app ends."""
        if self._stage_root is None:
            self._stage_root = Path(tempfile.mkdtemp(prefix="ct-tui-"))
        folder = self._stage_root / job_id.replace("/", "_")
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def on_unmount(self) -> None:
        if self._stage_root is not None:
            shutil.rmtree(self._stage_root, ignore_errors=True)
