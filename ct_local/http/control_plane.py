"""Control-plane route handlers of the local server: jobs, checkpoints, capacity, account routes.

Create, list, get and cancel jobs; read a job's experiment run; list, export (as signed links
with an ETag per file, served by :func:`checkpoint_file`) and delete its checkpoints; answer
capacity questions; the account-level job list, the model catalog and the small SQL statement
surface; and the health probe. ct_local.app puts them in the route table. Every handler first
reads who calls and which location the path names through ct_local.http.context, so the token and
visibility rules are the same as on the data-plane routes.
"""

from __future__ import annotations

import hashlib
import hmac
import shutil
import time
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from ct_local.control import capacity as cap
from ct_local.control import jobs, listing
from ct_local.http import errors, inference, statements
from ct_local.http.context import (
    caller_identity,
    json_body,
    owned_job,
    owner_filter,
    request_location,
    server_state,
)
from ct_local.model import registry as model_registry
from ct_local.settings import KNOWN_HARDWARE, Identity
from ct_local.state import ServerState
from ct_local.storage.checkpoint_paths import resolve_checkpoint
from ct_local.storage.store import CheckpointRow, JobRow, rfc3339

# Export links are short-lived, like the service's presigned URLs.
EXPORT_URL_TTL_S = 3600


# --- jobs -------------------------------------------------------------------------------------


async def create_job(request: Request) -> Response:
    identity = caller_identity(request)
    loc = request_location(request)
    state = server_state(request)
    if identity.role in state.settings.roles_without_create:
        raise errors.no_create_privilege(identity.role, "LOCAL")
    body = await json_body(request)
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
    state.lifecycle.wake()
    return JSONResponse({"job_id": job.job_id})


def _check_sources(request: Request, identity: Identity, job: JobRow) -> None:
    """A create-time source checkpoint must exist, be visible to the caller and fit its sub-job."""
    store = server_state(request).store
    owner = owner_filter(request, identity)
    for index, sub in enumerate(job.sub_jobs):
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
        if sub.get("job_type") == "training":
            resize = jobs.optimizer_resize_problem(sub, f"sub_job_configs[{index}]", source, row)
            if resize is not None:
                raise errors.invalid_request(resize)


async def list_jobs(request: Request) -> Response:
    identity = caller_identity(request)
    loc = request_location(request)
    rows = server_state(request).store.jobs_in(
        loc.database, loc.schema, loc.endpoint, owner_filter(request, identity)
    )
    wanted = request.query_params.get("status")
    return JSONResponse(
        {"jobs": [j.record() for j in rows if listing.schema_status_matches(j.status, wanted)]}
    )


async def get_job(request: Request) -> Response:
    identity = caller_identity(request)
    return JSONResponse(owned_job(request, identity, request_location(request)).record())


async def cancel_job(request: Request) -> Response:
    identity = caller_identity(request)
    job = owned_job(request, identity, request_location(request))
    server_state(request).lifecycle.cancel(job)
    return JSONResponse({})


async def experiment_run(request: Request) -> Response:
    identity = caller_identity(request)
    job = owned_job(request, identity, request_location(request))
    return JSONResponse(
        {"experiment_name": job.experiment_name, "experiment_run_name": job.experiment_run_name}
    )


# --- checkpoints ------------------------------------------------------------------------------


async def list_checkpoints(request: Request) -> Response:
    identity = caller_identity(request)
    job = owned_job(request, identity, request_location(request))
    rows = server_state(request).store.checkpoints(job.job_id)
    return JSONResponse({"checkpoints": [c.record() for c in rows]})


def _checkpoint(request: Request, job: JobRow) -> CheckpointRow:
    checkpoint_id = request.path_params["checkpoint_id"]
    row = server_state(request).store.get_checkpoint(job.job_id, checkpoint_id)
    if row is None:
        # Same code as a missing job, so clients fail at once instead of retrying a plain 404.
        raise errors.ServiceError(
            404,
            f"Checkpoint {checkpoint_id} not found in training job {job.job_id}",
            errors.CODE_JOB_NOT_FOUND,
        )
    return row


def file_etag(job_id: str, checkpoint_id: str, rel: str, path: Path) -> str:
    """The strong ETag of one checkpoint file: which file of which checkpoint, and which version of it.

    Export links announce it and the file route answers with it, so a client can tell two
    checkpoints' files of equal name and size apart, and resume a file only while it is unchanged.
    """
    stat = path.stat()
    identity = f"{job_id}\n{checkpoint_id}\n{rel}\n{stat.st_size}\n{stat.st_mtime_ns}\n{stat.st_ino}"
    return '"' + hashlib.sha256(identity.encode()).hexdigest()[:40] + '"'


def _export_signature(state: ServerState, job_id: str, checkpoint_id: str, rel: str, expires: int) -> str:
    message = f"{job_id}\n{checkpoint_id}\n{rel}\n{expires}".encode()
    return hmac.new(state.store.secret("export"), message, hashlib.sha256).hexdigest()


async def export_checkpoint(request: Request) -> Response:
    identity = caller_identity(request)
    job = owned_job(request, identity, request_location(request))
    cp = _checkpoint(request, job)
    state = server_state(request)
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
                    "etag": file_etag(job.job_id, cp.checkpoint_id, rel, item),
                }
            )
    return JSONResponse({"checkpoint_id": cp.checkpoint_id, "files": files, "expires_at": rfc3339(expires)})


class LargeReadFileResponse(FileResponse):
    """A file answer read and sent 1 MiB at a time (Starlette's default is 64 KiB).

    Checkpoint files run to gigabytes; at 64 KiB the server spends its CPU on per-chunk overhead
    and becomes the bottleneck of a download over loopback (bench/downloads.py).
    """

    chunk_size = 1024 * 1024


async def checkpoint_file(request: Request) -> Response:
    """Serve one exported file; the signed query stands in for a presigned URL (no auth header).

    Ranges are honoured, with ``If-Range`` checked against the file's ETag, as object stores do.
    """
    state = server_state(request)
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
    etag = file_etag(params["job_id"], params["checkpoint_id"], params["rel"], target)
    return LargeReadFileResponse(target, headers={"etag": etag})


async def delete_checkpoint(request: Request) -> Response:
    identity = caller_identity(request)
    job = owned_job(request, identity, request_location(request))
    cp = _checkpoint(request, job)
    state = server_state(request)
    state.store.delete_checkpoint(job.job_id, cp.checkpoint_id)
    if cp.path:
        folder = Path(cp.path)
        # Only remove folders this server owns.
        if folder.is_dir() and folder.resolve().is_relative_to(state.settings.state_dir.resolve()):
            shutil.rmtree(folder, ignore_errors=True)
    return Response(status_code=204)


# --- capacity ---------------------------------------------------------------------------------


async def get_capacity(request: Request) -> Response:
    identity = caller_identity(request)
    loc = request_location(request)
    state = server_state(request)
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
        caller_role=owner_filter(request, identity),
        caller_user=identity.user,
        settings=state.settings,
    )
    # Real models on a GPU: the answer names it (nothing on the CPU, where the answer is as always).
    served = model_registry.current() or model_registry.Registry()
    device = cap.device_description(served.device)
    if device is not None:
        answer["device"] = device
    return JSONResponse(answer)


# --- account-level routes ---------------------------------------------------------------------


async def list_account_jobs(request: Request) -> Response:
    identity = caller_identity(request)
    state = server_state(request)
    if not state.settings.account_list_enabled:
        raise listing.not_enabled()
    query = listing.AccountQuery(request.query_params)
    key = state.store.secret("page-token")
    before = listing.open_token(key, query.page_token, query.fingerprint()) if query.page_token else None
    rows = state.store.account_jobs(request.path_params["endpoint"], owner_filter(request, identity), before)
    return JSONResponse(listing.account_page(query, rows, key))


async def list_models(request: Request) -> Response:
    caller_identity(request)
    served = model_registry.current() or model_registry.Registry()
    names = server_state(request).settings.models
    return JSONResponse({"models": [served.entry(name).describe() for name in names]})


async def execute_statement(request: Request) -> Response:
    identity = caller_identity(request)
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("statement"), str):
        raise errors.RequestValidationError([(["statement"], "statement must be a string")])
    state = server_state(request)
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
    state.statements.remember(identity.role, answer)
    return JSONResponse(answer)


async def get_statement_status(request: Request) -> Response:
    """A statement's answer again, by its handle: every statement here finished when its POST was
    answered, and its rows are one partition (0), so only ``partition=0`` (or none) has rows."""
    identity = caller_identity(request)
    handle = request.path_params["statement_handle"]
    partition = request.query_params.get("partition", "0")
    if not partition.isdigit():
        message = f"partition must be a non-negative integer, got {partition[:40]!r}"
        return JSONResponse(statements.error_body(message), status_code=400)
    answer = server_state(request).statements.answer(identity.role, handle)
    if answer is None:
        return JSONResponse(statements.not_found_body(handle), status_code=404)
    if int(partition) != 0:
        message = f"partition {int(partition)} does not exist: the result of {handle} has one partition (0)"
        return JSONResponse(statements.error_body(message), status_code=422)
    return JSONResponse(answer)


async def healthz(request: Request) -> Response:
    """The server is up; ``services`` says where each embedded service that reports it stands.

    A service of the ``ct_local_services`` hook that has a ``status()`` ("starting", "up",
    "failed: ...") is listed under its ``name``; one without is left out.
    """
    served = model_registry.current() or model_registry.Registry()
    body: dict[str, Any] = {"status": "ok", "device": served.device, "dtype": served.dtype}
    if served.memory_bytes is not None:
        body["memory_bytes"] = served.memory_bytes
    if served.has_real_models:
        body["loaded_models"] = model_registry.loaded_models().describe()
    body.update(server_state(request).data_plane.health())
    services = {
        str(getattr(service, "name", type(service).__name__)): str(service.status())
        for service in server_state(request).services
        if callable(getattr(service, "status", None))
    }
    if services:
        body["services"] = services
    return JSONResponse(body)
