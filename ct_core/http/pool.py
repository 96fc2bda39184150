"""The connections under every REST call: one connection pool per SDK client, two roads behind it.

`Transport` (ct_core.http.transport) decides what to send and what an answer means; this module only
moves bytes. `Pool` is the one interface (`send`, `stream`, `url`, `close`); behind it a client takes
one of two roads, chosen once when the client is made:

- no proxy named by the environment (the usual case, and every training loop against its service):
  `ct_core.http.direct`, keep-alive HTTP/1.1 connections over the standard library (`socket`,
  `ssl`, and `http.client`'s answer parser). A small request costs about what a bare `http.client`
  loop costs; profiling had shown most of a step or poll's client-side time in h11 and httpcore's
  per-request machinery;
- a proxy from the standard environment variables (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, minus
  `NO_PROXY`): httpcore's public API (`httpcore.ConnectionPool`, `httpcore.Proxy`,
  `httpcore.Request`), which speaks to proxies (CONNECT tunnels included) as httpx does.

Every client takes this same interface, whether it signs with a token, a Snowflake session or
nothing. Both roads use the SSL context httpx would build for the same `verify` value and httpx's
exception names in error messages (ConnectTimeout, ReadTimeout, ...), and both translate transport
failures into ct's exceptions, there and only there (`CTTimeoutError` carries `never_sent` for a
connect or pool timeout, a failed certificate check becomes `TLSVerificationError`).
"""

from __future__ import annotations

import functools
import os
import ssl
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import cast
from urllib.parse import urlsplit

import httpcore
import httpx

from ct_core.errors import CTConnectionError, CTTimeoutError, TLSVerificationError
from ct_core.http.direct import Body, DirectPool, Headers, RawResponse, Timeouts


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
        proxy = _proxy_for(base_url)
        context = ssl_context(verify) if parts.scheme == "https" else None
        self._direct: DirectPool | None = None
        self._pool: httpcore.ConnectionPool | None = None
        if proxy is None and parts.scheme in ("http", "https"):
            self._direct = DirectPool(
                https=parts.scheme == "https",
                host=self.host.decode("ascii"),
                port=parts.port or (443 if parts.scheme == "https" else 80),
                host_header=self.host_header,
                base_path=self.base_path.decode("ascii"),
                context=context,
                max_connections=max_connections,
            )
        else:
            self._pool = httpcore.ConnectionPool(
                ssl_context=context,
                proxy=proxy,
                max_connections=max_connections,
                max_keepalive_connections=max_connections,
            )
        # A loop asks for the same few targets over and over; their URL objects are immutable.
        self._url = functools.lru_cache(maxsize=1024)(self._build_url)

    @property
    def uses_standard_library(self) -> bool:
        """True on the direct road (no proxy): `ct_core.http.direct`; False through httpcore."""
        return self._direct is not None

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
        if self._direct is not None:
            return self._direct.send(method, target, headers, body, timeouts)
        assert self._pool is not None
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
        if self._direct is not None:
            with self._direct.stream(method, target, headers, body, timeouts) as answer:
                yield answer
            return
        assert self._pool is not None
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
        if self._direct is not None:
            self._direct.close()
        if self._pool is not None:
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
