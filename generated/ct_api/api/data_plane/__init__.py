"""The data_plane operations of the spec, one thin typed function each.

Written by openapi/regen.py from openapi/cortex-training.yaml; never edited by hand. Each function
calls ct's transport with the operation's id, path and query parameters, body and the retry rule the
spec names (``x-ct-retry``, a key of ``ct_core.http.retry.RULES``) and returns the answer typed
without building or checking anything (``cast``). ``predicate`` replaces the named rule for one call,
``headers``, ``timeout``, ``max_retries`` and ``trace`` (a debug label) pass through, and ``job_id``
(where the path has one) also gives the transport the job a just-created-job 404 is about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from contextlib import AbstractContextManager

    from ct_api import models
    from ct_api.types import Answer, Content, Predicate, StreamedAnswer, TimeoutPair, Transport


def forward_backward(
    transport: Transport,
    *,
    job_id: str,
    content: Content | Callable[[], Content],
    length: int | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RequestAccepted:
    """Submit one DSSST1 request chunk of a forward plus backward pass.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/forward-backward`` (forwardBackward); retry rule ``idempotent-key``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "forwardBackward",
        params=params,
        content=content,
        length=length,
        content_type="application/octet-stream",
        headers=headers,
        predicate=predicate,
        retry="idempotent-key",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RequestAccepted", answer.json())


def step(
    transport: Transport,
    *,
    job_id: str,
    body: models.StepRequest,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RequestAccepted:
    """Schedule an optimizer step.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/step`` (step); retry rule ``nothing-ran``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "step",
        params=params,
        json_body=body,
        headers=headers,
        predicate=predicate,
        retry="nothing-ran",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RequestAccepted", answer.json())


def save(
    transport: Transport,
    *,
    job_id: str,
    body: models.SaveRequest,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RequestAccepted:
    """Schedule a checkpoint save.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/save`` (save); retry rule ``nothing-ran``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "save",
        params=params,
        json_body=body,
        headers=headers,
        predicate=predicate,
        retry="nothing-ran",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RequestAccepted", answer.json())


def load(
    transport: Transport,
    *,
    job_id: str,
    body: models.LoadRequest,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RequestAccepted:
    """Schedule loading a checkpoint into the running training sub-job.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/load`` (load); retry rule ``nothing-ran``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "load",
        params=params,
        json_body=body,
        headers=headers,
        predicate=predicate,
        retry="nothing-ran",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RequestAccepted", answer.json())


def generate(
    transport: Transport,
    *,
    job_id: str,
    content: Content | Callable[[], Content],
    length: int | None = None,
    sub_job_id: str | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RequestAccepted:
    """Schedule batch generation from a DSSST1 frame.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/generate`` (generate); retry rule ``idempotent-key``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "generate",
        params=params,
        query={
            "sub_job_id": sub_job_id,
        },
        content=content,
        length=length,
        content_type="application/octet-stream",
        headers=headers,
        predicate=predicate,
        retry="idempotent-key",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RequestAccepted", answer.json())


def generate_stream(
    transport: Transport,
    *,
    job_id: str,
    content: Content | Callable[[], Content],
    length: int | None = None,
    sub_job_id: str | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.GenerateStreamAccepted:
    """Start polling-based streaming generation from one DSSST1 frame (at most 60 MiB).

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/generate-stream`` (generateStream); retry rule ``nothing-ran``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "generateStream",
        params=params,
        query={
            "sub_job_id": sub_job_id,
        },
        content=content,
        length=length,
        content_type="application/octet-stream",
        headers=headers,
        predicate=predicate,
        retry="nothing-ran",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.GenerateStreamAccepted", answer.json())


def submit_operation(
    transport: Transport,
    *,
    job_id: str,
    body: models.OperationRequest,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.TailLogsPage | models.OperationResponse:
    """Run a routed operation (forward, weight-sync, tail-logs, ...).

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/operation`` (submitOperation); retry rule ``nothing-ran``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "submitOperation",
        params=params,
        json_body=body,
        headers=headers,
        predicate=predicate,
        retry="nothing-ran",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.TailLogsPage | models.OperationResponse", answer.json())


def get_request_status(
    transport: Transport,
    *,
    job_id: str,
    request_id: str,
    max_events: int | None = None,
    cursor: str | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RequestStatus:
    """Poll scheduled work.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/requests/{request_id}`` (getRequestStatus); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
        "request_id": request_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "getRequestStatus",
        params=params,
        query={
            "max_events": max_events,
            "cursor": cursor,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RequestStatus", answer.json())


#: operationId -> the one function that sends it.
OPERATIONS: dict[str, Callable[..., Any]] = {
    "forwardBackward": forward_backward,
    "step": step,
    "save": save,
    "load": load,
    "generate": generate,
    "generateStream": generate_stream,
    "submitOperation": submit_operation,
    "getRequestStatus": get_request_status,
}
