"""Assembly of the local server's ASGI app: the route table, middleware, error handlers, lifespan.

:func:`create_app` wires settings, the SQLite store, the lifecycle loop, fault injection and a data
plane into one Starlette app and its :class:`~ct_local.state.ServerState`. The handlers live in
ct_local.http: control-plane routes in ``control_plane``, the loopback-only ``/_ct/`` routes in
``admin``, experiment-run artifacts in ``artifacts`` and OpenAI-compatible inference in
``inference``. Data-plane routes resolve their job here and hand over to ``state.data_plane``
(ct_local.dataplane.seam). Every response carries a fresh ``x-snowflake-request-id``; service
errors are rendered as the service's JSON bodies by the handlers at the end of this module. Every
request body is read under the limits of ct_local.http.limits (time, size, JSON nesting) first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ct_local.control.lifecycle import Lifecycle
from ct_local.dataplane.seam import DATA_PLANE_ACTIONS, DataPlane
from ct_local.http import admin, artifacts, control_plane, errors, inference
from ct_local.http.context import caller_identity, owned_job, request_location, server_state
from ct_local.http.faults import REQUEST_ID_HEADER, FaultMiddleware, FaultSet
from ct_local.http.limits import BodyLimitMiddleware
from ct_local.settings import ServerSettings
from ct_local.state import ServerState
from ct_local.storage.store import Store

log = logging.getLogger("ct_local.app")

#: The REST prefix of the per-schema routes.
PREFIX = "/api/v2/databases/{database}/schemas/{schema}/{endpoint}"
#: Data-plane actions posted to ``{PREFIX}/{job_id}/<action>`` (request polls are a GET of their own).
DATA_PLANE_POST_ACTIONS = tuple(a for a in DATA_PLANE_ACTIONS if a != "request-status")


def _data_plane_route(action: str) -> Callable[[Request], Awaitable[Response]]:
    """A handler that checks the caller and the job, then hands the request to the data plane."""

    async def handler(request: Request) -> Response:
        identity = caller_identity(request)
        job = owned_job(request, identity, request_location(request))
        return await server_state(request).data_plane.handle(request, job, action)

    handler.__name__ = "data_plane_" + action.replace("-", "_")
    return handler


def _routes() -> list[Route]:
    p = PREFIX
    cp = control_plane
    routes = [
        Route("/healthz", cp.healthz, methods=["GET"]),
        Route("/api/v2/cortex-training/models", cp.list_models, methods=["GET"]),
        Route("/api/v2/statements", cp.execute_statement, methods=["POST"]),
        Route("/api/v2/{endpoint}", cp.list_account_jobs, methods=["GET"]),
        Route(p, cp.create_job, methods=["POST"]),
        Route(p + "/", cp.create_job, methods=["POST"]),
        Route(p, cp.list_jobs, methods=["GET"]),
        Route(p + "/", cp.list_jobs, methods=["GET"]),
        Route(p + "/capacity", cp.get_capacity, methods=["GET"]),
        Route(
            p + "/inference/v1/chat/completions", inference.chat_completions, methods=inference.ROUTE_METHODS
        ),
        Route(p + "/inference/v1/models", inference.list_models, methods=inference.ROUTE_METHODS),
        Route(p + "/inference/v1/models/{model}", inference.retrieve_model, methods=inference.ROUTE_METHODS),
        # Any other path under /inference/v1 answers as OpenAI does, not with the service's 404.
        Route(p + "/inference/v1/{rest:path}", inference.unknown_route, methods=inference.ROUTE_METHODS),
        Route(p + "/{job_id}:cancel", cp.cancel_job, methods=["POST"]),
        Route(p + "/{job_id}/experiment-run", cp.experiment_run, methods=["GET"]),
        Route(p + "/{job_id}/checkpoints", cp.list_checkpoints, methods=["GET"]),
        Route(p + "/{job_id}/checkpoints/{checkpoint_id}:export", cp.export_checkpoint, methods=["POST"]),
        Route(p + "/{job_id}/checkpoints/{checkpoint_id}", cp.delete_checkpoint, methods=["DELETE"]),
        Route(p + "/{job_id}/requests/{request_id}", _data_plane_route("request-status"), methods=["GET"]),
    ]
    for action in DATA_PLANE_POST_ACTIONS:
        routes.append(Route(f"{p}/{{job_id}}/{action}", _data_plane_route(action), methods=["POST"]))
    routes += [
        Route(p + "/{job_id}", cp.get_job, methods=["GET"]),
        Route(
            "/_ct/files/{job_id}/{checkpoint_id}/{rel:path}",
            cp.checkpoint_file,
            methods=["GET"],
            name="checkpoint_file",
        ),
        Route("/_ct/faults", admin.admin_faults, methods=["GET", "POST", "DELETE"]),
        Route("/_ct/jobs/{job_id}/status", admin.admin_job_status, methods=["POST"]),
        Route("/_ct/jobs/{job_id}/checkpoints", admin.admin_add_checkpoint, methods=["POST"]),
        Route("/_ct/jobs/{job_id}/executions", admin.admin_executions, methods=["GET"]),
        Route("/_ct/page-token-key:rotate", admin.admin_rotate_page_token_key, methods=["POST"]),
    ]
    routes.extend(artifacts.routes())
    return routes


async def _service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, errors.ServiceError | errors.RequestValidationError)
    headers = {"www-authenticate": "Bearer"} if exc.status == 401 else None
    body = exc.body()
    try:
        return JSONResponse(body, status_code=exc.status, headers=headers)
    except UnicodeEncodeError:
        # A message quoting caller text with a lone surrogate (valid in JSON, not in UTF-8): the
        # ASCII form escapes it instead of failing the answer.
        text = json.dumps(body, ensure_ascii=True, default=str)
        return Response(text, status_code=exc.status, headers=headers, media_type="application/json")


async def _not_found(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 404)
    return JSONResponse(
        {"message": f"No route for {request.method} {request.url.path}", "code": status}, status
    )


class RequestIdMiddleware:
    """Adds a fresh ``x-snowflake-request-id`` to every response that lacks one, as the service does."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_request_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(k.lower() == REQUEST_ID_HEADER.encode() for k, _ in headers):
                    headers.append((REQUEST_ID_HEADER.encode(), str(uuid.uuid4()).encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_request_id)


def plugin_services(settings: ServerSettings, pm: Any = None) -> list[Any]:
    """The services plugins offer through the ``ct_local_services`` hook (CT_PLUGINS applies).

    ``pm`` defaults to the process-wide plugin manager. A plugin whose hook fails is logged and
    left out; the server serves without it.
    """
    from ct_core.plugins import call_each, get_plugin_manager

    results, failures = call_each(
        pm or get_plugin_manager(), "ct_local_services", state_dir=str(settings.state_dir), settings=settings
    )
    for failure in failures:
        log.error("a local-server service was left out: %s", failure)
    return [service for service in results if service is not None]


def start_services(state: ServerState, base_url: str) -> None:
    """Start every plugin service once the server listens at ``base_url``."""
    for service in state.services:
        try:
            service.start(base_url)
        except Exception:
            log.exception("a local-server service failed to start")


def create_app(
    settings: ServerSettings,
    *,
    data_plane_factory: Callable[[ServerState], DataPlane] | None = None,
    services: list[Any] | None = None,
) -> tuple[ASGIApp, ServerState]:
    """Build the ASGI app and its state; the data plane defaults to the 501-answering base DataPlane.

    ``services`` are objects of the ``ct_local_services`` hook (ct_core.hookspecs): their routes
    are matched before the server's own; :func:`start_services` starts them once the server
    listens, and the app stops them at shutdown, before the store closes.
    """
    store = Store(settings.state_dir)
    faults = FaultSet()
    faults.add(list(settings.faults))
    state = ServerState(settings=settings, store=store, lifecycle=Lifecycle(store, settings), faults=faults)
    state.data_plane = (data_plane_factory or DataPlane)(state)
    state.lifecycle.add_listener(state.data_plane.on_transition)
    state.services = list(services or [])

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        ticker = asyncio.create_task(state.lifecycle.run())
        await state.data_plane.start()
        uploader = artifacts.ArtifactUploader(state, settings.artifact_upload_interval_s)
        uploader.start()
        try:
            yield
        finally:
            for service in state.services:
                try:
                    await asyncio.to_thread(service.stop)
                except Exception:
                    log.exception("a local-server service failed to stop")
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            await state.data_plane.stop()
            await asyncio.to_thread(uploader.stop)
            store.close()

    service_routes = [route for service in state.services for route in service.routes()]
    app = Starlette(
        routes=[*service_routes, *_routes()],
        lifespan=lifespan,
        exception_handlers={
            errors.ServiceError: _service_error,
            errors.RequestValidationError: _service_error,
            404: _not_found,
            405: _not_found,
        },
    )
    app.router.redirect_slashes = False
    app.state.ct = state
    # Faults act first (they may answer before any body is read); every answer gets a request id;
    # then each body is read under the time, size and nesting limits before a route sees it.
    return FaultMiddleware(RequestIdMiddleware(BodyLimitMiddleware(app, settings)), faults), state
