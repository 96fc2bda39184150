"""The runs operations of the spec, one thin typed function each.

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


def build_dataset(
    transport: Transport,
    *,
    content: Content | Callable[[], Content],
    length: int | None = None,
    text_field: str | None = None,
    label_field: list[str] | None = None,
    val_fraction: float | None = None,
    seed: int | None = None,
    name: str | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.Dataset:
    """Upload a JSONL file and start building a dataset from it.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/datasets`` (buildDataset); retry rule ``nothing-ran``.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "buildDataset",
        params=params,
        query={
            "text_field": text_field,
            "label_field": label_field,
            "val_fraction": val_fraction,
            "seed": seed,
            "name": name,
        },
        content=content,
        length=length,
        content_type="application/x-ndjson",
        headers=headers,
        predicate=predicate,
        retry="nothing-ran",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.Dataset", answer.json())


def get_dataset(
    transport: Transport,
    *,
    dataset_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.Dataset:
    """A dataset build, with its splits, fingerprints, labels and leakage report.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/datasets/{dataset_id}`` (getDataset); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "dataset_id": dataset_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "getDataset",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.Dataset", answer.json())


def list_runs(
    transport: Transport,
    *,
    status: models.RunStatus | None = None,
    limit: int | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RunList:
    """The runs of this schema, newest first.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs`` (listRuns); retry rule ``read``.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "listRuns",
        params=params,
        query={
            "status": status,
            "limit": limit,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RunList", answer.json())


def start_run(
    transport: Transport,
    *,
    body: models.RunSpec,
    idempotency_key: str | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> Answer[models.Run]:
    """Start a training run on a succeeded dataset build.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs`` (startRun); retry rule ``idempotent-key``.
    Returns the answer itself: its status says which of the operation's answers came.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    headers = dict(headers or {})
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    answer = transport.request(
        "startRun",
        params=params,
        json_body=body,
        headers=headers,
        predicate=predicate,
        retry="idempotent-key",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("Answer[models.Run]", answer)


def get_run(
    transport: Transport,
    *,
    run_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.Run:
    """A run's status, pinned fingerprints, resolved trainer, checkpoints and outcome.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}`` (getRun); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "run_id": run_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "getRun",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.Run", answer.json())


def get_run_metrics(
    transport: Transport,
    *,
    run_id: str,
    after_step: int | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RunMetrics:
    """The run's metric series, from a step on.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}/metrics`` (getRunMetrics); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "run_id": run_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "getRunMetrics",
        params=params,
        query={
            "after_step": after_step,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RunMetrics", answer.json())


def get_run_logs(
    transport: Transport,
    *,
    run_id: str,
    structured: bool | None = None,
    after: int | None = None,
    limit: int | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RunLogs:
    """The run's log entries, from a sequence number on.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}/logs`` (getRunLogs); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "run_id": run_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "getRunLogs",
        params=params,
        query={
            "structured": structured,
            "after": after,
            "limit": limit,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RunLogs", answer.json())


def cancel_run(
    transport: Transport,
    *,
    run_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.Run:
    """Cancel a run (no body).

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}:cancel`` (cancelRun); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "run_id": run_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "cancelRun",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.Run", answer.json())


def resume_run(
    transport: Transport,
    *,
    run_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.Run:
    """Resume a failed or cancelled run from its last resumable checkpoint (no body).

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}:resume`` (resumeRun); retry rule ``nothing-ran``.
    """
    params: dict[str, Any] = {
        "run_id": run_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "resumeRun",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="nothing-ran",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.Run", answer.json())


def register_run_model(
    transport: Transport,
    *,
    run_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> Answer[models.RegisteredModel]:
    """Register the model of a cancelled run from its best checkpoint (no body).

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}:register`` (registerRunModel); retry rule ``read``.
    Returns the answer itself: its status says which of the operation's answers came.
    """
    params: dict[str, Any] = {
        "run_id": run_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "registerRunModel",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("Answer[models.RegisteredModel]", answer)


def list_registered_models(
    transport: Transport,
    *,
    run_id: str | None = None,
    limit: int | None = None,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RegisteredModelList:
    """The models runs of this schema registered, newest first.

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/models`` (listRegisteredModels); retry rule ``read``.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "listRegisteredModels",
        params=params,
        query={
            "run_id": run_id,
            "limit": limit,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RegisteredModelList", answer.json())


def get_registered_model(
    transport: Transport,
    *,
    model_id: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.RegisteredModel:
    """A registered model version (of a succeeded run, or of a cancelled one registerRunModel exported).

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/models/{model_id}`` (getRegisteredModel); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "model_id": model_id,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "getRegisteredModel",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.RegisteredModel", answer.json())


#: operationId -> the one function that sends it.
OPERATIONS: dict[str, Callable[..., Any]] = {
    "buildDataset": build_dataset,
    "getDataset": get_dataset,
    "listRuns": list_runs,
    "startRun": start_run,
    "getRun": get_run,
    "getRunMetrics": get_run_metrics,
    "getRunLogs": get_run_logs,
    "cancelRun": cancel_run,
    "resumeRun": resume_run,
    "registerRunModel": register_run_model,
    "listRegisteredModels": list_registered_models,
    "getRegisteredModel": get_registered_model,
}
