"""The data plane as its request handlers see it (`router_replay`, `sampling_plane`).

`TrainingDataPlane` (ct_local.dataplane.training_plane) calls those modules' handlers with itself;
they call back only the members declared here. Declaring them in this lower module keeps the
handlers from importing the plane that imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ct_local.dataplane.boards import SamplingBoards
    from ct_local.storage.store import JobRow


class PairingBook(Protocol):
    """Where router-replay pairs bootstrapped on this server are kept (`router_replay.Pairings`)."""

    def add(self, pairing: Any) -> None: ...


class HandlerPlane(Protocol):
    """The members of the training data plane its handlers call."""

    @property
    def boards(self) -> SamplingBoards: ...

    @property
    def pairings(self) -> PairingBook: ...

    def require_running(self, job: JobRow) -> None: ...

    def route_sub_job(
        self, job: JobRow, sub_job_id: Any, sub_job_type: Any, *, default_type: str | None
    ) -> dict[str, Any]: ...

    def queue_request(
        self,
        job: JobRow,
        sub_job: dict[str, Any],
        kind: str,
        *,
        params: dict[str, Any] | None = None,
        frame: bytes | None = None,
    ) -> str: ...

    def enqueue(
        self,
        job: JobRow,
        sub_job: dict[str, Any],
        kind: str,
        *,
        params: dict[str, Any] | None = None,
        frame: bytes | None = None,
    ) -> Response: ...

    async def read_body(self, request: Request) -> bytes: ...

    async def schedule_frame(
        self, job: JobRow, sub_job: dict[str, Any], kind: str, frame: bytes, operation: str
    ) -> Response: ...
