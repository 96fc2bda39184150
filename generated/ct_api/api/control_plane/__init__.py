"""The control_plane operations of the spec, one thin typed function each.

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


def list_jobs(
    transport: Transport,
    *,
    status: str | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.JobList:
    """List the jobs in this schema that the caller's role owns.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}`` (listJobs); retry rule ``read``.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "listJobs",
        params=params,
        query={
            "status": status,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.JobList", answer.json())


def create_job(
    transport: Transport,
    *,
    body: models.CreateJobRequest,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.CreateJobResponse:
    """Create a job with one or more sub-jobs.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}`` (createJob); retry rule ``never-sent``.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "createJob",
        params=params,
        json_body=body,
        headers=headers,
        predicate=predicate,
        retry="never-sent",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.CreateJobResponse", answer.json())


def get_capacity(
    transport: Transport,
    *,
    hardware: str | None = None,
    breakdown: str | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.Capacity:
    """The account's GPU ceiling and usage for one hardware type.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/capacity`` (getCapacity); retry rule ``never``.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "getCapacity",
        params=params,
        query={
            "hardware": hardware,
            "breakdown": breakdown,
        },
        headers=headers,
        predicate=predicate,
        retry="never",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.Capacity", answer.json())


def get_job(
    transport: Transport,
    *,
    job_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.JobRecord:
    """A job and its sub-jobs.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}`` (getJob); retry rule ``read``.
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
        "getJob",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.JobRecord", answer.json())


def cancel_job(
    transport: Transport,
    *,
    job_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> None:
    """Cancel a job (no body).

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}:cancel`` (cancelJob); retry rule ``conflict-final``.
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
    transport.request(
        "cancelJob",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="conflict-final",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )


def get_experiment_run(
    transport: Transport,
    *,
    job_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.ExperimentRun:
    """The experiment and run a job records to.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/experiment-run`` (getExperimentRun); retry rule ``read``.
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
        "getExperimentRun",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.ExperimentRun", answer.json())


def list_checkpoints(
    transport: Transport,
    *,
    job_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.CheckpointList:
    """The checkpoints a job saved (in no guaranteed order).

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/checkpoints`` (listCheckpoints); retry rule ``read``.
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
        "listCheckpoints",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.CheckpointList", answer.json())


def delete_checkpoint(
    transport: Transport,
    *,
    job_id: str,
    checkpoint_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> None:
    """Delete a checkpoint; a missing one answers 404.

    ``DELETE /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/checkpoints/{checkpoint_id}`` (deleteCheckpoint); retry rule ``settled``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
        "checkpoint_id": checkpoint_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    transport.request(
        "deleteCheckpoint",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="settled",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )


def export_checkpoint(
    transport: Transport,
    *,
    job_id: str,
    checkpoint_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.CheckpointExport:
    """Short-lived download links for a checkpoint's files (no body).

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/checkpoints/{checkpoint_id}:export`` (exportCheckpoint); retry rule ``settled``.
    """
    params: dict[str, Any] = {
        "job_id": job_id,
        "checkpoint_id": checkpoint_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "exportCheckpoint",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="settled",
        job_id=job_id,
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.CheckpointExport", answer.json())


#: operationId -> the one function that sends it.
OPERATIONS: dict[str, Callable[..., Any]] = {
    "listJobs": list_jobs,
    "createJob": create_job,
    "getCapacity": get_capacity,
    "getJob": get_job,
    "cancelJob": cancel_job,
    "getExperimentRun": get_experiment_run,
    "listCheckpoints": list_checkpoints,
    "deleteCheckpoint": delete_checkpoint,
    "exportCheckpoint": export_checkpoint,
}
