"""How the local server's handlers become routes: bound to an operation of the REST contract, or
named in the one list of routes that are not part of it.

A contract route is ``operation_route("getJob", handler)``: its method and path template come from
the route table generated out of openapi/cortex-training.yaml (read through
:func:`ct_core.http.routes.route_of`), and the Starlette route is named by the operationId. Nothing
in ct_local spells a contract path. Every other route the server answers is built with
:func:`extra_route`, which accepts only a name of :data:`NON_CONTRACT`, where each says why it
exists. tests/test_route_parity.py checks that every operation of the spec has exactly one handler
and every handler an operation or a place in that list.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ct_core.http.routes import route_of

Handler = Callable[[Request], Awaitable[Response]]

#: The routes that are deliberately outside the REST contract, each with why it exists.
NON_CONTRACT: Mapping[str, str] = MappingProxyType(
    {
        "healthz": "liveness probe: the fixtures and `ct local serve` users ask whether the server is up",
        "createJob/": "createJob spelled with a trailing slash, as some clients send it",
        "listJobs/": "listJobs spelled with a trailing slash, as some clients send it",
        "inferenceUnknownPath": "any other path under /inference/v1 answers as OpenAI does (404 unknown_url)",
        "checkpoint_file": "the presigned link exportCheckpoint hands out (object storage, not the REST API)",
        "adminFaults": "admin lever (loopback only): list, add and clear injected faults",
        "adminJobStatus": "admin lever (loopback only): move a job to a status",
        "adminAddCheckpoint": "admin lever (loopback only): add a checkpoint to a job",
        "adminExecutions": "admin lever (loopback only): how often each sub-job's work was executed",
        "adminRotatePageTokenKey": "admin lever (loopback only): rotate the key that signs page tokens",
    }
)


def operation_route(
    operation_id: str,
    endpoint: Handler,
    *,
    methods: Sequence[str] | None = None,
    converters: Mapping[str, str] | None = None,
) -> Route:
    """The route of ``operation_id``, answered by ``endpoint``.

    ``methods`` widens the methods the path is registered for (the handler then answers the others
    itself, as the inference paths do with OpenAI's 405); it must include the operation's own.
    ``converters`` gives path parameters a Starlette converter (``{"artifact_path": "path"}``).
    """
    method, path = route_of(operation_id, converters)
    if methods is not None and method not in methods:
        raise ValueError(f"{operation_id} is a {method}; methods {list(methods)} leave it out")
    return Route(path, endpoint, methods=list(methods or (method,)), name=operation_id)


def extra_route(name: str, path: str, endpoint: Handler, methods: Sequence[str]) -> Route:
    """A route outside the contract; ``name`` must be one of :data:`NON_CONTRACT`."""
    if name not in NON_CONTRACT:
        raise ValueError(f"{name!r} is neither an operation of the spec nor listed in NON_CONTRACT")
    return Route(path, endpoint, methods=list(methods), name=name)
