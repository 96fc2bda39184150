from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.run import Run
from ...models.run_spec import RunSpec
from ...types import UNSET, Response, Unset


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    *,
    body: RunSpec,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/runs".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Run | None:
    if response.status_code == 200:
        response_200 = Run.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = Run.from_dict(response.json())

        return response_201

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
    *,
    client: AuthenticatedClient | Client,
    body: RunSpec,
    idempotency_key: str | Unset = UNSET,
) -> Response[Any | Run]:
    """Start a training run on a succeeded dataset build.

     The spec is assembled into a canonical run config whose SHA-256 is the run's config_fingerprint.
    With an Idempotency-Key the service has seen from this caller in this schema, the run that key
    started is answered (200) as it is now, whatever happened to it meanwhile, and nothing new starts;
    the same key with another spec answers `already_exists`. Without a known key, a queued or running
    run with the same fingerprint is answered (200). Clients send one key per call on every attempt, so
    a retry after a lost answer never starts a second run. A dataset that failed its leakage gates
    answers `failed_precondition`; an unknown key or a value out of bounds answers `invalid_argument`
    naming it in `field`.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        idempotency_key (str | Unset):
        body (RunSpec): What to train. Unknown keys are refused with invalid_argument naming them.
            Omitted `labels` means every label of the dataset; an empty list means none (self-
            supervised only).

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
        body=body,
        idempotency_key=idempotency_key,
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
    body: RunSpec,
    idempotency_key: str | Unset = UNSET,
) -> Any | Run | None:
    """Start a training run on a succeeded dataset build.

     The spec is assembled into a canonical run config whose SHA-256 is the run's config_fingerprint.
    With an Idempotency-Key the service has seen from this caller in this schema, the run that key
    started is answered (200) as it is now, whatever happened to it meanwhile, and nothing new starts;
    the same key with another spec answers `already_exists`. Without a known key, a queued or running
    run with the same fingerprint is answered (200). Clients send one key per call on every attempt, so
    a retry after a lost answer never starts a second run. A dataset that failed its leakage gates
    answers `failed_precondition`; an unknown key or a value out of bounds answers `invalid_argument`
    naming it in `field`.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        idempotency_key (str | Unset):
        body (RunSpec): What to train. Unknown keys are refused with invalid_argument naming them.
            Omitted `labels` means every label of the dataset; an empty list means none (self-
            supervised only).

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
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: RunSpec,
    idempotency_key: str | Unset = UNSET,
) -> Response[Any | Run]:
    """Start a training run on a succeeded dataset build.

     The spec is assembled into a canonical run config whose SHA-256 is the run's config_fingerprint.
    With an Idempotency-Key the service has seen from this caller in this schema, the run that key
    started is answered (200) as it is now, whatever happened to it meanwhile, and nothing new starts;
    the same key with another spec answers `already_exists`. Without a known key, a queued or running
    run with the same fingerprint is answered (200). Clients send one key per call on every attempt, so
    a retry after a lost answer never starts a second run. A dataset that failed its leakage gates
    answers `failed_precondition`; an unknown key or a value out of bounds answers `invalid_argument`
    naming it in `field`.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        idempotency_key (str | Unset):
        body (RunSpec): What to train. Unknown keys are refused with invalid_argument naming them.
            Omitted `labels` means every label of the dataset; an empty list means none (self-
            supervised only).

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
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: RunSpec,
    idempotency_key: str | Unset = UNSET,
) -> Any | Run | None:
    """Start a training run on a succeeded dataset build.

     The spec is assembled into a canonical run config whose SHA-256 is the run's config_fingerprint.
    With an Idempotency-Key the service has seen from this caller in this schema, the run that key
    started is answered (200) as it is now, whatever happened to it meanwhile, and nothing new starts;
    the same key with another spec answers `already_exists`. Without a known key, a queued or running
    run with the same fingerprint is answered (200). Clients send one key per call on every attempt, so
    a retry after a lost answer never starts a second run. A dataset that failed its leakage gates
    answers `failed_precondition`; an unknown key or a value out of bounds answers `invalid_argument`
    naming it in `field`.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        idempotency_key (str | Unset):
        body (RunSpec): What to train. Unknown keys are refused with invalid_argument naming them.
            Omitted `labels` means every label of the dataset; an empty list means none (self-
            supervised only).

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
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
