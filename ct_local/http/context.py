"""What every route of the local server reads from a request before doing its work.

The control-plane, admin, artifact, inference and data-plane handlers all use these helpers, so
the rules they carry hold the same everywhere: who signs a request (bearer or Snowflake token),
which jobs that caller may see, which database/schema/endpoint a path names (hidden schemas answer
"not found"), which job a ``{job_id}`` path names for this caller, and how a JSON body is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ct_local.control import listing
from ct_local.http import errors
from ct_local.settings import ANONYMOUS_ROLE, ANONYMOUS_USER, Identity
from ct_local.state import ServerState
from ct_local.storage.store import JobRow

#: The caller of a server that has no tokens: everyone is this one role and user.
ANONYMOUS = Identity(role=ANONYMOUS_ROLE, user=ANONYMOUS_USER)


def server_state(request: Request) -> ServerState:
    """The :class:`~ct_local.state.ServerState` of the app serving ``request``."""
    state: ServerState = request.app.state.ct
    return state


def caller_identity(request: Request) -> Identity:
    """Who signs the request; 401 when the server has tokens and the request carries none of them.

    A server without tokens answers every caller as :data:`ANONYMOUS`. With tokens, the request
    must carry one of them as ``Authorization: Bearer <token>`` or ``Snowflake Token="<token>"``.
    """
    settings = server_state(request).settings
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


def owner_filter(request: Request, identity: Identity) -> str | None:
    """The owner role the caller's job queries are limited to, or None for "every job".

    Without tokens everyone is the same anonymous caller and sees every job.
    """
    return identity.role if server_state(request).settings.auth_required else None


@dataclass
class Location:
    """The database, schema and endpoint a REST path names (identifiers already normalized)."""

    database: str
    schema: str
    endpoint: str


def request_location(request: Request) -> Location:
    """The :class:`Location` of the request's path; a hidden schema answers as a missing one."""
    params = request.path_params
    loc = Location(
        listing.sql_identifier(params["database"]),
        listing.sql_identifier(params["schema"]),
        params["endpoint"],
    )
    hidden = {h.upper() for h in server_state(request).settings.hidden_schemas}
    if f"{loc.database}.{loc.schema}".upper() in hidden:
        raise errors.schema_not_found(loc.database, loc.schema)
    return loc


def owned_job(request: Request, identity: Identity, loc: Location) -> JobRow:
    """The job the path's ``{job_id}`` names, if it lives at ``loc`` and the caller may see it.

    A job of another location or another owner answers exactly like a missing one, so a caller
    cannot learn that it exists.
    """
    job_id = request.path_params["job_id"]
    job = server_state(request).store.get_job(job_id)
    owner = owner_filter(request, identity)
    if (
        job is None
        or (job.database_name, job.schema_name, job.endpoint) != (loc.database, loc.schema, loc.endpoint)
        or (owner is not None and job.owner_role != owner)
    ):
        raise errors.job_not_found(job_id, loc.schema)
    return job


async def json_body(request: Request, *, required: bool = True) -> Any:
    """The request's JSON body; an empty body is a 400 when ``required``, else None."""
    raw = await request.body()
    if not raw.strip():
        if required:
            raise errors.RequestValidationError([([], "a JSON body is required")])
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise errors.RequestValidationError([([], f"the body is not valid JSON: {exc}")]) from exc
    except RecursionError:
        # ct_local.http.limits refuses such bodies before any route runs; this keeps the answer a
        # 400 for an app assembled without that middleware.
        raise errors.invalid_request("the JSON body is nested too deeply (max_json_depth)") from None
