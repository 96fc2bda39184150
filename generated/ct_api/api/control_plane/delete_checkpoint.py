from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...types import Response


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    checkpoint_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/checkpoints/{checkpoint_id}".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            job_id=quote(str(job_id), safe=""),
            checkpoint_id=quote(str(checkpoint_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | None:
    if response.status_code == 200:
        return None

    if response.status_code == 204:
        return None

    if 400 <= response.status_code <= 499:
        return None

    if 500 <= response.status_code <= 599:
        return None

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any]:
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
    checkpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any]:
    """Delete a checkpoint; a missing one answers 404.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        checkpoint_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
        checkpoint_id=checkpoint_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    checkpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any]:
    """Delete a checkpoint; a missing one answers 404.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        checkpoint_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
        checkpoint_id=checkpoint_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)
