from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.request_accepted import RequestAccepted
from ...types import File, Response


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    *,
    body: File,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/forward-backward".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            job_id=quote(str(job_id), safe=""),
        ),
    }

    _kwargs["content"] = body.payload
    headers["Content-Type"] = "application/octet-stream"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | RequestAccepted | None:
    if response.status_code == 200:
        response_200 = RequestAccepted.from_dict(response.json())

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
) -> Response[Any | RequestAccepted]:
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
    body: File,
) -> Response[Any | RequestAccepted]:
    """Submit one DSSST1 request chunk of a forward plus backward pass.

     The body is a DSSST1 frame wrapped in a request-chunk envelope. Every chunk of a group is posted
    here; only the last answer carries the request_id. A later first chunk of an unknown group answers
    409 with code chunk_group_restart_required.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        body (File): A DSSST1 safetensors frame (u64 header length, JSON header, tensor bytes), or
            a DSSST1 request chunk of one. Never pickle.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RequestAccepted]
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
    body: File,
) -> Any | RequestAccepted | None:
    """Submit one DSSST1 request chunk of a forward plus backward pass.

     The body is a DSSST1 frame wrapped in a request-chunk envelope. Every chunk of a group is posted
    here; only the last answer carries the request_id. A later first chunk of an unknown group answers
    409 with code chunk_group_restart_required.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        body (File): A DSSST1 safetensors frame (u64 header length, JSON header, tensor bytes), or
            a DSSST1 request chunk of one. Never pickle.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RequestAccepted
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
    body: File,
) -> Response[Any | RequestAccepted]:
    """Submit one DSSST1 request chunk of a forward plus backward pass.

     The body is a DSSST1 frame wrapped in a request-chunk envelope. Every chunk of a group is posted
    here; only the last answer carries the request_id. A later first chunk of an unknown group answers
    409 with code chunk_group_restart_required.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        body (File): A DSSST1 safetensors frame (u64 header length, JSON header, tensor bytes), or
            a DSSST1 request chunk of one. Never pickle.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RequestAccepted]
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
    body: File,
) -> Any | RequestAccepted | None:
    """Submit one DSSST1 request chunk of a forward plus backward pass.

     The body is a DSSST1 frame wrapped in a request-chunk envelope. Every chunk of a group is posted
    here; only the last answer carries the request_id. A later first chunk of an unknown group answers
    409 with code chunk_group_restart_required.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        body (File): A DSSST1 safetensors frame (u64 header length, JSON header, tensor bytes), or
            a DSSST1 request chunk of one. Never pickle.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RequestAccepted
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
