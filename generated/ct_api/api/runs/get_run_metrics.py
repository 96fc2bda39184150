from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.run_metrics import RunMetrics
from ...types import UNSET, Response, Unset


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    run_id: str,
    *,
    after_step: int | Unset = -1,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["after_step"] = after_step

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs/{run_id}/metrics".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            run_id=quote(str(run_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | RunMetrics | None:
    if response.status_code == 200:
        response_200 = RunMetrics.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | RunMetrics]:
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
    after_step: int | Unset = -1,
) -> Response[Any | RunMetrics]:
    """The run's metric series, from a step on.

     Every point with a step greater than after_step, per series. Poll with after_step set to the
    previous answer's cursor to read only what is new.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):
        after_step (int | Unset):  Default: -1.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RunMetrics]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
        after_step=after_step,
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
    after_step: int | Unset = -1,
) -> Any | RunMetrics | None:
    """The run's metric series, from a step on.

     Every point with a step greater than after_step, per series. Poll with after_step set to the
    previous answer's cursor to read only what is new.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):
        after_step (int | Unset):  Default: -1.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RunMetrics
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
        client=client,
        after_step=after_step,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_step: int | Unset = -1,
) -> Response[Any | RunMetrics]:
    """The run's metric series, from a step on.

     Every point with a step greater than after_step, per series. Poll with after_step set to the
    previous answer's cursor to read only what is new.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):
        after_step (int | Unset):  Default: -1.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | RunMetrics]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        run_id=run_id,
        after_step=after_step,
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
    after_step: int | Unset = -1,
) -> Any | RunMetrics | None:
    """The run's metric series, from a step on.

     Every point with a step greater than after_step, per series. Poll with after_step set to the
    previous answer's cursor to read only what is new.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        run_id (str):
        after_step (int | Unset):  Default: -1.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | RunMetrics
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            run_id=run_id,
            client=client,
            after_step=after_step,
        )
    ).parsed
