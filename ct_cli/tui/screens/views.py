"""What the screens read of the app and the tabs of their job screen, as Protocols.

`CtTui` (ct_cli.tui.app) imports the screens and opens them; the screens call back only the members
declared here (`TuiApp`), and the Resources and Training tabs only those of `JobView` (the
`JobScreen` they sit on). Declaring them in this lower module keeps the screens from importing the
app, and the tabs the screen, that import them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.screen import Screen


class TuiApp(Protocol):
    """The members of the terminal UI's app its screens use."""

    @property
    def client(self) -> Any: ...

    @property
    def poll_interval(self) -> float: ...

    @property
    def error_log_label(self) -> str: ...

    def open_job(self, job_id: str, *, status: Any = None, job: dict[str, Any] | None = None) -> None: ...

    def back_from(self, screen: Screen[Any]) -> None: ...

    def post(self, callback: Any, *args: Any) -> bool: ...

    def record_error(self, what: str, details: str) -> None: ...

    def stage_dir(self, job_id: str) -> Path: ...


class JobView(Protocol):
    """The members of the job screen its download tabs use."""

    @property
    def job_id(self) -> str: ...

    @property
    def job_client(self) -> Any: ...

    @property
    def sources(self) -> list[tuple[str, str]]: ...

    @property
    def tui(self) -> TuiApp: ...

    def first_source(self) -> str | None: ...

    def training_source(self) -> str | None: ...

    def scoped_sub_jobs(self) -> list[str] | None: ...

    def download_dir(self, kind: str) -> Path: ...
