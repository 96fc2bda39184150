"""The HTTP surface of the local server: Starlette routes for the control plane of the contract.

:func:`create_app` wires settings, the SQLite store, the lifecycle loop, fault injection and the
data-plane seam into one ASGI app. Control-plane routes live here (§5); data-plane routes resolve
their job and hand over to ``state.data_plane`` (ct_local.dataplane.seam). Every response carries a
fresh ``x-snowflake-request-id`` (§2.4); contract errors are rendered by the handlers at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import json
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ct_local.control import capacity as cap
from ct_local.control import jobs, listing
from ct_local.control.lifecycle import Lifecycle
from ct_local.dataplane.seam import DataPlane
from ct_local.http import artifacts, errors, inference, statements
from ct_local.http.faults import REQUEST_ID_HEADER, FaultMiddleware, FaultSet
from ct_local.settings import ANONYMOUS_ROLE, ANONYMOUS_USER, KNOWN_HARDWARE, Identity, ServerSettings
from ct_local.storage.store import CheckpointRow, JobRow, Store, rfc3339

PREFIX = "/api/v2/databases/{database}/schemas/{schema}/{endpoint}"
# §5.9: export links are short-lived.
EXPORT_URL_TTL_S = 3600
ANONYMOUS = Identity(role=ANONYMOUS_ROLE, user=ANONYMOUS_USER)


@dataclass
class ServerState:
    settings: ServerSettings
    store: Store
    lifecycle: Lifecycle
    faults: FaultSet
    data_plane: DataPlane = field(init=False)
    started_at: float = field(default_factory=time.time)


def _state(request: Request) -> ServerState:
    return request.app.state.ct


def _identity(request: Request) -> Identity:
    """Who signs the request; 401 when the server has tokens and the request carries none of them."""
    settings = _state(request).settings
    if not settings.auth_required:
        return ANONYMOUS
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    token = ""
    if scheme.lower() == "bearer":
        token = value.strip()
    elif scheme == "Snowflake" and value.strip().startswith("Token="):
        token = value.strip().removeprefix("Token=").strip('"')
    identity = settings.identity_for_token(token) if token else None
    if identity is None:
        raise errors.unauthorized()
    return identity


def _owner_filter(request: Request, identity: Identity) -> str | None:
    # Without tokens everyone is the same anonymous caller and sees every job.
    return identity.role if _state(request).settings.auth_required else None


@dataclass
class Location:
    database: str
    schema: str
    endpoint: str


def _location(request: Request) -> Location:
    params = request.path_params
    loc = Location(
        listing.sql_identifier(params["database"]),
        listing.sql_identifier(params["schema"]),
        params["endpoint"],
    )
    hidden = {h.upper() for h in _state(request).settings.hidden_schemas}
    if f"{loc.database}.{loc.schema}".upper() in hidden:
        raise errors.schema_not_found(loc.database, loc.schema)
    return loc


def _owned_job(request: Request, identity: Identity, loc: Location) -> JobRow:
    job_id = request.path_params["job_id"]
    job = _state(request).store.get_job(job_id)
    owner = _owner_filter(request, identity)
    if (
        job is None
        or (job.database_name, job.schema_name, job.endpoint) != (loc.database, loc.schema, loc.endpoint)
        or (owner is not None and job.owner_role != owner)
    ):
        raise errors.job_not_found(job_id, loc.schema)
    return job


async def _json_body(request: Request, *, required: bool = True) -> Any:
    raw = await request.body()
    if not raw.strip():
        if required:
            raise errors.RequestValidationError([([], "a JSON body is required")])
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise errors.RequestValidationError([([], f"the body is not valid JSON: {exc}")]) from exc


# --- control plane (§5) -----------------------------------------------------------------------


async def create_job(request: Request) -> Response:
    identity = _identity(request)
    loc = _location(request)
    state = _state(request)
    if identity.role in state.settings.roles_without_create:
        raise errors.no_create_privilege(identity.role, "LOCAL")
    body = await _json_body(request)
    job = jobs.build_job(
        body,
        settings=state.settings,
        identity=identity,
        database=loc.database,
        schema=loc.schema,
        endpoint=loc.endpoint,
        now=time.time(),
    )
    _check_sources(request, identity, job)
    state.store.insert_job(job)
    return JSONResponse({"job_id": job.job_id})


def _check_sources(request: Request, identity: Identity, job: JobRow) -> None:
    """§6.5: a create-time source checkpoint must exist, be visible to the caller and fit its sub-job."""
    from ct_local.storage.checkpoint_paths import resolve_checkpoint

    store = _state(request).store
    owner = _owner_filter(request, identity)
    for sub in job.sub_jobs:
        info = sub.get("source_checkpoint_info")
        if not isinstance(info, dict) or not info.get("checkpoint_id"):
            continue
        source = store.get_job(str(info.get("source_job_id")))
        if source is None or (owner is not None and source.owner_role != owner):
            raise errors.ServiceError(
                404,
                "Source job was not found or is not authorized for the active roles",
                errors.CODE_JOB_NOT_FOUND,
            )
        problem = inference.source_model_problem(sub, source)
        if problem is not None:
            raise errors.invalid_request(problem)
        row = resolve_checkpoint(store, source.job_id, str(info["checkpoint_id"]))
        if row is None or not row.path:
            raise errors.invalid_request(
                f"source checkpoint {info['checkpoint_id']} not found in job {source.job_id}"
            )
        if sub.get("job_type") == "sampling" and row.checkpoint_type != "weights-only":
            raise errors.invalid_request(
                "sampling sub-jobs start from weights-only checkpoints; "
                f"{row.checkpoint_id} is {row.checkpoint_type}"
            )


async def list_jobs(request: Request) -> Response:
    identity = _identity(request)
    loc = _location(request)
    rows = _state(request).store.jobs_in(
        loc.database, loc.schema, loc.endpoint, _owner_filter(request, identity)
    )
    wanted = request.query_params.get("status")
    return JSONResponse(
        {"jobs": [j.record() for j in rows if listing.schema_status_matches(j.status, wanted)]}
    )


async def get_job(request: Request) -> Response:
    identity = _identity(request)
    return JSONResponse(_owned_job(request, identity, _location(request)).record())


async def cancel_job(request: Request) -> Response:
    identity = _identity(request)
    job = _owned_job(request, identity, _location(request))
    _state(request).lifecycle.cancel(job)
    return JSONResponse({})


async def experiment_run(request: Request) -> Response:
    identity = _identity(request)
    job = _owned_job(request, identity, _location(request))
    return JSONResponse(
        {"experiment_name": job.experiment_name, "experiment_run_name": job.experiment_run_name}
    )


async def list_checkpoints(request: Request) -> Response:
    identity = _identity(request)
    job = _owned_job(request, identity, _location(request))
    rows = _state(request).store.checkpoints(job.job_id)
    return JSONResponse({"checkpoints": [c.record() for c in rows]})


def _checkpoint(request: Request, job: JobRow) -> CheckpointRow:
    checkpoint_id = request.path_params["checkpoint_id"]
    row = _state(request).store.get_checkpoint(job.job_id, checkpoint_id)
    if row is None:
        # Same code as a missing job, so clients fail at once instead of retrying a plain 404.
        raise errors.ServiceError(
            404,
            f"Checkpoint {checkpoint_id} not found in training job {job.job_id}",
            errors.CODE_JOB_NOT_FOUND,
        )
    return row


def _export_signature(state: ServerState, job_id: str, checkpoint_id: str, rel: str, expires: int) -> str:
    message = f"{job_id}\n{checkpoint_id}\n{rel}\n{expires}".encode()
    return hmac.new(state.store.secret("export"), message, hashlib.sha256).hexdigest()


async def export_checkpoint(request: Request) -> Response:
    identity = _identity(request)
    job = _owned_job(request, identity, _location(request))
    cp = _checkpoint(request, job)
    state = _state(request)
    expires = int(time.time()) + EXPORT_URL_TTL_S
    files: list[dict[str, Any]] = []
    folder = Path(cp.path) if cp.path else None
    if folder is not None and folder.is_dir():
        base = str(request.base_url).rstrip("/")
        for item in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = item.relative_to(folder).as_posix()
            sig = _export_signature(state, job.job_id, cp.checkpoint_id, rel, expires)
            url = request.url_for(
                "checkpoint_file", job_id=job.job_id, checkpoint_id=cp.checkpoint_id, rel=rel
            )
            files.append(
                {
                    "filename": rel,
                    "url": f"{base}{url.path}?expires={expires}&sig={sig}",
                    "size_bytes": item.stat().st_size,
                }
            )
    return JSONResponse({"checkpoint_id": cp.checkpoint_id, "files": files, "expires_at": rfc3339(expires)})


async def checkpoint_file(request: Request) -> Response:
    """Serve one exported file; the signed query stands in for a presigned URL (no auth header)."""
    state = _state(request)
    params = request.path_params
    try:
        expires = int(request.query_params.get("expires", "0"))
    except ValueError:
        expires = 0
    sig = request.query_params.get("sig", "")
    expected = _export_signature(state, params["job_id"], params["checkpoint_id"], params["rel"], expires)
    if expires < time.time() or not hmac.compare_digest(sig, expected):
        raise errors.ServiceError(403, "The link has expired or is not valid", 403)
    row = state.store.get_checkpoint(params["job_id"], params["checkpoint_id"])
    folder = Path(row.path).resolve() if row and row.path else None
    target = (folder / params["rel"]).resolve() if folder else None
    if folder is None or target is None or not target.is_file() or not target.is_relative_to(folder):
        raise errors.ServiceError(404, "The file no longer exists", 404)
    return FileResponse(target)


async def delete_checkpoint(request: Request) -> Response:
    identity = _identity(request)
    job = _owned_job(request, identity, _location(request))
    cp = _checkpoint(request, job)
    state = _state(request)
    state.store.delete_checkpoint(job.job_id, cp.checkpoint_id)
    if cp.path:
        folder = Path(cp.path)
        # Only remove folders this server owns.
        if folder.is_dir() and folder.resolve().is_relative_to(state.settings.state_dir.resolve()):
            shutil.rmtree(folder, ignore_errors=True)
    return Response(status_code=204)


async def get_capacity(request: Request) -> Response:
    identity = _identity(request)
    loc = _location(request)
    state = _state(request)
    hardware = request.query_params.get("hardware") or "H200"
    if hardware not in KNOWN_HARDWARE:
        raise errors.invalid_request(f"hardware must be one of {', '.join(KNOWN_HARDWARE)}, got {hardware!r}")
    capacity = state.settings.capacity.get(hardware)
    if capacity is None:
        supported = [h for h in KNOWN_HARDWARE if h in state.settings.capacity]
        raise errors.unsupported_hardware(hardware, supported)
    raw_breakdown = request.query_params.get("breakdown")
    dimensions = cap.parse_dimensions(raw_breakdown) if raw_breakdown is not None else None
    on_hardware = [
        j
        for j in state.store.jobs_with_status((*cap.HOLDING_STATUSES, *cap.PENDING_STATUSES))
        if j.hardware == hardware and j.endpoint == loc.endpoint
    ]
    answer = cap.capacity_answer(
        on_hardware,
        capacity,
        dimensions=dimensions,
        caller_role=_owner_filter(request, identity),
        caller_user=identity.user,
        settings=state.settings,
    )
    return JSONResponse(answer)


# --- account-level routes ---------------------------------------------------------------------


async def list_account_jobs(request: Request) -> Response:
    identity = _identity(request)
    state = _state(request)
    if not state.settings.account_list_enabled:
        raise listing.not_enabled()
    query = listing.AccountQuery(request.query_params)
    key = state.store.secret("page-token")
    before = listing.open_token(key, query.page_token, query.fingerprint()) if query.page_token else None
    rows = state.store.account_jobs(request.path_params["endpoint"], _owner_filter(request, identity), before)
    return JSONResponse(listing.account_page(query, rows, key))


async def list_models(request: Request) -> Response:
    _identity(request)
    return JSONResponse({"models": [{"name": name} for name in _state(request).settings.models]})


async def execute_statement(request: Request) -> Response:
    identity = _identity(request)
    body = await _json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("statement"), str):
        raise errors.RequestValidationError([(["statement"], "statement must be a string")])
    state = _state(request)
    locations = {
        (j.database_name, j.schema_name)
        for j in state.store.jobs_with_status(listing.ACTIVE + listing.TERMINAL)
    }
    try:
        answer = statements.execute(
            body["statement"],
            identity,
            database=body.get("database"),
            schema=body.get("schema"),
            locations=locations,
        )
    except statements.StatementError as exc:
        return JSONResponse(statements.error_body(str(exc)), status_code=422)
    return JSONResponse(answer)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


# --- data plane seam --------------------------------------------------------------------------


def _data_plane_route(action: str) -> Callable[[Request], Awaitable[Response]]:
    async def handler(request: Request) -> Response:
        identity = _identity(request)
        job = _owned_job(request, identity, _location(request))
        return await _state(request).data_plane.handle(request, job, action)

    handler.__name__ = "data_plane_" + action.replace("-", "_")
    return handler


# --- admin routes (loopback only) -------------------------------------------------------------


def _require_loopback(request: Request) -> ServerState:
    state = _state(request)
    host = request.client.host if request.client else ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not state.settings.admin_enabled or not loopback:
        raise errors.ServiceError(404, "Not found", 404)
    return state


async def admin_faults(request: Request) -> Response:
    state = _require_loopback(request)
    if request.method == "DELETE":
        state.faults.clear()
    elif request.method == "POST":
        body = await _json_body(request)
        specs = body.get("rules", body) if isinstance(body, dict) else body
        if isinstance(specs, dict):
            specs = [specs]
        if not isinstance(specs, list):
            raise errors.RequestValidationError([(["rules"], "expected a rule object or a list of rules")])
        try:
            state.faults.add(specs)
        except (ValueError, TypeError) as exc:
            raise errors.RequestValidationError([(["rules"], str(exc))]) from exc
    return JSONResponse({"rules": state.faults.describe()})


async def admin_job_status(request: Request) -> Response:
    state = _require_loopback(request)
    job = state.store.get_job(request.path_params["job_id"])
    if job is None:
        raise errors.job_not_found(request.path_params["job_id"], "any schema")
    body = await _json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("status"), str):
        raise errors.RequestValidationError([(["status"], "status must be a string")])
    state.lifecycle.force(
        job, body["status"], str(body.get("reason", "")), str(body.get("reason_details", ""))
    )
    fresh = state.store.get_job(job.job_id)
    assert fresh is not None
    return JSONResponse(fresh.record())


async def admin_add_checkpoint(request: Request) -> Response:
    state = _require_loopback(request)
    job = state.store.get_job(request.path_params["job_id"])
    if job is None:
        raise errors.job_not_found(request.path_params["job_id"], "any schema")
    body = await _json_body(request, required=False) or {}
    checkpoint_id = str(body.get("checkpoint_id") or f"cp_{uuid.uuid4()}")
    folder = state.settings.state_dir / "checkpoints" / job.job_id / checkpoint_id
    files = body.get("files") or {}
    for name, content in dict(files).items():
        target = (folder / name).resolve()
        if not target.is_relative_to(folder.resolve()):
            raise errors.invalid_request(f"file name {name!r} escapes the checkpoint folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(str(content), encoding="utf-8")
    row = CheckpointRow(
        job_id=job.job_id,
        checkpoint_id=checkpoint_id,
        global_steps=int(body.get("global_steps", 0)),
        avg_loss=body.get("avg_loss"),
        created_at=time.time(),
        checkpoint_type=str(body.get("checkpoint_type", "resumable")),
        path=str(folder) if files else None,
    )
    state.store.add_checkpoint(row)
    return JSONResponse(row.record())


async def admin_executions(request: Request) -> Response:
    """How many requests of each kind a job's workers started (at-most-once checks in tests)."""
    from ct_local.storage.requests import DataPlaneStore

    state = _require_loopback(request)
    counts = DataPlaneStore(state.store).execution_counts(request.path_params["job_id"])
    return JSONResponse({"executions": counts})


async def admin_rotate_page_token_key(request: Request) -> Response:
    state = _require_loopback(request)
    state.store.rotate_secret("page-token")
    return JSONResponse({})


# --- assembly ---------------------------------------------------------------------------------


def _routes() -> list[Route]:
    p = PREFIX
    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/api/v2/cortex-training/models", list_models, methods=["GET"]),
        Route("/api/v2/statements", execute_statement, methods=["POST"]),
        Route("/api/v2/{endpoint}", list_account_jobs, methods=["GET"]),
        Route(p, create_job, methods=["POST"]),
        Route(p + "/", create_job, methods=["POST"]),
        Route(p, list_jobs, methods=["GET"]),
        Route(p + "/", list_jobs, methods=["GET"]),
        Route(p + "/capacity", get_capacity, methods=["GET"]),
        Route(
            p + "/inference/v1/chat/completions", inference.chat_completions, methods=inference.ROUTE_METHODS
        ),
        Route(p + "/inference/v1/models", inference.list_models, methods=inference.ROUTE_METHODS),
        Route(p + "/{job_id}:cancel", cancel_job, methods=["POST"]),
        Route(p + "/{job_id}/experiment-run", experiment_run, methods=["GET"]),
        Route(p + "/{job_id}/checkpoints", list_checkpoints, methods=["GET"]),
        Route(p + "/{job_id}/checkpoints/{checkpoint_id}:export", export_checkpoint, methods=["POST"]),
        Route(p + "/{job_id}/checkpoints/{checkpoint_id}", delete_checkpoint, methods=["DELETE"]),
        Route(p + "/{job_id}/requests/{request_id}", _data_plane_route("request-status"), methods=["GET"]),
    ]
    for action in ("forward-backward", "step", "save", "load", "generate", "generate-stream", "operation"):
        routes.append(Route(f"{p}/{{job_id}}/{action}", _data_plane_route(action), methods=["POST"]))
    routes += [
        Route(p + "/{job_id}", get_job, methods=["GET"]),
        Route(
            "/_ct/files/{job_id}/{checkpoint_id}/{rel:path}",
            checkpoint_file,
            methods=["GET"],
            name="checkpoint_file",
        ),
        Route("/_ct/faults", admin_faults, methods=["GET", "POST", "DELETE"]),
        Route("/_ct/jobs/{job_id}/status", admin_job_status, methods=["POST"]),
        Route("/_ct/jobs/{job_id}/checkpoints", admin_add_checkpoint, methods=["POST"]),
        Route("/_ct/jobs/{job_id}/executions", admin_executions, methods=["GET"]),
        Route("/_ct/page-token-key:rotate", admin_rotate_page_token_key, methods=["POST"]),
    ]
    routes.extend(artifacts.routes())
    return routes


async def _service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, errors.ServiceError | errors.RequestValidationError)
    headers = {"www-authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


async def _not_found(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 404)
    return JSONResponse(
        {"message": f"No route for {request.method} {request.url.path}", "code": status}, status
    )


class RequestIdMiddleware:
    """Adds a fresh ``x-snowflake-request-id`` to every response that lacks one (§2.4)."""

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


def create_app(
    settings: ServerSettings, *, data_plane_factory: Callable[[ServerState], DataPlane] | None = None
) -> tuple[ASGIApp, ServerState]:
    """Build the ASGI app and its state; the data plane defaults to the 501-answering seam."""
    store = Store(settings.state_dir)
    faults = FaultSet()
    faults.add(list(settings.faults))
    state = ServerState(settings=settings, store=store, lifecycle=Lifecycle(store, settings), faults=faults)
    state.data_plane = (data_plane_factory or DataPlane)(state)
    state.lifecycle.add_listener(state.data_plane.on_transition)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        ticker = asyncio.create_task(state.lifecycle.run())
        await state.data_plane.start()
        uploader = artifacts.ArtifactUploader(state, settings.artifact_upload_interval_s)
        uploader.start()
        try:
            yield
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            await state.data_plane.stop()
            await asyncio.to_thread(uploader.stop)
            store.close()

    app = Starlette(
        routes=_routes(),
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
    return FaultMiddleware(RequestIdMiddleware(app), faults), state
