"""The inference operations of the spec, one thin typed function each.

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


def create_chat_completion(
    transport: Transport,
    *,
    body: models.ChatCompletionRequest,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.ChatCompletion:
    """OpenAI-compatible chat completion on a model deployment.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/inference/v1/chat/completions`` (createChatCompletion); retry rule ``never``.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "createChatCompletion",
        params=params,
        json_body=body,
        headers=headers,
        predicate=predicate,
        retry="never",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.ChatCompletion", answer.json())


def create_chat_completion_events(
    transport: Transport,
    *,
    body: models.ChatCompletionRequest,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: TimeoutPair | None = None,
) -> AbstractContextManager[StreamedAnswer]:
    """OpenAI-compatible chat completion on a model deployment.

    ``POST /api/v2/databases/{database}/schemas/{schema}/{endpoint}/inference/v1/chat/completions`` (createChatCompletion) answered as server-sent events
    (the body asks for a stream), read inside the ``with`` block: one attempt.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    return transport.stream(
        "createChatCompletion",
        params=params,
        json_body=body,
        headers=headers,
        timeout=timeout,
    )


def list_deployment_models(
    transport: Transport,
    *,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.DeploymentModelList:
    """The READY deployments the caller owns in this schema (OpenAI model list).

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/inference/v1/models`` (listDeploymentModels); retry rule ``read``.
    """
    params: dict[str, Any] = {}
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "listDeploymentModels",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.DeploymentModelList", answer.json())


def get_deployment_model(
    transport: Transport,
    *,
    model: str,
    database: str | None = None,
    schema: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.DeploymentModel:
    """One READY deployment the caller owns in this schema (OpenAI model object).

    ``GET /api/v2/databases/{database}/schemas/{schema}/{endpoint}/inference/v1/models/{model}`` (getDeploymentModel); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "model": model,
    }
    if database is not None:
        params["database"] = database
    if schema is not None:
        params["schema"] = schema
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "getDeploymentModel",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.DeploymentModel", answer.json())


#: operationId -> the one function that sends it.
OPERATIONS: dict[str, Callable[..., Any]] = {
    "createChatCompletion": create_chat_completion,
    "listDeploymentModels": list_deployment_models,
    "getDeploymentModel": get_deployment_model,
}
