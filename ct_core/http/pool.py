"""The connections under every REST call: one httpcore connection pool per SDK client.

`Transport` (ct_core.http.transport) decides what to send and what an answer means; this module only
moves bytes. It is built from httpcore's public API (`httpcore.ConnectionPool`, `httpcore.Proxy`,
`httpcore.Request`), which is what httpx itself runs on. Talking to the pool directly, rather than
through `httpx.Client`, is the fast path of a training loop: profiling showed most of a small
request's client-side cost in httpx's URL parsing, header merging and model objects, and a loop
makes thousands of step and poll requests. Every client takes this same road, whether it signs
with a token, a Snowflake session or nothing.

What it keeps from httpx: the SSL context httpx would build for the same `verify` value, proxies
from the standard environment variables (`HTTPS_PROXY`, `NO_PROXY`, ...), and httpx's exception
names in error messages. What it owns: translating httpcore failures into ct's exceptions, once,
here (`CTTimeoutError` carries `never_sent` for a connect or pool timeout, a failed certificate
check becomes `TLSVerificationError`).
"""

from __future__ import annotations

import functools
import os
import ssl
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

import httpcore
import httpx

from ct_core.errors import CTConnectionError, CTTimeoutError, TLSVerificationError

#: A request body: bytes, or an iterable of byte slices (a chunk frame built from views).
Body = bytes | Iterable[bytes | memoryview]
Headers = list[tuple[bytes, bytes]]
Timeouts = dict[str, float | None]


@dataclass(frozen=True)
class RawResponse:
    """A finished answer: status, headers as sent, and the whole body."""

    status: int
    headers: Headers
    content: bytes


def ssl_context(verify: bool | str | ssl.SSLContext) -> ssl.SSLContext:
    """The SSL context for `verify`: True (certifi / SSL_CERT_FILE), False, a CA file or a CA folder."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if isinstance(verify, str):
        if os.path.isdir(verify):
            return ssl.create_default_context(capath=verify)
        return ssl.create_default_context(cafile=verify)
    return httpx.create_ssl_context(verify=verify)


def _proxy_for(base_url: str) -> httpcore.Proxy | None:
    """The proxy the environment names for `base_url`, honouring NO_PROXY, or None."""
    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    url = proxies.get(parts.scheme) or proxies.get("all")
    if not url or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return httpcore.Proxy(url)


def _is_certificate_failure(error: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def connection_error(error: Exception, url: str) -> CTConnectionError:
    """The ct exception for a transport failure of httpcore (never for an HTTP status)."""
    where = f" for url: {url}"
    if isinstance(error, httpcore.TimeoutException):
        # A connect or pool timeout means the request bytes were never written.
        never_sent = isinstance(error, (httpcore.ConnectTimeout, httpcore.PoolTimeout))
        return CTTimeoutError(f"{type(error).__name__}{where}: {error}", url=url, never_sent=never_sent)
    if isinstance(error, httpcore.ConnectError):
        if _is_certificate_failure(error):
            return TLSVerificationError(
                f"TLS certificate verification failed{where}: {error}. The certificate is untrusted, "
                "expired or issued for another name; check the host, or pass verify_ssl=False / "
                "--no-verify-ssl for a trusted test server.",
                url=url,
                never_sent=True,
            )
        return CTConnectionError(f"could not connect{where}: {error}", url=url, never_sent=True)
    if isinstance(error, httpcore.UnsupportedProtocol):
        return CTConnectionError(f"unsupported URL{where}: {error}", url=url, never_sent=True)
    return CTConnectionError(f"connection failed{where}: {type(error).__name__}: {error}", url=url)


class Pool:
    """Keep-alive connections to one origin (through a proxy when the environment names one)."""

    def __init__(self, base_url: str, *, verify: bool | str | ssl.SSLContext, max_connections: int) -> None:
        parts = httpx.URL(base_url)
        self.scheme = parts.raw_scheme
        self.host = parts.raw_host
        self.port = parts.port
        self.host_header = parts.netloc
        self.base_path = parts.raw_path.rstrip(b"/")
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context(verify) if parts.scheme == "https" else None,
            proxy=_proxy_for(base_url),
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
        )
        # A loop asks for the same few targets over and over; their URL objects are immutable.
        self._url = functools.lru_cache(maxsize=1024)(self._build_url)

    def _build_url(self, target: str) -> httpcore.URL:
        return httpcore.URL(
            scheme=self.scheme, host=self.host, port=self.port, target=self.base_path + target.encode("ascii")
        )

    def url(self, target: str) -> str:
        """The absolute URL of a path (query included) on this origin, for messages and errors."""
        return f"{self.scheme.decode()}://{self.host_header.decode()}{self.base_path.decode()}{target}"

    def _request(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> httpcore.Request:
        return httpcore.Request(
            method.encode("ascii"),
            self._url(target),
            headers=[(b"Host", self.host_header), *headers],
            # httpcore writes memoryview slices as they are; its annotation names only bytes.
            content=cast("Iterable[bytes] | bytes | None", body),
            extensions={"timeout": timeouts},
        )

    def send(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> RawResponse:
        """Send one request and read the whole answer. Raises `CTConnectionError` and subclasses."""
        request = self._request(method, target, headers, body, timeouts)
        try:
            response = self._pool.handle_request(request)
            try:
                content = response.read()
            finally:
                response.close()
        except _TRANSPORT_ERRORS as error:
            raise connection_error(error, self.url(target)) from error
        return RawResponse(response.status, list(response.headers), bytes(content))

    @contextmanager
    def stream(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> Iterator[tuple[int, Headers, Iterator[bytes]]]:
        """Send one request and yield (status, headers, body blocks); the connection is released after."""
        request = self._request(method, target, headers, body, timeouts)
        url = self.url(target)
        try:
            response = self._pool.handle_request(request)
        except _TRANSPORT_ERRORS as error:
            raise connection_error(error, url) from error

        def blocks() -> Iterator[bytes]:
            try:
                yield from response.iter_stream()
            except _TRANSPORT_ERRORS as error:
                raise connection_error(error, url) from error

        try:
            yield response.status, list(response.headers), blocks()
        finally:
            response.close()

    def close(self) -> None:
        self._pool.close()


_TRANSPORT_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.ProxyError,
    httpcore.UnsupportedProtocol,
)


def header_value(headers: Headers, name: str) -> str | None:
    """The first value of header `name` (case-insensitive), decoded, or None."""
    wanted = name.lower().encode("ascii")
    for key, value in headers:
        if key.lower() == wanted:
            return value.decode("latin-1")
    return None


__all__ = [
    "Body",
    "Headers",
    "Pool",
    "RawResponse",
    "Timeouts",
    "connection_error",
    "header_value",
    "ssl_context",
]
