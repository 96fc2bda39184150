"""The Textual application behind `ct tui`: the screens it stacks, and what they share.

The app holds the SDK client (already built by the command, so connection errors are printed the
way every command prints them), the poll interval of the live tail, the error log and the folder
where downloads (saved consoles, metrics) are staged. Screens reach the service only on worker
threads and hand results back with `post`, which stays quiet once the app is shutting down.

Screens beyond a job's own come from the `ct_tui_screens` hook (the built-in deployments and
runs screens register through it too): each entry's key opens it from the job picker. While the
app runs the client keeps its artifact sessions between downloads; they are closed on the way
out, waiting at most `CLOSE_SESSIONS_S`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ct_cli.tui import tail
from ct_cli.tui.screens import Collected, ScreenEntry, collect_entries
from ct_cli.tui.screens.jobs import JobPickerScreen

#: Where failures' tracebacks go (the screen shows one line and points here).
ERROR_LOG = "~/.cortex-training-errors.log"
#: Kept artifact sessions are closed on quit within this many seconds (the rest is abandoned).
CLOSE_SESSIONS_S = 1.0
#: The job screen's modules are imported in the background this long after start-up: the picker
#: does not wait for them, and Enter on a job does not either.
PRELOAD_AFTER_S = 0.5


class CtTui(App[None]):
    """Job picker, then a job's screen (logs, resources, training); a job id opens that screen at once."""

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
        plugin_manager: Any = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.start_job_id = job_id
        self.sub_job_id = sub_job_id
        self.poll_interval = poll_interval
        self.error_log_label = ERROR_LOG
        self._stage_root: Path | None = None
        self._error_lock = threading.Lock()
        # The hook is called here, when `ct tui` starts, and only here.
        self.screen_entries: Collected = collect_entries(plugin_manager)
        self._entries = {entry.name: entry for entry in self.screen_entries.entries}

    def on_mount(self) -> None:
        with contextlib.suppress(Exception):  # a client without kept sessions still works
            self.client.keep_artifact_sessions = True
        for entry in self.screen_entries.entries:
            self.bind(entry.key, f"open_screen({entry.name!r})", description=entry.title)
        for problem in self.screen_entries.problems:
            self.record_error("a TUI screen was left out", problem)
        if self.screen_entries.problems:
            self.notify(
                f"{len(self.screen_entries.problems)} plugin screen(s) left out; see {self.error_log_label}",
                severity="warning",
            )
        self.push_screen(JobPickerScreen())
        if self.start_job_id:
            self.open_job(self.start_job_id)
        else:
            self.set_timer(PRELOAD_AFTER_S, self._preload)

    def _preload(self) -> None:
        def load() -> None:
            with contextlib.suppress(Exception):
                import ct_cli.tui.screens.job  # noqa: F401

        threading.Thread(target=load, name="ct-tui-preload", daemon=True).start()

    # --- screens ------------------------------------------------------------------------------

    def open_job(self, job_id: str, *, status: Any = None, job: dict[str, Any] | None = None) -> None:
        """Open a job's screen; a job from the account-wide list is read in its own location."""
        client = None
        if job and job.get("database_name") and job.get("schema_name"):
            same = (str(job["database_name"]), str(job["schema_name"])) == (
                str(getattr(self.client, "database", "")),
                str(getattr(self.client, "schema", "")),
            )
            if not same:
                client = self.client.for_job(job)
        from ct_cli.tui.screens.job import JobScreen

        self.push_screen(JobScreen(job_id, status=status, sub_job_id=self.sub_job_id, client=client))

    def entry(self, name: str) -> ScreenEntry | None:
        return self._entries.get(name)

    def action_open_screen(self, name: str) -> None:
        entry = self._entries.get(name)
        if entry is None:
            return
        try:
            screen = entry.factory(self.client)
        except Exception as exc:
            self.record_error(f"opening the {name} screen failed", traceback.format_exc())
            self.notify(
                f"the {entry.title} screen could not be opened: {type(exc).__name__}: {exc}", severity="error"
            )
            return
        if not isinstance(screen, Screen):
            self.notify(
                f"the {entry.title} screen's factory did not return a Textual Screen", severity="error"
            )
            return
        if not screen.title:
            screen.title = entry.title
        self.push_screen(screen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The screens' keys belong to the job picker: elsewhere a letter means something else.
        if action == "open_screen":
            return isinstance(self.screen, JobPickerScreen)
        return True

    def back_from(self, screen: Screen[Any]) -> None:
        if self.screen is screen and len(self.screen_stack) > 1:
            self.pop_screen()

    # --- what the screens share ---------------------------------------------------------------

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
        """A private folder for downloads of `job_id` (saved consoles, metrics), removed when the app ends."""
        if self._stage_root is None:
            self._stage_root = Path(tempfile.mkdtemp(prefix="ct-tui-"))
        folder = self._stage_root / job_id.replace("/", "_")
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return folder

    def close_sessions(self, timeout_s: float = CLOSE_SESSIONS_S) -> bool:
        """Close the artifact sessions kept while the app ran; True when that finished in time."""

        def close() -> None:
            with contextlib.suppress(Exception):
                self.client.keep_artifact_sessions = False

        closer = threading.Thread(target=close, name="ct-tui-close-sessions", daemon=True)
        closer.start()
        closer.join(timeout_s)
        return not closer.is_alive()

    def on_unmount(self) -> None:
        self.close_sessions()
        if self._stage_root is not None:
            shutil.rmtree(self._stage_root, ignore_errors=True)
