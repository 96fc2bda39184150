from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.capacity import Capacity
from ...types import UNSET, Response, Unset


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    *,
    hardware: str | Unset = UNSET,
    breakdown: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["hardware"] = hardware

    params["breakdown"] = breakdown

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/capacity".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Capacity | None:
    if response.status_code == 200:
        response_200 = Capacity.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Capacity]:
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
    hardware: str | Unset = UNSET,
    breakdown: str | Unset = UNSET,
) -> Response[Any | Capacity]:
    """The account's GPU ceiling and usage for one hardware type.

     Omitted counts are zero and an omitted has_reservation is false (proto3 JSON), so `{}` is a valid
    answer. A known hardware type the account does not support answers 409 with code 517604.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        hardware (str | Unset):
        breakdown (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Capacity]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        hardware=hardware,
        breakdown=breakdown,
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
    hardware: str | Unset = UNSET,
    breakdown: str | Unset = UNSET,
) -> Any | Capacity | None:
    """The account's GPU ceiling and usage for one hardware type.

     Omitted counts are zero and an omitted has_reservation is false (proto3 JSON), so `{}` is a valid
    answer. A known hardware type the account does not support answers 409 with code 517604.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        hardware (str | Unset):
        breakdown (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Capacity
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        client=client,
        hardware=hardware,
        breakdown=breakdown,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    hardware: str | Unset = UNSET,
    breakdown: str | Unset = UNSET,
) -> Response[Any | Capacity]:
    """The account's GPU ceiling and usage for one hardware type.

     Omitted counts are zero and an omitted has_reservation is false (proto3 JSON), so `{}` is a valid
    answer. A known hardware type the account does not support answers 409 with code 517604.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        hardware (str | Unset):
        breakdown (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Capacity]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        hardware=hardware,
        breakdown=breakdown,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    hardware: str | Unset = UNSET,
    breakdown: str | Unset = UNSET,
) -> Any | Capacity | None:
    """The account's GPU ceiling and usage for one hardware type.

     Omitted counts are zero and an omitted has_reservation is false (proto3 JSON), so `{}` is a valid
    answer. A known hardware type the account does not support answers 409 with code 517604.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        hardware (str | Unset):
        breakdown (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Capacity
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            client=client,
            hardware=hardware,
            breakdown=breakdown,
        )
    ).parsed
