from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.local_artifact_listing import LocalArtifactListing
from ...types import UNSET, Response, Unset


def _get_kwargs(
    experiment_name: str,
    run_name: str,
    *,
    prefix: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["prefix"] = prefix

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/_artifacts/{experiment_name}/{run_name}".format(
            experiment_name=quote(str(experiment_name), safe=""),
            run_name=quote(str(run_name), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | LocalArtifactListing | None:
    if response.status_code == 200:
        response_200 = LocalArtifactListing.from_dict(response.json())

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
) -> Response[Any | LocalArtifactListing]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    experiment_name: str,
    run_name: str,
    *,
    client: AuthenticatedClient | Client,
    prefix: str | Unset = UNSET,
) -> Response[Any | LocalArtifactListing]:
    """The artifact files of an experiment run kept by the embedded local server.

     ct_local only: the stand-in for the experiment stage that a Snowflake account lists with the
    Connector. Answers the files whose names start with `prefix`.

    Args:
        experiment_name (str):
        run_name (str):
        prefix (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | LocalArtifactListing]
    """

    kwargs = _get_kwargs(
        experiment_name=experiment_name,
        run_name=run_name,
        prefix=prefix,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    experiment_name: str,
    run_name: str,
    *,
    client: AuthenticatedClient | Client,
    prefix: str | Unset = UNSET,
) -> Any | LocalArtifactListing | None:
    """The artifact files of an experiment run kept by the embedded local server.

     ct_local only: the stand-in for the experiment stage that a Snowflake account lists with the
    Connector. Answers the files whose names start with `prefix`.

    Args:
        experiment_name (str):
        run_name (str):
        prefix (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | LocalArtifactListing
    """

    return sync_detailed(
        experiment_name=experiment_name,
        run_name=run_name,
        client=client,
        prefix=prefix,
    ).parsed


async def asyncio_detailed(
    experiment_name: str,
    run_name: str,
    *,
    client: AuthenticatedClient | Client,
    prefix: str | Unset = UNSET,
) -> Response[Any | LocalArtifactListing]:
    """The artifact files of an experiment run kept by the embedded local server.

     ct_local only: the stand-in for the experiment stage that a Snowflake account lists with the
    Connector. Answers the files whose names start with `prefix`.

    Args:
        experiment_name (str):
        run_name (str):
        prefix (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | LocalArtifactListing]
    """

    kwargs = _get_kwargs(
        experiment_name=experiment_name,
        run_name=run_name,
        prefix=prefix,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    experiment_name: str,
    run_name: str,
    *,
    client: AuthenticatedClient | Client,
    prefix: str | Unset = UNSET,
) -> Any | LocalArtifactListing | None:
    """The artifact files of an experiment run kept by the embedded local server.

     ct_local only: the stand-in for the experiment stage that a Snowflake account lists with the
    Connector. Answers the files whose names start with `prefix`.

    Args:
        experiment_name (str):
        run_name (str):
        prefix (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | LocalArtifactListing
    """

    return (
        await asyncio_detailed(
            experiment_name=experiment_name,
            run_name=run_name,
            client=client,
            prefix=prefix,
        )
    ).parsed
