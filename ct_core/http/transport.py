"""The one request path of an SDK client: `Transport.request()`.

Every REST call of ct — control plane, data plane, operations, generation, polling, statements,
deployments — is one call of `Transport.request(operation_id, ...)` (or `Transport.stream(...)` for
an answer read as it arrives). That call is the only place that

- builds the URL, from the route table generated out of openapi/ (`ct_core.http.routes`);
- applies the per-call timeout (a number or a (connect, read) pair; capacity's shorter bound);
- signs the request: fixed headers (a token) or the live header of a Snowflake session;
- refuses redirects (a 3xx is an error, never followed) and turns any answer that is not a 2xx
  into the matching `APIError` (a 401 to a request the client signed with a programmatic access
  token becomes `PATRejectedError`, with next steps);
- runs the retry policy of `ct_core.http.retry`, with the caller's rule for which failures may be
  retried (`predicate`), and renews an expired Snowflake session once.

The bytes travel over `ct_core.http.pool`, one pool per client: standard-library connections
(`ct_core.http.direct`), or httpcore's when the environment names a proxy.
"""

from __future__ import annotations

import json
import logging
import math
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol, cast

from ct_core import errors
from ct_core.constants import (
    CAPACITY_CONNECT_TIMEOUT,
    CAPACITY_READ_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    PAT_TOKEN_TYPE,
    REQUEST_ID_HEADER,
    TOKEN_TYPE_HEADER,
)
from ct_core.errors import authorization_secrets, remember_secrets
from ct_core.http import retry as _retry
from ct_core.http.pool import Body, Headers, Pool, Road, Timeouts, header_value
from ct_core.http.routes import Routes
from ct_core.version import __version__

logger = logging.getLogger("ct_core.transport")

TimeoutPair = tuple[float, float]
USER_AGENT = f"ct/{__version__}"
JSON_CONTENT_TYPE = "application/json"
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_JSON_CONTENT_TYPE_HEADER = (b"Content-Type", JSON_CONTENT_TYPE.encode("ascii"))
#: Built once: `json.dumps` with options builds a new encoder on every call.
_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_JSON_DECODER = json.JSONDecoder()
#: The first byte of a JSON object or array in UTF-8 with no byte-order mark: the fast decode applies.
_JSON_OPENERS = frozenset(b"{[")


class AuthProvider(Protocol):
    """Something that signs requests whose credential can change (a Snowflake session)."""

    def authorization(self) -> str:
        """The value of the Authorization header for the next request, from the live credential."""

    def refresh_after(self, error: errors.APIError, signed_with: str | None = None) -> bool:
        """Renew the credential when `error` says it expired; True when the request may be replayed.

        `signed_with` is the Authorization value the failed request carried: when the credential has
        changed since (another thread renewed it), the provider replays without renewing again.
        """


@dataclass(slots=True)
class Response:
    """A finished 2xx answer: status, headers as sent, whole body."""

    status_code: int
    headers: Headers
    content: bytes

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    def json(self) -> Any:
        """The body as JSON; None for an empty body."""
        content = self.content
        if content and content[0] in _JSON_OPENERS:
            # Plain UTF-8 (what a service sends): skip `json.loads`'s encoding detection.
            text = content.decode("utf-8", "surrogatepass")
            value, end = _JSON_DECODER.raw_decode(text)
            if end != len(text) and text[end:].strip(" \t\n\r"):
                raise json.JSONDecodeError("Extra data", text, end)
            return value
        return json.loads(content) if content.strip() else None


@dataclass
class StreamedResponse:
    """A 2xx answer whose body is read as it arrives (inside `Transport.stream`)."""

    status_code: int
    headers: Headers
    blocks: Iterator[bytes] = field(repr=False)

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    def iter_bytes(self) -> Iterator[bytes]:
        return self.blocks

    def iter_lines(self) -> Iterator[str]:
        """The body's lines, decoded as UTF-8, without their line endings."""
        pending = b""
        for block in self.blocks:
            pending += block
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line.rstrip(b"\r").decode("utf-8", "replace")
        if pending:
            yield pending.rstrip(b"\r").decode("utf-8", "replace")

    def iter_sse(self) -> Iterator[Any]:
        """The body as server-sent events (httpx-sse's `ServerSentEvent`: `.event`, `.data`, `.id`)."""
        from ct_core.http.sse import iter_sse

        return iter_sse(self.status_code, self.headers, self.blocks)


def validate_request_timeout(value: Any) -> TimeoutPair:
    """Normalize `request_timeout` (a positive number, or a (connect, read) pair) or raise ValueError."""

    def positive(item: Any) -> bool:
        return (
            isinstance(item, (int, float)) and not isinstance(item, bool) and math.isfinite(item) and item > 0
        )

    if positive(value):
        return (float(value), float(value))
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(positive(v) for v in value):
        return (float(value[0]), float(value[1]))
    raise ValueError(
        "request_timeout must be a positive finite number of seconds, or a (connect, read) pair of them; "
        f"got {value!r}"
    )


def capacity_timeout(configured: TimeoutPair) -> TimeoutPair:
    """The capacity lookup's bound: at most 10 s connect / 30 s read; a shorter configured value wins."""
    return (min(configured[0], CAPACITY_CONNECT_TIMEOUT), min(configured[1], CAPACITY_READ_TIMEOUT))


def _timeouts(pair: TimeoutPair | None) -> Timeouts:
    connect, read = pair if pair is not None else (None, None)
    # Writing a request body and waiting for a pooled connection are bounded by the read timeout.
    return {"connect": connect, "read": read, "write": read, "pool": read}


def _trace(line: str) -> None:
    # Redacted by value and by pattern: a trace line never shows a credential this process holds.
    logger.debug("%s", errors.redact_known(line))


def _trace_attempt(
    label: str,
    number: int,
    attempts: int,
    method: str,
    path: str,
    *,
    answer: Response | None = None,
    error: BaseException | None = None,
) -> None:
    """One DEBUG line for one attempt of a traced request: its number, the request line (path
    only: no query, no header), then the status and the service's request id, or how it failed."""
    head = f"{label} attempt={number}/{attempts} {method} {path}"
    if answer is not None:
        request_id = answer.header(REQUEST_ID_HEADER)
        tail = f"status={answer.status_code}" + (f" snowflake_request_id={request_id}" if request_id else "")
    elif isinstance(error, errors.APIError):
        tail = f"status={error.status_code} failed: {type(error).__name__}"
        tail += (f" code={error.code}" if error.code else "") + (
            f" snowflake_request_id={error.request_id}" if error.request_id else ""
        )
    else:
        tail = f"failed: {type(error).__name__}: {errors.shorten(str(error), 200)}"
    _trace(f"{head} {tail}")


def _encode_headers(headers: Mapping[str, str]) -> Headers:
    return [(key.encode("latin-1"), value.encode("latin-1")) for key, value in headers.items()]


class _Shared:
    """What every view of one transport shares: the pool, the credential, the retry memory."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str],
        verify: bool | str | ssl.SSLContext,
        timeout: TimeoutPair,
        pool_maxsize: int,
        max_retries: int,
        auth: AuthProvider | None,
        sleep: Callable[[float], None] | None,
        road: Road | None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.pool = Pool(self.base_url, verify=verify, max_connections=pool_maxsize, road=road)
        fixed = {"User-Agent": USER_AGENT, "Accept": "*/*", **headers}
        self.headers = dict(fixed)
        self.raw_headers = _encode_headers(fixed)
        self.timeout = timeout
        self.default_timeouts = _timeouts(timeout)
        self.policy = _retry.RetryPolicy(max_retries=max_retries)
        self.auth = auth
        self.recent_jobs = _retry.RecentJobs()
        self.sleep: Callable[[float], None] = sleep or time.sleep
        # A PAT this client signs with itself gets next steps on a 401; a profile session (an auth
        # provider) signed in already, so its 401 means something else (usually expiry).
        self.direct_pat = auth is None and fixed.get(TOKEN_TYPE_HEADER) == PAT_TOKEN_TYPE


class Transport:
    """The request policy and connections of one SDK client, bound to a database/schema/endpoint.

    `bind()` gives a view with other path defaults that shares everything else (connections,
    credential, retry memory); closing a view closes nothing.
    """

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        verify: bool | str | ssl.SSLContext = True,
        timeout: TimeoutPair = (DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT),
        pool_maxsize: int = 10,
        max_retries: int = 0,
        auth: AuthProvider | None = None,
        sleep: Callable[[float], None] | None = None,
        path_defaults: Mapping[str, str] | None = None,
        road: Road | None = None,
    ) -> None:
        fixed = dict(headers or {})
        # The credential is known from here on, so no error text or `ct` line can show it.
        remember_secrets(
            s for k, v in fixed.items() if k.lower() == "authorization" for s in authorization_secrets(v)
        )
        self._shared = _Shared(
            base_url,
            headers=fixed,
            verify=verify,
            timeout=timeout,
            pool_maxsize=pool_maxsize,
            max_retries=max_retries,
            auth=auth,
            sleep=sleep,
            road=road,
        )
        self.routes = Routes(path_defaults or {})
        self._owner = True

    # --- views and properties ------------------------------------------------------------------

    def bind(self, **path_defaults: str) -> Transport:
        """A view with these path parameters (database, schema, endpoint) filled in by default."""
        view = Transport.__new__(Transport)
        view._shared = self._shared
        view.routes = Routes({**self.routes.defaults, **path_defaults})
        view._owner = False
        return view

    @property
    def base_url(self) -> str:
        return self._shared.base_url

    @property
    def timeout(self) -> TimeoutPair:
        return self._shared.timeout

    @property
    def auth(self) -> AuthProvider | None:
        return self._shared.auth

    @property
    def recent_jobs(self) -> _retry.RecentJobs:
        """Jobs this client created lately: their 404s are a moment of invisibility, retried."""
        return self._shared.recent_jobs

    @property
    def sleep(self) -> Callable[[float], None]:
        return self._shared.sleep

    def header(self, name: str) -> str | None:
        """A fixed header this transport sends (never a live session token)."""
        wanted = name.lower()
        return next((v for k, v in self._shared.headers.items() if k.lower() == wanted), None)

    def url(self, operation: str, params: Mapping[str, Any] | None = None) -> str:
        """The absolute URL of an operation (path parameters filled, no query)."""
        return self._shared.pool.url(self.routes.target(operation, params or {}, None))

    # --- the request ---------------------------------------------------------------------------

    def _headers(self, extra: Headers) -> tuple[Headers, str | None]:
        shared = self._shared
        headers = shared.raw_headers + extra if extra else shared.raw_headers
        if shared.auth is None:
            return headers, None
        signature = shared.auth.authorization()
        remember_secrets(authorization_secrets(signature))
        return [*headers, (b"Authorization", signature.encode("latin-1"))], signature

    def _check(
        self,
        method: str,
        target: str,
        status: int,
        headers: Headers,
        content: bytes,
        sent: Headers,
        started: float,
    ) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            request_id = header_value(headers, REQUEST_ID_HEADER)
            if request_id:
                logger.debug("snowflake request_id=%s  %s %s  status=%d", request_id, method, target, status)
        if 200 <= status < 300:
            return
        # A refused request: the APIError carries ct's own copy of the answer (`started` is when it
        # was sent, for `.elapsed`), built from the bytes already read; no other HTTP library.
        request = errors.ErrorRequest(method, self._shared.pool.url(target), sent)
        response = errors.ErrorResponse(
            status,
            headers=headers,
            content=content,
            request=request,
            elapsed=timedelta(seconds=max(time.monotonic() - started, 0.0)),
        )
        raise errors.api_error_from_response(response, direct_pat=self._shared.direct_pat)

    def _prepare(
        self,
        operation: str,
        params: Mapping[str, Any] | None,
        query: Mapping[str, Any] | None,
        json_body: Any,
        content: Body | Callable[[], Body] | None,
        length: int | None,
        content_type: str | None,
        headers: Mapping[str, str] | None,
    ) -> tuple[str, str, Headers, Body | Callable[[], Body] | None]:
        """Method, request target, the call's own headers and the body, for one operation."""
        method = self.routes.method(operation)
        target = self.routes.target(operation, params or {}, query)
        extra: Headers = _encode_headers(headers) if headers else []
        if json_body is not None:
            content = _JSON_ENCODER.encode(json_body).encode("utf-8")
            content_type = JSON_CONTENT_TYPE
        if content_type == JSON_CONTENT_TYPE:
            extra.append(_JSON_CONTENT_TYPE_HEADER)
        elif content_type is not None:
            extra.append((b"Content-Type", content_type.encode("latin-1")))
        if content is not None:
            size = len(content) if isinstance(content, bytes) else length
            if size is None:
                raise ValueError("a streamed request body needs its length")
            extra.append((b"Content-Length", str(size).encode("ascii")))
        elif method in _BODY_METHODS:
            # Gateways refuse a POST that declares no length; an empty body says 0.
            extra.append((b"Content-Length", b"0"))
        return method, target, extra, content

    def request(
        self,
        operation: str,
        *,
        params: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
        json_body: Any = None,
        content: Body | Callable[[], Body] | None = None,
        length: int | None = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        predicate: _retry.Predicate | None = None,
        retry: str = "read",
        job_id: str | None = None,
        timeout: TimeoutPair | None = None,
        max_retries: int | None = None,
        trace: str | None = None,
    ) -> Response:
        """Send one REST operation (by its operationId) under the retry policy; return its 2xx answer.

        `params` fills the path template over the bound defaults; `query` (None values left out) the
        query string. The body is `json_body` (serialized once), or `content`: bytes, an iterable of
        byte slices with its `length`, or a callable returning a fresh iterable per attempt.
        `predicate` says which failures are retried; without one, the rule named `retry` applies (a
        key of `ct_core.http.retry.RULES`, what the spec's `x-ct-retry` names for the operation; by
        default the general rule), with the 404 grace for `job_id`. `timeout` and `max_retries`
        override the client's for this call. With `trace` (a label such as `[ct fwd-bwd] call=3 ...`)
        and DEBUG logging on, each attempt and retry wait is logged under that label (see
        `_trace_attempt`).
        """
        shared = self._shared
        method, target, extra, content = self._prepare(
            operation, params, query, json_body, content, length, content_type, headers
        )
        timeouts = shared.default_timeouts if timeout is None else _timeouts(timeout)
        if predicate is None:
            predicate = _retry.rule(retry, job_id=job_id, recent_jobs=shared.recent_jobs)
        policy = shared.policy if max_retries is None else _retry.RetryPolicy(max_retries=max_retries)
        replayed_auth = False

        def once(sent: Headers) -> Response:
            body = content() if callable(content) else content
            started = time.monotonic()
            raw = shared.pool.send(method, target, sent, body, timeouts)
            self._check(method, target, raw.status, raw.headers, raw.content, sent, started)
            return Response(raw.status, raw.headers, raw.content)

        def attempt() -> Response:
            nonlocal replayed_auth
            sent, signature = self._headers(extra)
            try:
                return once(sent)
            except errors.APIError as error:
                # An expired profile session is renewed and the request replayed, once.
                auth = shared.auth
                if auth is not None and not replayed_auth and auth.refresh_after(error, signature):
                    replayed_auth = True
                    return once(self._headers(extra)[0])
                raise

        if trace is None or not logger.isEnabledFor(logging.DEBUG):
            return _retry.run_with_retries(
                attempt,
                predicate=predicate,
                policy=policy,
                sleep=shared.sleep,
                describe=f"{method} {operation}",
            )
        label, attempts, path = trace, 1 + max(policy.max_retries, 0), target.split("?", 1)[0]
        number = 0

        def traced_attempt() -> Response:
            nonlocal number
            number += 1
            try:
                answer = attempt()
            except Exception as error:
                _trace_attempt(label, number, attempts, method, path, error=error)
                raise
            _trace_attempt(label, number, attempts, method, path, answer=answer)
            return answer

        def retry_notice(retry: int, delay: float, error: BaseException) -> None:
            _trace(f"{label} retry {retry}/{attempts - 1} in {delay:.2f}s")

        return _retry.run_with_retries(
            traced_attempt,
            predicate=predicate,
            policy=policy,
            sleep=shared.sleep,
            describe=f"{method} {operation}",
            on_retry=retry_notice,
        )

    @contextmanager
    def stream(
        self,
        operation: str,
        *,
        params: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout: TimeoutPair | None = None,
    ) -> Iterator[StreamedResponse]:
        """Send one operation and read its 2xx answer as it arrives (one attempt, no retry).

        For answers that may be long or endless (server-sent events, artifact files): the caller
        reads `iter_bytes()` / `iter_lines()` inside the block. Errors map as in `request`.
        """
        shared = self._shared
        method, target, extra, prepared = self._prepare(
            operation, params, query, json_body, None, None, None, headers
        )
        # Only a JSON body (bytes) or none reaches here: stream takes no `content`.
        body = cast("bytes | None", prepared)
        sent, _signature = self._headers(extra)
        timeouts = shared.default_timeouts if timeout is None else _timeouts(timeout)
        started = time.monotonic()
        with shared.pool.stream(method, target, sent, body, timeouts) as (status, answer_headers, blocks):
            if not 200 <= status < 300:
                self._check(method, target, status, answer_headers, b"".join(blocks), sent, started)
            yield StreamedResponse(status, answer_headers, blocks)

    def close(self) -> None:
        if self._owner:
            self._shared.pool.close()
