from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.statement_result import StatementResult
from ...types import UNSET, Response, Unset


def _get_kwargs(
    statement_handle: str,
    *,
    partition: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["partition"] = partition

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/statements/{statement_handle}".format(
            statement_handle=quote(str(statement_handle), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | StatementResult | None:
    if response.status_code == 200:
        response_200 = StatementResult.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = StatementResult.from_dict(response.json())

        return response_202

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
) -> Response[Any | StatementResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    statement_handle: str,
    *,
    client: AuthenticatedClient | Client,
    partition: int | Unset = UNSET,
) -> Response[Any | StatementResult]:
    """The state or result of a statement the SQL API accepted, or one partition of its rows.

    Args:
        statement_handle (str):
        partition (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | StatementResult]
    """

    kwargs = _get_kwargs(
        statement_handle=statement_handle,
        partition=partition,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    statement_handle: str,
    *,
    client: AuthenticatedClient | Client,
    partition: int | Unset = UNSET,
) -> Any | StatementResult | None:
    """The state or result of a statement the SQL API accepted, or one partition of its rows.

    Args:
        statement_handle (str):
        partition (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | StatementResult
    """

    return sync_detailed(
        statement_handle=statement_handle,
        client=client,
        partition=partition,
    ).parsed


async def asyncio_detailed(
    statement_handle: str,
    *,
    client: AuthenticatedClient | Client,
    partition: int | Unset = UNSET,
) -> Response[Any | StatementResult]:
    """The state or result of a statement the SQL API accepted, or one partition of its rows.

    Args:
        statement_handle (str):
        partition (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | StatementResult]
    """

    kwargs = _get_kwargs(
        statement_handle=statement_handle,
        partition=partition,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    statement_handle: str,
    *,
    client: AuthenticatedClient | Client,
    partition: int | Unset = UNSET,
) -> Any | StatementResult | None:
    """The state or result of a statement the SQL API accepted, or one partition of its rows.

    Args:
        statement_handle (str):
        partition (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | StatementResult
    """

    return (
        await asyncio_detailed(
            statement_handle=statement_handle,
            client=client,
            partition=partition,
        )
    ).parsed
