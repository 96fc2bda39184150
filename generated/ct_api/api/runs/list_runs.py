from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.run_list import RunList
from ...models.run_status import RunStatus
from ...types import UNSET, Response, Unset


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    *,
    status: RunStatus | Unset = UNSET,
    limit: int | Unset = 100,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | RunList | None:
    if response.status_code == 200:
        response_200 = RunList.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | RunList]:
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
    status: RunStatus | Unset = UNSET,
    limit: int | Unset = 100,
) -> Response[Any | RunList]:
    """The runs of this schema, newest first.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        status (RunStatus | Unset): queued, then running, then one of the terminal succeeded,
            failed or cancelled.
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RunList]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        status=status,
        limit=limit,
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
    status: RunStatus | Unset = UNSET,
    limit: int | Unset = 100,
) -> Any | RunList | None:
    """The runs of this schema, newest first.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        status (RunStatus | Unset): queued, then running, then one of the terminal succeeded,
            failed or cancelled.
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RunList
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        client=client,
        status=status,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    status: RunStatus | Unset = UNSET,
    limit: int | Unset = 100,
) -> Response[Any | RunList]:
    """The runs of this schema, newest first.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        status (RunStatus | Unset): queued, then running, then one of the terminal succeeded,
            failed or cancelled.
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RunList]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        status=status,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    status: RunStatus | Unset = UNSET,
    limit: int | Unset = 100,
) -> Any | RunList | None:
    """The runs of this schema, newest first.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        status (RunStatus | Unset): queued, then running, then one of the terminal succeeded,
            failed or cancelled.
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RunList
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            client=client,
            status=status,
            limit=limit,
        )
    ).parsed
