from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.operation_request import OperationRequest
from ...models.operation_response import OperationResponse
from ...models.tail_logs_page import TailLogsPage
from ...types import Response


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    *,
    body: OperationRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/operation".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            job_id=quote(str(job_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | OperationResponse | TailLogsPage | None:
    if response.status_code == 200:

        def _parse_response_200(data: object) -> OperationResponse | TailLogsPage:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_200_type_0 = TailLogsPage.from_dict(data)

                return response_200_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_200_type_1 = OperationResponse.from_dict(data)

            return response_200_type_1

        response_200 = _parse_response_200(response.json())

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
) -> Response[Any | OperationResponse | TailLogsPage]:
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
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: OperationRequest,
) -> Response[Any | OperationResponse | TailLogsPage]:
    """Run a routed operation (forward, weight-sync, tail-logs, ...).

     Answers are opaque: one that carries a request_id is polled, anything else is the result. tail-logs
    answers a TailLogsPage and is the only operation allowed while the job is placing.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        body (OperationRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | OperationResponse | TailLogsPage]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
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
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: OperationRequest,
) -> Any | OperationResponse | TailLogsPage | None:
    """Run a routed operation (forward, weight-sync, tail-logs, ...).

     Answers are opaque: one that carries a request_id is polled, anything else is the result. tail-logs
    answers a TailLogsPage and is the only operation allowed while the job is placing.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        body (OperationRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | OperationResponse | TailLogsPage
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: OperationRequest,
) -> Response[Any | OperationResponse | TailLogsPage]:
    """Run a routed operation (forward, weight-sync, tail-logs, ...).

     Answers are opaque: one that carries a request_id is polled, anything else is the result. tail-logs
    answers a TailLogsPage and is the only operation allowed while the job is placing.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        body (OperationRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | OperationResponse | TailLogsPage]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: OperationRequest,
) -> Any | OperationResponse | TailLogsPage | None:
    """Run a routed operation (forward, weight-sync, tail-logs, ...).

     Answers are opaque: one that carries a request_id is polled, anything else is the result. tail-logs
    answers a TailLogsPage and is the only operation allowed while the job is placing.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        body (OperationRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | OperationResponse | TailLogsPage
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            job_id=job_id,
            client=client,
            body=body,
        )
    ).parsed
