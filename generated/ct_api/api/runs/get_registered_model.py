from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.registered_model import RegisteredModel
from ...types import Response


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    model_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/models/{model_id}".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            model_id=quote(str(model_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | RegisteredModel | None:
    if response.status_code == 200:
        response_200 = RegisteredModel.from_dict(response.json())

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
) -> Response[Any | RegisteredModel]:
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
    model_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | RegisteredModel]:
    """The model version a succeeded run registered.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        model_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RegisteredModel]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        model_id=model_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    database: str,
    schema: str,
    endpoint: str,
    model_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | RegisteredModel | None:
    """The model version a succeeded run registered.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        model_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RegisteredModel
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        model_id=model_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    model_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | RegisteredModel]:
    """The model version a succeeded run registered.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        model_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RegisteredModel]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        model_id=model_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    model_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | RegisteredModel | None:
    """The model version a succeeded run registered.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        model_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RegisteredModel
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            model_id=model_id,
            client=client,
        )
    ).parsed
