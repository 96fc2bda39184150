from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.chat_completion import ChatCompletion
from ...models.chat_completion_request import ChatCompletionRequest
from ...types import Response


def _get_kwargs(
    database: str,
    schema: str,
    endpoint: str,
    *,
    body: ChatCompletionRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/inference/v1/chat/completions".format(
            database=quote(str(database), safe=""),
            schema=quote(str(schema), safe=""),
            endpoint=quote(str(endpoint), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | ChatCompletion | None:
    if response.status_code == 200:
        response_200 = ChatCompletion.from_dict(response.json())

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
) -> Response[Any | ChatCompletion]:
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
    body: ChatCompletionRequest,
) -> Response[Any | ChatCompletion]:
    """OpenAI-compatible chat completion on a model deployment.

     `model` is the deployment id (sf-ct-<UUID>). With `stream: true` the answer is a text/event-stream
    of ChatCompletionChunk objects ending in `data: [DONE]`; read it with a streaming HTTP client, not
    the generated parser. Errors use the OpenAI error body (OpenAIErrorBody).

    Args:
        database (str):
        schema (str):
        endpoint (str):
        body (ChatCompletionRequest): An OpenAI chat completion request. max_tokens is rejected,
            use max_completion_tokens. The local server honours the options listed here
            (frequency_penalty and presence_penalty at 0 only) and answers any other one with 400
            unsupported_parameter naming it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ChatCompletion]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        body=body,
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
    body: ChatCompletionRequest,
) -> Any | ChatCompletion | None:
    """OpenAI-compatible chat completion on a model deployment.

     `model` is the deployment id (sf-ct-<UUID>). With `stream: true` the answer is a text/event-stream
    of ChatCompletionChunk objects ending in `data: [DONE]`; read it with a streaming HTTP client, not
    the generated parser. Errors use the OpenAI error body (OpenAIErrorBody).

    Args:
        database (str):
        schema (str):
        endpoint (str):
        body (ChatCompletionRequest): An OpenAI chat completion request. max_tokens is rejected,
            use max_completion_tokens. The local server honours the options listed here
            (frequency_penalty and presence_penalty at 0 only) and answers any other one with 400
            unsupported_parameter naming it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ChatCompletion
    """

    return sync_detailed(
        database=database,
        schema=schema,
        endpoint=endpoint,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: ChatCompletionRequest,
) -> Response[Any | ChatCompletion]:
    """OpenAI-compatible chat completion on a model deployment.

     `model` is the deployment id (sf-ct-<UUID>). With `stream: true` the answer is a text/event-stream
    of ChatCompletionChunk objects ending in `data: [DONE]`; read it with a streaming HTTP client, not
    the generated parser. Errors use the OpenAI error body (OpenAIErrorBody).

    Args:
        database (str):
        schema (str):
        endpoint (str):
        body (ChatCompletionRequest): An OpenAI chat completion request. max_tokens is rejected,
            use max_completion_tokens. The local server honours the options listed here
            (frequency_penalty and presence_penalty at 0 only) and answers any other one with 400
            unsupported_parameter naming it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ChatCompletion]
    """

    kwargs = _get_kwargs(
        database=database,
        schema=schema,
        endpoint=endpoint,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    database: str,
    schema: str,
    endpoint: str,
    *,
    client: AuthenticatedClient | Client,
    body: ChatCompletionRequest,
) -> Any | ChatCompletion | None:
    """OpenAI-compatible chat completion on a model deployment.

     `model` is the deployment id (sf-ct-<UUID>). With `stream: true` the answer is a text/event-stream
    of ChatCompletionChunk objects ending in `data: [DONE]`; read it with a streaming HTTP client, not
    the generated parser. Errors use the OpenAI error body (OpenAIErrorBody).

    Args:
        database (str):
        schema (str):
        endpoint (str):
        body (ChatCompletionRequest): An OpenAI chat completion request. max_tokens is rejected,
            use max_completion_tokens. The local server honours the options listed here
            (frequency_penalty and presence_penalty at 0 only) and answers any other one with 400
            unsupported_parameter naming it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ChatCompletion
    """

    return (
        await asyncio_detailed(
            database=database,
            schema=schema,
            endpoint=endpoint,
            client=client,
            body=body,
        )
    ).parsed
