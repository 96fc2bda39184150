from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.statement_request import StatementRequest
from ...models.statement_result import StatementResult
from ...types import Response


def _get_kwargs(
    *,
    body: StatementRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/statements",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
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
    *,
    client: AuthenticatedClient | Client,
    body: StatementRequest,
) -> Response[Any | StatementResult]:
    """Run one SQL statement through the Snowflake SQL API.

     Used to resolve the current user and role for artifact downloads and by the legacy-config conversion
    of `ct login`.

    Args:
        body (StatementRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | StatementResult]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: StatementRequest,
) -> Any | StatementResult | None:
    """Run one SQL statement through the Snowflake SQL API.

     Used to resolve the current user and role for artifact downloads and by the legacy-config conversion
    of `ct login`.

    Args:
        body (StatementRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | StatementResult
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: StatementRequest,
) -> Response[Any | StatementResult]:
    """Run one SQL statement through the Snowflake SQL API.

     Used to resolve the current user and role for artifact downloads and by the legacy-config conversion
    of `ct login`.

    Args:
        body (StatementRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | StatementResult]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: StatementRequest,
) -> Any | StatementResult | None:
    """Run one SQL statement through the Snowflake SQL API.

     Used to resolve the current user and role for artifact downloads and by the legacy-config conversion
    of `ct login`.

    Args:
        body (StatementRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | StatementResult
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
