from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.create_job_request import CreateJobRequest
from ...models.create_job_response import CreateJobResponse
from ...types import Response


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    *,
    body: CreateJobRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | CreateJobResponse | None:
    if response.status_code == 200:
        response_200 = CreateJobResponse.from_dict(response.json())

        return response_200

    if 400 <= response.status_code <= 499:
        response_4xx = cast(Any, None)
        return response_4xx

    if 500 <= response.status_code <= 599:
        response_5xx = cast(Any, None)
        return response_5xx

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | CreateJobResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: CreateJobRequest,
) -> Response[Any | CreateJobResponse]:
    """Create a job with one or more sub-jobs.

     The body carries at most one training sub-job and any number of sampling sub-jobs. Clients retry
    this call only when the request provably never reached the server.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        body (CreateJobRequest): The create-job body. Keys beyond the named ones are forwarded
            unchanged (the service rejects job_id). hardware stays a plain string here because raw
            bodies are forwarded as given and the service rejects an unknown value itself.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | CreateJobResponse]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: CreateJobRequest,
) -> Any | CreateJobResponse | None:
    """Create a job with one or more sub-jobs.

     The body carries at most one training sub-job and any number of sampling sub-jobs. Clients retry
    this call only when the request provably never reached the server.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        body (CreateJobRequest): The create-job body. Keys beyond the named ones are forwarded
            unchanged (the service rejects job_id). hardware stays a plain string here because raw
            bodies are forwarded as given and the service rejects an unknown value itself.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | CreateJobResponse
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: CreateJobRequest,
) -> Response[Any | CreateJobResponse]:
    """Create a job with one or more sub-jobs.

     The body carries at most one training sub-job and any number of sampling sub-jobs. Clients retry
    this call only when the request provably never reached the server.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        body (CreateJobRequest): The create-job body. Keys beyond the named ones are forwarded
            unchanged (the service rejects job_id). hardware stays a plain string here because raw
            bodies are forwarded as given and the service rejects an unknown value itself.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | CreateJobResponse]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: CreateJobRequest,
) -> Any | CreateJobResponse | None:
    """Create a job with one or more sub-jobs.

     The body carries at most one training sub-job and any number of sampling sub-jobs. Clients retry
    this call only when the request provably never reached the server.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        body (CreateJobRequest): The create-job body. Keys beyond the named ones are forwarded
            unchanged (the service rejects job_id). hardware stays a plain string here because raw
            bodies are forwarded as given and the service rejects an unknown value itself.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | CreateJobResponse
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            client=client,
            body=body,
        )
    ).parsed
