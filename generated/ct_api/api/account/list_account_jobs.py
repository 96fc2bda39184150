from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.account_job_page import AccountJobPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    endpoint: str,
    *,
    database: str | Unset = UNSET,
    schema: str | Unset = UNSET,
    status: str | Unset = UNSET,
    submitted_by: str | Unset = UNSET,
    created_after: str | Unset = UNSET,
    created_before: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["database"] = database

    params["schema"] = schema

    params["status"] = status

    params["submitted_by"] = submitted_by

    params["created_after"] = created_after

    params["created_before"] = created_before

    params["limit"] = limit

    params["page_token"] = page_token

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/{endpoint}".format(
            endpoint=quote(str(endpoint), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AccountJobPage | Any | None:
    if response.status_code == 200:
        response_200 = AccountJobPage.from_dict(response.json())

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
) -> Response[AccountJobPage | Any]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    database: str | Unset = UNSET,
    schema: str | Unset = UNSET,
    status: str | Unset = UNSET,
    submitted_by: str | Unset = UNSET,
    created_after: str | Unset = UNSET,
    created_before: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> Response[AccountJobPage | Any]:
    """One page of the jobs the caller can see across the account, newest first.

     Keep requesting while next_page_token is present, even after a short or empty page, sending the
    token back with the same filters. 403: Cortex Training is not enabled (or a proxy refused); 404 with
    an empty body: the route is not deployed; 404 with a JSON message: account-level listing is not
    enabled; 405 with an empty body: the REST API is off for the account; 400 Invalid page_token: start
    again from the first page.

    Args:
        endpoint (str):
        database (str | Unset):
        schema (str | Unset):
        status (str | Unset):
        submitted_by (str | Unset):
        created_after (str | Unset):
        created_before (str | Unset):
        limit (int | Unset):
        page_token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AccountJobPage | Any]
    """

    kwargs = _get_kwargs(
        endpoint=endpoint,
        database=database,
        schema=schema,
        status=status,
        submitted_by=submitted_by,
        created_after=created_after,
        created_before=created_before,
        limit=limit,
        page_token=page_token,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    database: str | Unset = UNSET,
    schema: str | Unset = UNSET,
    status: str | Unset = UNSET,
    submitted_by: str | Unset = UNSET,
    created_after: str | Unset = UNSET,
    created_before: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> AccountJobPage | Any | None:
    """One page of the jobs the caller can see across the account, newest first.

     Keep requesting while next_page_token is present, even after a short or empty page, sending the
    token back with the same filters. 403: Cortex Training is not enabled (or a proxy refused); 404 with
    an empty body: the route is not deployed; 404 with a JSON message: account-level listing is not
    enabled; 405 with an empty body: the REST API is off for the account; 400 Invalid page_token: start
    again from the first page.

    Args:
        endpoint (str):
        database (str | Unset):
        schema (str | Unset):
        status (str | Unset):
        submitted_by (str | Unset):
        created_after (str | Unset):
        created_before (str | Unset):
        limit (int | Unset):
        page_token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AccountJobPage | Any
    """

    return sync_detailed(
        endpoint=endpoint,
        client=client,
        database=database,
        schema=schema,
        status=status,
        submitted_by=submitted_by,
        created_after=created_after,
        created_before=created_before,
        limit=limit,
        page_token=page_token,
    ).parsed


async def asyncio_detailed(
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    database: str | Unset = UNSET,
    schema: str | Unset = UNSET,
    status: str | Unset = UNSET,
    submitted_by: str | Unset = UNSET,
    created_after: str | Unset = UNSET,
    created_before: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> Response[AccountJobPage | Any]:
    """One page of the jobs the caller can see across the account, newest first.

     Keep requesting while next_page_token is present, even after a short or empty page, sending the
    token back with the same filters. 403: Cortex Training is not enabled (or a proxy refused); 404 with
    an empty body: the route is not deployed; 404 with a JSON message: account-level listing is not
    enabled; 405 with an empty body: the REST API is off for the account; 400 Invalid page_token: start
    again from the first page.

    Args:
        endpoint (str):
        database (str | Unset):
        schema (str | Unset):
        status (str | Unset):
        submitted_by (str | Unset):
        created_after (str | Unset):
        created_before (str | Unset):
        limit (int | Unset):
        page_token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AccountJobPage | Any]
    """

    kwargs = _get_kwargs(
        endpoint=endpoint,
        database=database,
        schema=schema,
        status=status,
        submitted_by=submitted_by,
        created_after=created_after,
        created_before=created_before,
        limit=limit,
        page_token=page_token,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    database: str | Unset = UNSET,
    schema: str | Unset = UNSET,
    status: str | Unset = UNSET,
    submitted_by: str | Unset = UNSET,
    created_after: str | Unset = UNSET,
    created_before: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> AccountJobPage | Any | None:
    """One page of the jobs the caller can see across the account, newest first.

     Keep requesting while next_page_token is present, even after a short or empty page, sending the
    token back with the same filters. 403: Cortex Training is not enabled (or a proxy refused); 404 with
    an empty body: the route is not deployed; 404 with a JSON message: account-level listing is not
    enabled; 405 with an empty body: the REST API is off for the account; 400 Invalid page_token: start
    again from the first page.

    Args:
        endpoint (str):
        database (str | Unset):
        schema (str | Unset):
        status (str | Unset):
        submitted_by (str | Unset):
        created_after (str | Unset):
        created_before (str | Unset):
        limit (int | Unset):
        page_token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AccountJobPage | Any
    """

    return (
        await asyncio_detailed(
            endpoint=endpoint,
            client=client,
            database=database,
            schema=schema,
            status=status,
            submitted_by=submitted_by,
            created_after=created_after,
            created_before=created_before,
            limit=limit,
            page_token=page_token,
        )
    ).parsed
