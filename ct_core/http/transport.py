"""The HTTP transport of one CortexTrainingClient: its httpx.Client, auth, timeouts, error mapping
and the retry loop.

One `httpx.Client` per SDK client (a pool of `pool_maxsize` connections; redirects never followed;
TLS verification on unless switched off). The generated package `ct_api` is given this same
httpx.Client by injection, and streaming bodies use it directly, so every request shares:

- a request hook that applies the per-call timeout override (capacity's 10 s / 30 s bound) and the
  live auth header of a profile session;
- a response hook that logs the Snowflake request id and turns any answer that is not a 2xx into
  the matching `APIError` (so generated functions never hand back an error as data); a 401 to a
  request signed with a programmatic access token becomes `PATRejectedError`, with next steps;
- `Transport.call`, which maps httpx failures onto ct's exceptions and runs the retry policy.

Hot data-plane requests (step, save, load, request polls, chunk uploads) take a shorter road,
`Transport.send_direct`: the request goes straight to the connection pool under the httpx.Client
(httpcore, the same connections and TLS context), with the URL target and the fixed headers built
once. Profiling showed most of a small request's client-side cost in httpx's URL parsing, header
merging and model objects; the direct road skips those and keeps everything that matters: the
retry policy (it runs inside `Transport.call`), timeouts and their override, the error mapping of
the response hook for any answer that is not a 2xx, and the httpx exception types. Where a request
needs what only httpx offers (a profile session signing each request, a proxy from the
environment), the direct road hands the request to httpx instead.
"""

from __future__ import annotations

import contextvars
import logging
import math
import os
import ssl
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar, cast

import httpx

from ct_core.constants import (
    CAPACITY_CONNECT_TIMEOUT,
    CAPACITY_READ_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    PAT_TOKEN_TYPE,
    REQUEST_ID_HEADER,
    TOKEN_TYPE_HEADER,
)
from ct_core.errors import (
    APIError,
    CTConnectionError,
    CTTimeoutError,
    TLSVerificationError,
    api_error_from_response,
)
from ct_core.http import retry as _retry

logger = logging.getLogger("ct_core.transport")

T = TypeVar("T")
TimeoutPair = tuple[float, float]
#: A request body for `send_direct`: bytes, or an iterable of byte slices with a known total length.
DirectBody = bytes | Iterable[bytes | memoryview]

#: Headers the direct road never sends: httpcore does not decode compressed answers, so it asks for
#: none, and it sets Host and Content-Length itself.
_DIRECT_SKIPPED_HEADERS = frozenset({b"accept-encoding", b"host", b"content-length"})

_TIMEOUT_OVERRIDE: contextvars.ContextVar[TimeoutPair | None] = contextvars.ContextVar(
    "ct_timeout_override", default=None
)
#: The last successful answer seen in this context; `_api` falls back to its bytes when the generated
#: parser rejects an answer the spec does not describe.
LAST_RESPONSE: contextvars.ContextVar[httpx.Response | None] = contextvars.ContextVar(
    "ct_last_response", default=None
)


class AuthProvider(Protocol):
    """Something that signs requests whose credential can change (a Snowflake session)."""

    def apply(self, request: httpx.Request) -> None:
        """Set the auth headers of `request` from the live credential."""

    def refresh_after(self, error: APIError) -> bool:
        """Renew the credential when `error` says it expired; True when the request may be replayed."""


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
    """The capacity bound of §5.5: at most 10 s connect / 30 s read, a shorter configured value wins."""
    return (min(configured[0], CAPACITY_CONNECT_TIMEOUT), min(configured[1], CAPACITY_READ_TIMEOUT))


def _httpx_timeout(pair: TimeoutPair) -> httpx.Timeout:
    connect, read = pair
    # Writing a request body and waiting for a pooled connection are bounded by the read timeout.
    return httpx.Timeout(connect=connect, read=read, write=read, pool=read)


def _is_certificate_failure(error: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return True
        if "CERTIFICATE_VERIFY_FAILED" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def map_httpx_error(error: httpx.HTTPError, url: str | None = None) -> CTConnectionError:
    """The ct exception for an httpx transport failure (never for an HTTP status)."""
    if url is None:
        try:
            url = str(error.request.url)
        except RuntimeError:
            url = None
    where = f" for url: {url}" if url else ""
    if isinstance(error, httpx.TimeoutException):
        # A connect timeout means the request bytes were never written.
        never_sent = isinstance(error, (httpx.ConnectTimeout, httpx.PoolTimeout))
        kind = type(error).__name__
        return CTTimeoutError(f"{kind}{where}: {error}", url=url, never_sent=never_sent)
    if isinstance(error, httpx.ConnectError):
        if _is_certificate_failure(error):
            return TLSVerificationError(
                f"TLS certificate verification failed{where}: {error}. The certificate is untrusted, "
                "expired or issued for another name; check the host, or pass verify_ssl=False / "
                "--no-verify-ssl for a trusted test server.",
                url=url,
                never_sent=True,
            )
        return CTConnectionError(f"could not connect{where}: {error}", url=url, never_sent=True)
    return CTConnectionError(f"connection failed{where}: {type(error).__name__}: {error}", url=url)


def _httpcore_error_map() -> list[tuple[type[Exception], type[httpx.TransportError]]]:
    """httpcore's exceptions and the httpx ones httpx itself would raise for them, most specific first."""
    import httpcore

    return [
        (httpcore.ConnectTimeout, httpx.ConnectTimeout),
        (httpcore.ReadTimeout, httpx.ReadTimeout),
        (httpcore.WriteTimeout, httpx.WriteTimeout),
        (httpcore.PoolTimeout, httpx.PoolTimeout),
        (httpcore.TimeoutException, httpx.TimeoutException),
        (httpcore.ConnectError, httpx.ConnectError),
        (httpcore.ReadError, httpx.ReadError),
        (httpcore.WriteError, httpx.WriteError),
        (httpcore.NetworkError, httpx.NetworkError),
        (httpcore.ProxyError, httpx.ProxyError),
        (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
        (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
        (httpcore.LocalProtocolError, httpx.LocalProtocolError),
        (httpcore.ProtocolError, httpx.ProtocolError),
    ]


class _DirectRoute:
    """What the direct road needs for one base URL, computed once: pool, URL parts, fixed headers."""

    def __init__(self, pool: Any, base: httpx.URL, headers: httpx.Headers) -> None:
        import httpcore

        self.pool = pool
        self.scheme = base.raw_scheme
        self.host = base.raw_host
        self.port = base.port
        # httpx joins a relative URL onto the base URL's path the same way.
        self.base_path = base.raw_path.rstrip(b"/")
        self.origin = str(base.copy_with(raw_path=b"/")).rstrip("/")
        host_header = base.netloc
        self.headers: list[tuple[bytes, bytes]] = [(b"Host", host_header)] + [
            (key, value) for key, value in headers.raw if key.lower() not in _DIRECT_SKIPPED_HEADERS
        ]
        self.url_type = httpcore.URL
        self.request_type = httpcore.Request
        self.errors = _httpcore_error_map()

    def url(self, path: str) -> Any:
        target = self.base_path + b"/" + path.lstrip("/").encode("ascii")
        return self.url_type(scheme=self.scheme, host=self.host, port=self.port, target=target)


class Transport:
    """One pooled httpx.Client plus the request policy shared by every call of an SDK client."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: dict[str, str] | None = None,
        verify: bool | str | ssl.SSLContext = True,
        timeout: TimeoutPair = (DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT),
        pool_maxsize: int,
        max_retries: int,
        auth: AuthProvider | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.base_url = base_url
        self.timeout = timeout
        self.auth = auth
        self.policy = _retry.RetryPolicy(max_retries=max_retries)
        self.recent_jobs = _retry.RecentJobs()
        self.sleep: Callable[[float], None] = sleep or time.sleep
        if isinstance(verify, str):
            # A CA bundle file or folder: httpx wants an SSL context for it.
            folder = os.path.isdir(verify)
            verify = ssl.create_default_context(
                capath=verify if folder else None, cafile=None if folder else verify
            )
        limits = httpx.Limits(max_connections=pool_maxsize, max_keepalive_connections=pool_maxsize)
        # The transport is built here (not by httpx.Client) so the direct road can share its pool.
        self._pool_transport = httpx.HTTPTransport(verify=verify, limits=limits)
        self.http = httpx.Client(
            base_url=base_url,
            headers=headers or {},
            timeout=_httpx_timeout(timeout),
            follow_redirects=False,
            transport=self._pool_transport,
            event_hooks={"request": [self._on_request], "response": [self._on_response]},
        )
        self._owns_http = True
        self._api_client: Any = None
        self._routes: dict[str, _DirectRoute | None] = {}
        self._default_timeouts = _httpx_timeout(timeout).as_dict()

    # --- hooks ------------------------------------------------------------------------------------

    def _on_request(self, request: httpx.Request) -> None:
        override = _TIMEOUT_OVERRIDE.get()
        if override is not None:
            request.extensions["timeout"] = _httpx_timeout(override).as_dict()
        if self.auth is not None:
            self.auth.apply(request)

    def _on_response(self, response: httpx.Response) -> None:
        request_id = response.headers.get(REQUEST_ID_HEADER)
        if request_id:
            logger.debug(
                "snowflake request_id=%s  %s %s  status=%d",
                request_id,
                response.request.method,
                response.request.url.raw_path.decode("ascii", "replace"),
                response.status_code,
            )
        if 200 <= response.status_code < 300:
            LAST_RESPONSE.set(response)
            return
        response.read()
        # A PAT this client signs with itself gets next steps on a 401 (CFG-23); a profile session
        # (an auth provider) signed in already, so its 401 means something else (usually expiry).
        direct_pat = self.auth is None and response.request.headers.get(TOKEN_TYPE_HEADER) == PAT_TOKEN_TYPE
        raise api_error_from_response(response, direct_pat=direct_pat)

    # --- the generated client ---------------------------------------------------------------------

    @property
    def api_client(self) -> Any:
        """The generated `ct_api` client, sharing this transport's httpx.Client (built on first use)."""
        if self._api_client is None:
            from ct_api.client import Client

            client = Client(base_url=self.base_url)
            client.set_httpx_client(self.http)
            self._api_client = client
        return self._api_client

    # --- calls ------------------------------------------------------------------------------------

    @contextmanager
    def timeout_override(self, timeout: TimeoutPair | None) -> Iterator[None]:
        """Apply `timeout` to every request made inside the block (this thread/context only)."""
        token = _TIMEOUT_OVERRIDE.set(timeout)
        try:
            yield
        finally:
            _TIMEOUT_OVERRIDE.reset(token)

    def call(
        self,
        fn: Callable[[], T],
        *,
        predicate: _retry.Predicate | None = None,
        job_id: str | None = None,
        timeout: TimeoutPair | None = None,
        max_retries: int | None = None,
        describe: str = "request",
    ) -> T:
        """Run `fn` (which makes one HTTP request) under the retry policy.

        `predicate` defaults to the general rule with the 404 grace for `job_id`; `timeout` and
        `max_retries` override the client's for this call only.
        """
        if predicate is None:
            predicate = _retry.general(job_id=job_id, recent_jobs=self.recent_jobs)
        policy = self.policy if max_retries is None else _retry.RetryPolicy(max_retries=max_retries)
        replayed_auth = False

        def attempt() -> T:
            nonlocal replayed_auth
            try:
                with self.timeout_override(timeout):
                    return fn()
            except httpx.HTTPError as error:
                raise map_httpx_error(error) from error
            except APIError as error:
                # A profile session that expired is renewed and the request replayed, once (CFG-10).
                if self.auth is not None and not replayed_auth and self.auth.refresh_after(error):
                    replayed_auth = True
                    with self.timeout_override(timeout):
                        try:
                            return fn()
                        except httpx.HTTPError as again:
                            raise map_httpx_error(again) from again
                raise

        return _retry.run_with_retries(
            attempt, predicate=predicate, policy=policy, sleep=self.sleep, describe=describe
        )

    def request(
        self,
        method: str,
        url: str,
        *,
        predicate: _retry.Predicate | None = None,
        job_id: str | None = None,
        timeout: TimeoutPair | None = None,
        max_retries: int | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """A raw request (relative to the base URL, or absolute) through the same policy."""
        return self.call(
            lambda: self.http.request(method, url, **kwargs),
            predicate=predicate,
            job_id=job_id,
            timeout=timeout,
            max_retries=max_retries,
            describe=f"{method} {url}",
        )

    # --- the direct road (hot data-plane requests) ------------------------------------------------

    def _route(self) -> _DirectRoute | None:
        """The direct route for this transport's base URL, or None where httpx must carry requests."""
        try:
            return self._routes[self.base_url]
        except KeyError:
            pass
        route: _DirectRoute | None = None
        pool = getattr(self._pool_transport, "_pool", None)
        base = httpx.URL(self.base_url)
        # A proxy from the environment is mounted by httpx.Client; only httpx knows how to use it.
        proxied = bool(urllib.request.getproxies())
        usable = pool is not None and hasattr(pool, "handle_request") and base.scheme in ("http", "https")
        if usable and not proxied and self.auth is None:
            route = _DirectRoute(pool, base, self.http.headers)
        self._routes[self.base_url] = route
        return route

    def send_direct(
        self,
        method: str,
        path: str,
        *,
        body: DirectBody | None = None,
        length: int | None = None,
        content_type: str | None = None,
    ) -> bytes:
        """Make ONE request to `path` (relative to the base URL, query included) and return the body.

        Meant to be called inside `Transport.call`, which retries it. Raises httpx exceptions for
        transport failures and the `APIError` of the response hook for an answer that is not a 2xx,
        exactly like a request made through httpx.Client. `length` is required for an iterable body.
        """
        route = self._route()
        extra: list[tuple[bytes, bytes]] = []
        if content_type is not None:
            extra.append((b"Content-Type", content_type.encode("latin-1")))
        if body is not None:
            size = len(body) if isinstance(body, bytes) else length
            if size is None:
                raise ValueError("send_direct needs the length of an iterable body")
            extra.append((b"Content-Length", str(size).encode("ascii")))
        if route is None:
            # httpx sends memoryview slices as they are; its annotations only name bytes.
            return self.http.request(method, path, content=cast("Any", body), headers=extra).content
        override = _TIMEOUT_OVERRIDE.get()
        timeouts = self._default_timeouts if override is None else _httpx_timeout(override).as_dict()
        headers = route.headers + extra if extra else route.headers
        request = route.request_type(
            method.encode("ascii"),
            route.url(path),
            headers=headers,
            content=cast("Any", body),
            extensions={"timeout": timeouts},
        )
        try:
            response = route.pool.handle_request(request)
            try:
                content = response.read()
            finally:
                response.close()
        except Exception as error:
            for core_type, httpx_type in route.errors:
                if isinstance(error, core_type):
                    raise httpx_type(
                        str(error), request=self._httpx_request(route, method, path, headers)
                    ) from error
            raise
        status = response.status
        if status < 200 or status >= 300 or logger.isEnabledFor(logging.DEBUG):
            # Rare on this road (errors, debug logging): hand the answer to the httpx response hook.
            self._on_response(
                httpx.Response(
                    status,
                    headers=response.headers,
                    content=content,
                    request=self._httpx_request(route, method, path, headers),
                )
            )
        return bytes(content)

    @staticmethod
    def _httpx_request(
        route: _DirectRoute, method: str, path: str, headers: list[tuple[bytes, bytes]]
    ) -> httpx.Request:
        # The error path reads the request's URL (messages) and headers (the PAT 401 hint, CFG-23).
        url = route.origin + (route.base_path + b"/").decode("ascii") + path.lstrip("/")
        return httpx.Request(method, url, headers=headers)

    def close(self) -> None:
        if self._owns_http:
            self.http.close()

    def borrow(self, base_url: str | None = None) -> Transport:
        """A view sharing this transport's connections, auth and recent-job memory (for `for_job`)."""
        twin = Transport.__new__(Transport)
        twin.__dict__.update(self.__dict__)
        twin._owns_http = False
        twin._api_client = None
        twin._routes = {}
        if base_url is not None:
            twin.base_url = base_url
        return twin
