from http import HTTPStatus
from io import BytesIO
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...types import File, Response


def _get_kwargs(
    experiment_name: str,
    run_name: str,
    artifact_path: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/_artifacts/{experiment_name}/{run_name}/{artifact_path}".format(
            experiment_name=quote(str(experiment_name), safe=""),
            run_name=quote(str(run_name), safe=""),
            artifact_path=quote(str(artifact_path), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | File | None:
    if response.status_code == 200:
        response_200 = File(payload=BytesIO(response.content))

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | File]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    experiment_name: str,
    run_name: str,
    artifact_path: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | File]:
    """One artifact file of an experiment run kept by the embedded local server.

    Args:
        experiment_name (str):
        run_name (str):
        artifact_path (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | File]
    """

    kwargs = _get_kwargs(
        experiment_name=experiment_name,
        run_name=run_name,
        artifact_path=artifact_path,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    experiment_name: str,
    run_name: str,
    artifact_path: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | File | None:
    """One artifact file of an experiment run kept by the embedded local server.

    Args:
        experiment_name (str):
        run_name (str):
        artifact_path (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | File
    """

    return sync_detailed(
        experiment_name=experiment_name,
        run_name=run_name,
        artifact_path=artifact_path,
        client=client,
    ).parsed


async def asyncio_detailed(
    experiment_name: str,
    run_name: str,
    artifact_path: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | File]:
    """One artifact file of an experiment run kept by the embedded local server.

    Args:
        experiment_name (str):
        run_name (str):
        artifact_path (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | File]
    """

    kwargs = _get_kwargs(
        experiment_name=experiment_name,
        run_name=run_name,
        artifact_path=artifact_path,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    experiment_name: str,
    run_name: str,
    artifact_path: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | File | None:
    """One artifact file of an experiment run kept by the embedded local server.

    Args:
        experiment_name (str):
        run_name (str):
        artifact_path (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | File
    """

    return (
        await asyncio_detailed(
            experiment_name=experiment_name,
            run_name=run_name,
            artifact_path=artifact_path,
            client=client,
        )
    ).parsed
