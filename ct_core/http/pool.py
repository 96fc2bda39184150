"""The connections under every REST call: one connection pool per SDK client, two roads behind it.

`Transport` (ct_core.http.transport) decides what to send and what an answer means; this module only
moves bytes. `Pool` is the one interface (`send`, `stream`, `url`, `close`); behind it a client takes
one of two roads, chosen once when the client is made:

- no proxy named by the environment (the usual case, and every training loop against its service):
  `ct_core.http.direct`, keep-alive HTTP/1.1 connections over the standard library's `socket` and
  `ssl`, answers parsed by llhttp (C, through httptools). A small request costs less than a bare
  `http.client` loop's; profiling had shown most of a step or poll's client-side time in h11 and
  httpcore's per-request machinery, and then in `http.client`'s header parsing;
- a proxy from the standard environment variables (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, minus
  `NO_PROXY`): `ct_core.http.proxied`, httpcore's public API, which speaks to proxies (CONNECT
  tunnels included) as httpx does. Only such a client imports httpcore: a command line that makes
  one request does not pay for the generic stack it never uses.

Every client takes this same interface, whether it signs with a token, a Snowflake session or
nothing. Both roads use the SSL context httpx would build for the same `verify` value and httpx's
exception names in error messages (ConnectTimeout, ReadTimeout, ...), and both translate transport
failures into ct's exceptions, there and only there (`CTTimeoutError` carries `never_sent` for a
connect or pool timeout, a failed certificate check becomes `TLSVerificationError`).
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote, urlsplit

from ct_core.http.direct import Body, DirectPool, Headers, RawResponse, Timeouts

if TYPE_CHECKING:
    from ct_core.http.proxied import ProxiedPool

_DEFAULT_PORTS = {"http": 80, "https": 443}


def ssl_context(verify: bool | str | ssl.SSLContext) -> ssl.SSLContext:
    """The SSL context for `verify`, by httpx's rules: an SSLContext as given; a CA file or folder;
    False, no checks at all; True, the bundle `SSL_CERT_FILE` or folder `SSL_CERT_DIR` names, else
    certifi's."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if isinstance(verify, str):
        if os.path.isdir(verify):
            return ssl.create_default_context(capath=verify)
        return ssl.create_default_context(cafile=verify)
    if not verify:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi  # only an HTTPS client needs the bundle

    return ssl.create_default_context(cafile=certifi.where())


def _names_a_proxy(environ: Mapping[str, str]) -> bool:
    """Whether any `<scheme>_proxy` variable (any case, NO_PROXY aside) is set: only then is
    `urllib.request` (with tempfile, shutil and the compressors it pulls in) worth importing."""
    return any(
        value and name.lower().endswith("_proxy") and name.lower() != "no_proxy"
        for name, value in environ.items()
    )


def _proxy_for(base_url: str) -> str | None:
    """The proxy URL the environment names for `base_url`, honouring NO_PROXY, or None."""
    if not _names_a_proxy(os.environ):
        return None
    import urllib.request  # by the standard library's rules, as urllib and requests read them

    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    url = proxies.get(parts.scheme) or proxies.get("all")
    if not url or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return url


class Road(Protocol):
    """Another way to the server than a socket, for a client inside the server's own process (the
    local server gives its services one: `ct_local.http.inprocess`). Requests go through it while
    `usable()` says so, and through the client's connections otherwise; `send` and `stream` are
    `Pool`'s own and raise `CTConnectionError` (and subclasses) alone."""

    def usable(self) -> bool: ...

    def send(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> tuple[int, Headers, bytes]: ...

    def stream(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> AbstractContextManager[tuple[int, Headers, Iterator[bytes]]]: ...


class Pool:
    """Keep-alive connections to one origin (through a proxy when the environment names one), or
    `road` while it is usable."""

    def __init__(
        self,
        base_url: str,
        *,
        verify: bool | str | ssl.SSLContext,
        max_connections: int,
        road: Road | None = None,
    ) -> None:
        self._in_process = road
        parts = urlsplit(base_url)
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        if not host.isascii():
            host = host.encode("idna").decode("ascii")
        try:
            port = parts.port
        except ValueError as error:
            raise ValueError(f"invalid port in base URL {base_url!r}: {error}") from None
        if port == _DEFAULT_PORTS.get(scheme):
            port = None
        # An IPv6 literal keeps its brackets in the Host header and in URLs.
        named = f"[{host}]" if ":" in host else host
        netloc = named if port is None else f"{named}:{port}"
        self.scheme = scheme.encode("ascii")
        self.host = host.encode("ascii")
        self.port = port
        self.host_header = netloc.encode("ascii")
        path = quote(parts.path.rstrip("/"), safe="/%:@!$&'()*+,;=-._~")
        self.base_path = path.encode("ascii")
        self._origin = f"{scheme}://{netloc}{path}"
        proxy = _proxy_for(base_url)
        context = ssl_context(verify) if scheme == "https" else None
        self._direct: DirectPool | None = None
        self._proxied: ProxiedPool | None = None
        if proxy is None and scheme in _DEFAULT_PORTS:
            self._direct = DirectPool(
                https=scheme == "https",
                host=host,
                port=port or _DEFAULT_PORTS[scheme],
                host_header=self.host_header,
                base_path=self.base_path.decode("ascii"),
                context=context,
                max_connections=max_connections,
            )
        else:
            # Only a proxied client (or a scheme neither road speaks, which httpcore then names)
            # imports httpcore.
            from ct_core.http.proxied import ProxiedPool

            self._proxied = ProxiedPool(
                scheme=self.scheme,
                host=self.host,
                port=port,
                host_header=self.host_header,
                base_path=self.base_path,
                origin=self._origin,
                proxy_url=proxy,
                context=context,
                max_connections=max_connections,
            )

    @property
    def uses_standard_library(self) -> bool:
        """True on the direct road (no proxy): `ct_core.http.direct`; False through httpcore."""
        return self._direct is not None

    def url(self, target: str) -> str:
        """The absolute URL of a path (query included) on this origin, for messages and errors."""
        return self._origin + target

    def _road(self) -> DirectPool | ProxiedPool:
        road = self._direct or self._proxied
        assert road is not None
        return road

    def send(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> RawResponse:
        """Send one request and read the whole answer. Raises `CTConnectionError` and subclasses."""
        road = self._in_process
        if road is not None and road.usable():
            return RawResponse(*road.send(method, target, headers, body, timeouts))
        return self._road().send(method, target, headers, body, timeouts)

    @contextmanager
    def stream(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> Iterator[tuple[int, Headers, Iterator[bytes]]]:
        """Send one request and yield (status, headers, body blocks); the connection is released after."""
        road = self._in_process
        chosen = road if road is not None and road.usable() else self._road()
        with chosen.stream(method, target, headers, body, timeouts) as answer:
            yield answer

    def close(self) -> None:
        self._road().close()


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
    "Road",
    "Timeouts",
    "header_value",
    "ssl_context",
]
