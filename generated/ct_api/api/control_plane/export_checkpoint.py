from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.checkpoint_export import CheckpointExport
from ...types import Response


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    checkpoint_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/checkpoints/{checkpoint_id}:export".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            job_id=quote(str(job_id), safe=""),
            checkpoint_id=quote(str(checkpoint_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | CheckpointExport | None:
    if response.status_code == 200:
        response_200 = CheckpointExport.from_dict(response.json())

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
) -> Response[Any | CheckpointExport]:
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
) -> Response[Any | CheckpointExport]:
    """Short-lived download links for a checkpoint's files (no body).

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
        Response[Any | CheckpointExport]
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


def sync(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    checkpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | CheckpointExport | None:
    """Short-lived download links for a checkpoint's files (no body).

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
        Any | CheckpointExport
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
        checkpoint_id=checkpoint_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    checkpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | CheckpointExport]:
    """Short-lived download links for a checkpoint's files (no body).

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
        Response[Any | CheckpointExport]
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


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    checkpoint_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | CheckpointExport | None:
    """Short-lived download links for a checkpoint's files (no body).

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
        Any | CheckpointExport
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            job_id=job_id,
            checkpoint_id=checkpoint_id,
            client=client,
        )
    ).parsed
