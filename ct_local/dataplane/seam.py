"""The interface between the control plane and the data plane of the local server.

Routes for forward-backward, step, save, load, generate, generate-stream, operation and request
polling resolve the job (existence, ownership; see ct_local.app) and then hand the request to the
app's :class:`DataPlane`. This base answers 501 with the service's error body, which is what
``create_app`` uses when it is given no data plane. The worker-backed
:class:`~ct_local.dataplane.training_plane.TrainingDataPlane` subclasses it, overrides
:meth:`DataPlane.handle`, and listens to lifecycle transitions (:meth:`DataPlane.on_transition`)
to start and stop a worker per running sub-job.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ct_local.http.errors import not_implemented
from ct_local.storage.store import JobRow

# Every data-plane action a route can hand over; "request-status" is GET /{job_id}/requests/{id}.
DATA_PLANE_ACTIONS = (
    "forward-backward",
    "step",
    "save",
    "load",
    "generate",
    "generate-stream",
    "operation",
    "request-status",
)


class DataPlane:
    """Data-plane handler; this base answers 501 for everything."""

    def __init__(self, state: object) -> None:
        # The app's ServerState (ct_local.state), which holds this plane: not imported here, so the
        # two modules do not import each other; a subclass names the type it reads.
        self.state = state

    async def start(self) -> None:
        """Called once the server accepts requests (resume work saved before a restart)."""

    async def stop(self) -> None:
        """Called on shutdown; finish or abandon in-flight work."""

    def on_transition(self, job: JobRow, previous: str) -> None:
        """A job changed status (for example initializing -> running, or running -> cancelled)."""

    def health(self) -> dict[str, Any]:
        """What the plane holds, for /healthz (this base holds nothing)."""
        return {}

    async def handle(self, request: Request, job: JobRow, action: str) -> Response:
        raise not_implemented(action)
