"""The loopback-only admin routes of the local server, under ``/_ct/``: levers for tests and demos.

They script faults, force a job into a status, add a checkpoint without training, count how many
times a job's requests ran, and rotate the key that signs page tokens. None of them exists in the
service: each answers a plain 404 unless the server has admin routes enabled and the caller
connects from a loopback address, and a server started with tokens answers 401 to a caller who
sends none of them (as its REST routes do). The levers on one job (``/_ct/jobs/{job_id}/...``)
follow the REST routes' ownership rule: on a server with tokens they act only on the caller's
role's jobs, and another role's job answers the 404 of a job that does not exist. The server-wide
levers (faults, the page-token key) take any of the server's tokens. Fault injection never
applies to these paths (see ct_local.http.faults), so a test can always clear what it scripted.
"""

from __future__ import annotations

import ipaddress
import re
import time
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ct_core.fs import atomic_write
from ct_local.http import errors
from ct_local.http.context import caller_identity, json_body, owner_filter, server_state
from ct_local.state import ServerState
from ct_local.storage.requests import DataPlaneStore
from ct_local.storage.store import CheckpointRow, JobRow

#: A forced checkpoint id names one folder under the state dir: these characters only, so it can
#: never hold a separator, a NUL or an encoded traversal.
_SAFE_CHECKPOINT_ID = re.compile(r"[A-Za-z0-9_.:=@+-]+")
MAX_CHECKPOINT_ID_CHARS = 200


def _require_loopback(request: Request) -> ServerState:
    """The server state, once the caller may use the admin routes.

    Two gates, both needed: the caller connects from a loopback address (otherwise a plain 404, as
    if the routes did not exist), and, on a server with tokens, signs with one of them (otherwise
    the 401 of every REST route): a loopback port is open to every local user and process.
    """
    state = server_state(request)
    host = request.client.host if request.client else ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not state.settings.admin_enabled or not loopback:
        raise errors.ServiceError(404, "Not found", 404)
    caller_identity(request)
    return state


def _callers_job(request: Request, state: ServerState) -> JobRow:
    """The path's job, if the caller's role owns it (every job on a server without tokens).

    Another role's job answers exactly like a missing one, as on the REST routes, so a role can
    neither move nor learn of a job it does not own.
    """
    job_id = request.path_params["job_id"]
    job = state.store.get_job(job_id)
    owner = owner_filter(request, caller_identity(request))
    if job is None or (owner is not None and job.owner_role != owner):
        raise errors.job_not_found(job_id, "any schema")
    return job


def _checkpoint_id(body: dict[str, Any]) -> str:
    """The forced checkpoint id: one safe path segment, since it names a folder under the state dir."""
    value = body.get("checkpoint_id")
    if value is None or value == "":
        return f"cp_{uuid.uuid4()}"
    if (
        not isinstance(value, str)
        or len(value) > MAX_CHECKPOINT_ID_CHARS
        or not _SAFE_CHECKPOINT_ID.fullmatch(value)
        or value in (".", "..")
    ):
        raise errors.invalid_request(
            f"checkpoint_id must be 1 to {MAX_CHECKPOINT_ID_CHARS} of the characters "
            "A-Z a-z 0-9 _ . : = @ + - (one folder name, not . or ..)"
        )
    return value


async def admin_faults(request: Request) -> Response:
    """GET lists the fault rules, POST adds one rule or a list, DELETE clears them all."""
    state = _require_loopback(request)
    if request.method == "DELETE":
        state.faults.clear()
    elif request.method == "POST":
        body = await json_body(request)
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
    """Force a job into a status (with reason), as the lifecycle would; answers the fresh record."""
    state = _require_loopback(request)
    job = _callers_job(request, state)
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("status"), str):
        raise errors.RequestValidationError([(["status"], "status must be a string")])
    state.lifecycle.force(
        job, body["status"], str(body.get("reason", "")), str(body.get("reason_details", ""))
    )
    fresh = state.store.get_job(job.job_id)
    assert fresh is not None
    return JSONResponse(fresh.record())


async def admin_add_checkpoint(request: Request) -> Response:
    """Record a checkpoint for a job, with optional text files in its folder, without training."""
    state = _require_loopback(request)
    job = _callers_job(request, state)
    body = await json_body(request, required=False) or {}
    if not isinstance(body, dict):
        raise errors.invalid_request("the body must be a JSON object")
    checkpoint_id = _checkpoint_id(body)
    folder = state.settings.state_dir / "checkpoints" / job.job_id / checkpoint_id
    files = body.get("files") or {}
    if not isinstance(files, dict):
        raise errors.invalid_request("files must be an object of file name to text")
    home = folder.resolve()
    targets = {}
    # Every name is checked before anything is written, so a refused body leaves no file behind.
    for name in files:
        target = (folder / name).resolve() if name and "\x00" not in name else home
        if target == home or not target.is_relative_to(home):
            raise errors.invalid_request(f"file name {name!r} escapes the checkpoint folder")
        targets[name] = target
    for name, content in files.items():
        target = targets[name]
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, str(content), durable=False)
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
    state = _require_loopback(request)
    job = _callers_job(request, state)
    counts = DataPlaneStore(state.store).execution_counts(job.job_id)
    return JSONResponse({"executions": counts})


async def admin_rotate_page_token_key(request: Request) -> Response:
    """Replace the key that signs account-list page tokens, so every token issued so far stops working."""
    state = _require_loopback(request)
    state.store.rotate_secret("page-token")
    return JSONResponse({})
