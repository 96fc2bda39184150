"""The proxied road of `ct_core.http.pool.Pool`: httpcore's connection pool, through a proxy.

A client whose origin the environment sends through a proxy (`HTTPS_PROXY`, `HTTP_PROXY`,
`ALL_PROXY`, minus `NO_PROXY`) talks through httpcore's public API (`httpcore.ConnectionPool`,
`httpcore.Proxy`, `httpcore.Request`), which speaks to proxies, CONNECT tunnels included, as httpx
does. Every other client takes the standard-library road (`ct_core.http.direct`) and never imports
this module or httpcore.

httpcore's failures become ct's exceptions here and only here, with httpx's exception names in the
messages (ConnectTimeout, ReadTimeout, ...), as on the direct road.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import cast

import httpcore

from ct_core.errors import CTConnectionError, CTTimeoutError, TLSVerificationError
from ct_core.http.direct import Body, Headers, RawResponse, Timeouts


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


_TRANSPORT_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.ProxyError,
    httpcore.UnsupportedProtocol,
)


class ProxiedPool:
    """httpcore's keep-alive pool to one origin, through `proxy_url` (or none, for a scheme the
    direct road does not speak, so httpcore names the problem)."""

    def __init__(
        self,
        *,
        scheme: bytes,
        host: bytes,
        port: int | None,
        host_header: bytes,
        base_path: bytes,
        origin: str,
        proxy_url: str | None,
        context: ssl.SSLContext | None,
        max_connections: int,
    ) -> None:
        self._scheme, self._host, self._port = scheme, host, port
        self._host_header, self._base_path, self._origin = host_header, base_path, origin
        self._pool = httpcore.ConnectionPool(
            ssl_context=context,
            proxy=httpcore.Proxy(proxy_url) if proxy_url else None,
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
        )
        # A loop asks for the same few targets over and over; their URL objects are immutable.
        self._url = functools.lru_cache(maxsize=1024)(self._build_url)

    def _build_url(self, target: str) -> httpcore.URL:
        return httpcore.URL(
            scheme=self._scheme,
            host=self._host,
            port=self._port,
            target=self._base_path + target.encode("ascii"),
        )

    def _request(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> httpcore.Request:
        return httpcore.Request(
            method.encode("ascii"),
            self._url(target),
            headers=[(b"Host", self._host_header), *headers],
            # httpcore writes memoryview slices as they are; its annotation names only bytes.
            content=cast("Iterable[bytes] | bytes | None", body),
            extensions={"timeout": timeouts},
        )

    def send(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> RawResponse:
        request = self._request(method, target, headers, body, timeouts)
        try:
            response = self._pool.handle_request(request)
            try:
                content = response.read()
            finally:
                response.close()
        except _TRANSPORT_ERRORS as error:
            raise connection_error(error, self._origin + target) from error
        return RawResponse(response.status, list(response.headers), bytes(content))

    @contextmanager
    def stream(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> Iterator[tuple[int, Headers, Iterator[bytes]]]:
        request = self._request(method, target, headers, body, timeouts)
        url = self._origin + target
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
