from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.run import Run
from ...types import Response


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    run_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            run_id=quote(str(run_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Run | None:
    if response.status_code == 200:
        response_200 = Run.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Run]:
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
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | Run]:
    """A run's status, pinned fingerprints, resolved trainer, checkpoints and outcome.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Run]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    database: str,
    schema: str,
    endpoint: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | Run | None:
    """A run's status, pinned fingerprints, resolved trainer, checkpoints and outcome.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Run
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | Run]:
    """A run's status, pinned fingerprints, resolved trainer, checkpoints and outcome.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Run]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | Run | None:
    """A run's status, pinned fingerprints, resolved trainer, checkpoints and outcome.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Run
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            run_id=run_id,
            client=client,
        )
    ).parsed
