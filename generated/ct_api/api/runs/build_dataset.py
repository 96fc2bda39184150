from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.dataset import Dataset
from ...types import UNSET, File, Response, Unset


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    *,
    body: File,
    text_field: str | Unset = "text",
    label_field: list[str] | Unset = UNSET,
    val_fraction: float | Unset = 0.1,
    seed: int | Unset = 0,
    name: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["text_field"] = text_field

    json_label_field: list[str] | Unset = UNSET
    if not isinstance(label_field, Unset):
        json_label_field = label_field

    params["label_field"] = json_label_field

    params["val_fraction"] = val_fraction

    params["seed"] = seed

    params["name"] = name

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/datasets".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
        ),
        "params": params,
    }

    _kwargs["content"] = body.payload
    headers["Content-Type"] = "application/x-ndjson"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Dataset | None:
    if response.status_code == 202:
        response_202 = Dataset.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Dataset]:
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
    body: File,
    text_field: str | Unset = "text",
    label_field: list[str] | Unset = UNSET,
    val_fraction: float | Unset = 0.1,
    seed: int | Unset = 0,
    name: str | Unset = UNSET,
) -> Response[Any | Dataset]:
    """Upload a JSONL file and start building a dataset from it.

     The body is the JSONL file itself, one JSON object per line. The build splits the rows into train
    and validation deterministically by seed, fingerprints each split and runs the leakage gates (exact
    and near duplicates across the splits); poll getDataset until its status leaves `building`. Not
    retried by clients unless the request never left the machine: a repeated upload builds a second
    dataset.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        text_field (str | Unset):  Default: 'text'.
        label_field (list[str] | Unset):
        val_fraction (float | Unset):  Default: 0.1.
        seed (int | Unset):  Default: 0.
        name (str | Unset):
        body (File): A JSONL file, one JSON object per line, sent as it is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Dataset]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        body=body,
        text_field=text_field,
        label_field=label_field,
        val_fraction=val_fraction,
        seed=seed,
        name=name,
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
    body: File,
    text_field: str | Unset = "text",
    label_field: list[str] | Unset = UNSET,
    val_fraction: float | Unset = 0.1,
    seed: int | Unset = 0,
    name: str | Unset = UNSET,
) -> Any | Dataset | None:
    """Upload a JSONL file and start building a dataset from it.

     The body is the JSONL file itself, one JSON object per line. The build splits the rows into train
    and validation deterministically by seed, fingerprints each split and runs the leakage gates (exact
    and near duplicates across the splits); poll getDataset until its status leaves `building`. Not
    retried by clients unless the request never left the machine: a repeated upload builds a second
    dataset.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        text_field (str | Unset):  Default: 'text'.
        label_field (list[str] | Unset):
        val_fraction (float | Unset):  Default: 0.1.
        seed (int | Unset):  Default: 0.
        name (str | Unset):
        body (File): A JSONL file, one JSON object per line, sent as it is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Dataset
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        client=client,
        body=body,
        text_field=text_field,
        label_field=label_field,
        val_fraction=val_fraction,
        seed=seed,
        name=name,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: File,
    text_field: str | Unset = "text",
    label_field: list[str] | Unset = UNSET,
    val_fraction: float | Unset = 0.1,
    seed: int | Unset = 0,
    name: str | Unset = UNSET,
) -> Response[Any | Dataset]:
    """Upload a JSONL file and start building a dataset from it.

     The body is the JSONL file itself, one JSON object per line. The build splits the rows into train
    and validation deterministically by seed, fingerprints each split and runs the leakage gates (exact
    and near duplicates across the splits); poll getDataset until its status leaves `building`. Not
    retried by clients unless the request never left the machine: a repeated upload builds a second
    dataset.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        text_field (str | Unset):  Default: 'text'.
        label_field (list[str] | Unset):
        val_fraction (float | Unset):  Default: 0.1.
        seed (int | Unset):  Default: 0.
        name (str | Unset):
        body (File): A JSONL file, one JSON object per line, sent as it is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Dataset]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        body=body,
        text_field=text_field,
        label_field=label_field,
        val_fraction=val_fraction,
        seed=seed,
        name=name,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: File,
    text_field: str | Unset = "text",
    label_field: list[str] | Unset = UNSET,
    val_fraction: float | Unset = 0.1,
    seed: int | Unset = 0,
    name: str | Unset = UNSET,
) -> Any | Dataset | None:
    """Upload a JSONL file and start building a dataset from it.

     The body is the JSONL file itself, one JSON object per line. The build splits the rows into train
    and validation deterministically by seed, fingerprints each split and runs the leakage gates (exact
    and near duplicates across the splits); poll getDataset until its status leaves `building`. Not
    retried by clients unless the request never left the machine: a repeated upload builds a second
    dataset.

    Args:
        database (str):
        schema (str):
        endpoint (str):
        text_field (str | Unset):  Default: 'text'.
        label_field (list[str] | Unset):
        val_fraction (float | Unset):  Default: 0.1.
        seed (int | Unset):  Default: 0.
        name (str | Unset):
        body (File): A JSONL file, one JSON object per line, sent as it is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Dataset
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            client=client,
            body=body,
            text_field=text_field,
            label_field=label_field,
            val_fraction=val_fraction,
            seed=seed,
            name=name,
        )
    ).parsed
