from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.generate_stream_accepted import GenerateStreamAccepted
from ...types import UNSET, File, Response, Unset


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    *,
    body: File,
    sub_job_id: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["sub_job_id"] = sub_job_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/generate-stream".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
            job_id=quote(str(job_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["content"] = body.payload
    headers["Content-Type"] = "application/octet-stream"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | GenerateStreamAccepted | None:
    if response.status_code == 200:
        response_200 = GenerateStreamAccepted.from_dict(response.json())

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
) -> Response[Any | GenerateStreamAccepted]:
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
    *,
    client: AuthenticatedClient | Client,
    body: File,
    sub_job_id: str | Unset = UNSET,
) -> Response[Any | GenerateStreamAccepted]:
    """Start polling-based streaming generation from one DSSST1 frame (at most 60 MiB).

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        sub_job_id (str | Unset):
        body (File): A DSSST1 safetensors frame (u64 header length, JSON header, tensor bytes), or
            a DSSST1 request chunk of one. Never pickle.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | GenerateStreamAccepted]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
        body=body,
        sub_job_id=sub_job_id,
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
    *,
    client: AuthenticatedClient | Client,
    body: File,
    sub_job_id: str | Unset = UNSET,
) -> Any | GenerateStreamAccepted | None:
    """Start polling-based streaming generation from one DSSST1 frame (at most 60 MiB).

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        sub_job_id (str | Unset):
        body (File): A DSSST1 safetensors frame (u64 header length, JSON header, tensor bytes), or
            a DSSST1 request chunk of one. Never pickle.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | GenerateStreamAccepted
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
        client=client,
        body=body,
        sub_job_id=sub_job_id,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: File,
    sub_job_id: str | Unset = UNSET,
) -> Response[Any | GenerateStreamAccepted]:
    """Start polling-based streaming generation from one DSSST1 frame (at most 60 MiB).

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        sub_job_id (str | Unset):
        body (File): A DSSST1 safetensors frame (u64 header length, JSON header, tensor bytes), or
            a DSSST1 request chunk of one. Never pickle.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | GenerateStreamAccepted]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        job_id=job_id,
        body=body,
        sub_job_id=sub_job_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: File,
    sub_job_id: str | Unset = UNSET,
) -> Any | GenerateStreamAccepted | None:
    """Start polling-based streaming generation from one DSSST1 frame (at most 60 MiB).

    Args:
        database (str):
        schema (str):
        endpoint (str):
        job_id (str):
        sub_job_id (str | Unset):
        body (File): A DSSST1 safetensors frame (u64 header length, JSON header, tensor bytes), or
            a DSSST1 request chunk of one. Never pickle.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | GenerateStreamAccepted
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            job_id=job_id,
            client=client,
            body=body,
            sub_job_id=sub_job_id,
        )
    ).parsed
