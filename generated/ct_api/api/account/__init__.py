"""The account operations of the spec, one thin typed function each.

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


def list_models(
    transport: Transport,
    *,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.ModelList:
    """Models that new jobs may use in this account.

    ``GET /api/v2/cortex-training/models`` (listModels); retry rule ``read``.
    """
    params: dict[str, Any] = {}
    answer = transport.request(
        "listModels",
        params=params,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.ModelList", answer.json())


def execute_statement(
    transport: Transport,
    *,
    body: models.StatementRequest,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> Answer[models.StatementResult]:
    """Run one SQL statement through the Snowflake SQL API.

    ``POST /api/v2/statements`` (executeStatement); retry rule ``read``.
    Returns the answer itself: its status says which of the operation's answers came.
    """
    params: dict[str, Any] = {}
    answer = transport.request(
        "executeStatement",
        params=params,
        json_body=body,
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("Answer[models.StatementResult]", answer)


def get_statement_status(
    transport: Transport,
    *,
    statement_handle: str,
    partition: int | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> Answer[models.StatementResult]:
    """The state or result of a statement the SQL API accepted, or one partition of its rows.

    ``GET /api/v2/statements/{statement_handle}`` (getStatementStatus); retry rule ``read``.
    Returns the answer itself: its status says which of the operation's answers came.
    """
    params: dict[str, Any] = {
        "statement_handle": statement_handle,
    }
    answer = transport.request(
        "getStatementStatus",
        params=params,
        query={
            "partition": partition,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("Answer[models.StatementResult]", answer)


def list_account_jobs(
    transport: Transport,
    *,
    database: str | None = None,
    schema: str | None = None,
    status: str | None = None,
    submitted_by: str | None = None,
    created_after: str | None = None,
    created_before: str | None = None,
    limit: int | None = None,
    page_token: str | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.AccountJobPage:
    """One page of the jobs the caller can see across the account, newest first.

    ``GET /api/v2/{endpoint}`` (listAccountJobs); retry rule ``read``.
    """
    params: dict[str, Any] = {}
    if endpoint is not None:
        params["endpoint"] = endpoint
    answer = transport.request(
        "listAccountJobs",
        params=params,
        query={
            "database": database,
            "schema": schema,
            "status": status,
            "submitted_by": submitted_by,
            "created_after": created_after,
            "created_before": created_before,
            "limit": limit,
            "page_token": page_token,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.AccountJobPage", answer.json())


#: operationId -> the one function that sends it.
OPERATIONS: dict[str, Callable[..., Any]] = {
    "listModels": list_models,
    "executeStatement": execute_statement,
    "getStatementStatus": get_statement_status,
    "listAccountJobs": list_account_jobs,
}
