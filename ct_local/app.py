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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ct_core.http.pool import Road
from ct_core.http.routes import route_of
from ct_local.control.lifecycle import Lifecycle
from ct_local.dataplane.seam import DataPlane
from ct_local.http import admin, artifacts, control_plane, errors, inference, routing
from ct_local.http.context import caller_identity, owned_job, request_location, server_state
from ct_local.http.faults import REQUEST_ID_HEADER, FaultMiddleware, FaultSet
from ct_local.http.limits import BodyLimitMiddleware
from ct_local.settings import ServerSettings
from ct_local.state import ServerState
from ct_local.storage.store import Store

log = logging.getLogger("ct_local.app")

#: The data-plane operations, and the action each hands to ``state.data_plane``.
DATA_PLANE_OPERATIONS: Mapping[str, str] = MappingProxyType(
    {
        "forwardBackward": "forward-backward",
        "step": "step",
        "save": "save",
        "load": "load",
        "generate": "generate",
        "generateStream": "generate-stream",
        "submitOperation": "operation",
        "getRequestStatus": "request-status",
    }
)


def _data_plane_route(action: str) -> Callable[[Request], Awaitable[Response]]:
    """A handler that checks the caller and the job, then hands the request to the data plane."""

    async def handler(request: Request) -> Response:
        identity = caller_identity(request)
        job = owned_job(request, identity, request_location(request))
        return await server_state(request).data_plane.handle(request, job, action)

    handler.__name__ = "data_plane_" + action.replace("-", "_")
    return handler


def _contract_routes() -> list[Route]:
    """The server's handler of each operation of the spec, bound by operationId.

    Starlette takes the first route that matches, so a path with a fixed segment where another has
    a parameter comes first (``capacity`` before ``{job_id}``).
    """
    cp = control_plane
    bind = routing.operation_route
    any_method = inference.ROUTE_METHODS
    return [
        bind("listModels", cp.list_models),
        bind("executeStatement", cp.execute_statement),
        bind("getStatementStatus", cp.get_statement_status),
        bind("listAccountJobs", cp.list_account_jobs),
        bind("createJob", cp.create_job),
        bind("listJobs", cp.list_jobs),
        bind("getCapacity", cp.get_capacity),
        bind("createChatCompletion", inference.chat_completions, methods=any_method),
        bind("listDeploymentModels", inference.list_models, methods=any_method),
        bind("getDeploymentModel", inference.retrieve_model, methods=any_method),
        bind("cancelJob", cp.cancel_job),
        bind("getExperimentRun", cp.experiment_run),
        bind("listCheckpoints", cp.list_checkpoints),
        bind("exportCheckpoint", cp.export_checkpoint),
        bind("deleteCheckpoint", cp.delete_checkpoint),
        *(bind(operation, _data_plane_route(action)) for operation, action in DATA_PLANE_OPERATIONS.items()),
        bind("getJob", cp.get_job),
        bind("listLocalArtifacts", artifacts.list_artifacts),
        bind("getLocalArtifact", artifacts.get_artifact, converters={"artifact_path": "path"}),
    ]


def _non_contract_routes() -> list[Route]:
    """The routes outside the REST contract; each is named in ct_local.http.routing.NON_CONTRACT."""
    cp = control_plane
    extra = routing.extra_route
    _, jobs = route_of("listJobs")
    _, inference_models = route_of("listDeploymentModels")
    inference_root = inference_models.removesuffix("/models")
    return [
        extra("healthz", "/healthz", cp.healthz, ["GET"]),
        extra("createJob/", jobs + "/", cp.create_job, ["POST"]),
        extra("listJobs/", jobs + "/", cp.list_jobs, ["GET"]),
        extra(
            "inferenceUnknownPath",
            inference_root + "/{rest:path}",
            inference.unknown_route,
            inference.ROUTE_METHODS,
        ),
        extra(
            "checkpoint_file", "/_ct/files/{job_id}/{checkpoint_id}/{rel:path}", cp.checkpoint_file, ["GET"]
        ),
        extra("adminFaults", "/_ct/faults", admin.admin_faults, ["GET", "POST", "DELETE"]),
        extra("adminJobStatus", "/_ct/jobs/{job_id}/status", admin.admin_job_status, ["POST"]),
        extra("adminAddCheckpoint", "/_ct/jobs/{job_id}/checkpoints", admin.admin_add_checkpoint, ["POST"]),
        extra("adminExecutions", "/_ct/jobs/{job_id}/executions", admin.admin_executions, ["GET"]),
        extra(
            "adminRotatePageTokenKey",
            "/_ct/page-token-key:rotate",
            admin.admin_rotate_page_token_key,
            ["POST"],
        ),
    ]


def all_routes(services: Sequence[Any] = ()) -> list[BaseRoute]:
    """Every route of an app: the services' first (a path such as ``{prefix}/runs`` is theirs, not
    a job id), then the contract's, then the rest (the inference catch-all after the inference
    operations it must not shadow)."""
    return [
        *(route for service in services for route in service.routes()),
        *_contract_routes(),
        *_non_contract_routes(),
    ]


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


def start_services(state: ServerState, base_url: str, road: Road | None = None) -> None:
    """Start every plugin service once the server listens at ``base_url``; ``road``: the way in
    without a socket (ct_local.http.inprocess), for the services that take it."""
    for service in state.services:
        try:
            # Optional: a service whose clients call this server waits on its requests in memory,
            # and may send them without a socket.
            use_waiter = getattr(service, "use_request_waiter", None)
            if use_waiter is not None:
                use_waiter(state.request_signals.wait)
            use_road = getattr(service, "use_in_process_road", None)
            if use_road is not None and road is not None:
                use_road(road)
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

    app = Starlette(
        routes=all_routes(state.services),
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
