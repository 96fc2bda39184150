from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.run_logs import RunLogs
from ...types import UNSET, Response, Unset


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    run_id: str,
    *,
    structured: bool | Unset = False,
    after: int | Unset = 0,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["structured"] = structured

    params["after"] = after

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}/logs".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            run_id=quote(str(run_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | RunLogs | None:
    if response.status_code == 200:
        response_200 = RunLogs.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | RunLogs]:
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
    structured: bool | Unset = False,
    after: int | Unset = 0,
    limit: int | Unset = UNSET,
) -> Response[Any | RunLogs]:
    """The run's log entries, from a sequence number on.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):
        structured (bool | Unset):  Default: False.
        after (int | Unset):  Default: 0.
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RunLogs]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
        structured=structured,
        after=after,
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
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    structured: bool | Unset = False,
    after: int | Unset = 0,
    limit: int | Unset = UNSET,
) -> Any | RunLogs | None:
    """The run's log entries, from a sequence number on.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):
        structured (bool | Unset):  Default: False.
        after (int | Unset):  Default: 0.
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RunLogs
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
        client=client,
        structured=structured,
        after=after,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    structured: bool | Unset = False,
    after: int | Unset = 0,
    limit: int | Unset = UNSET,
) -> Response[Any | RunLogs]:
    """The run's log entries, from a sequence number on.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):
        structured (bool | Unset):  Default: False.
        after (int | Unset):  Default: 0.
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RunLogs]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
        structured=structured,
        after=after,
        limit=limit,
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
    structured: bool | Unset = False,
    after: int | Unset = 0,
    limit: int | Unset = UNSET,
) -> Any | RunLogs | None:
    """The run's log entries, from a sequence number on.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):
        structured (bool | Unset):  Default: False.
        after (int | Unset):  Default: 0.
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RunLogs
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            run_id=run_id,
            client=client,
            structured=structured,
            after=after,
            limit=limit,
        )
    ).parsed
