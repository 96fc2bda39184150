"""GETs of presigned download links, built for multi-gigabyte bodies.

The service's own API goes through httpx, but its HTTP/1.1 stack reads a response 64 KiB at a time
and copies every block through h11's buffer in Python: on a fast link that, not the network, sets
the pace of a checkpoint download (under half of what a plain socket read manages on loopback).
urllib3 reads straight from the socket in blocks of the size asked for, so bodies are fetched with
it instead. Everything a caller relies on stays as it is elsewhere in the SDK:

- TLS: the same SSL context httpx would build for the same ``verify`` value (certifi, or the
  given CA bundle, or none), so a certificate the API accepts is accepted here too;
- proxies: the standard environment variables (``HTTPS_PROXY``, ``NO_PROXY``...), as httpx honours;
- redirects: followed (a few hops), since object stores may answer a link with one;
- no retries inside urllib3: the caller decides, because a retry must continue from the bytes that
  are already on disk.

Presigned links carry their credentials in the query, so no auth header is ever sent.
"""

from __future__ import annotations

import functools
import os
import ssl
import threading
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from ct_core.errors import LinkTransportError

if TYPE_CHECKING:
    import urllib3

__all__ = ["LinkClient", "LinkResponse", "LinkTimeouts", "LinkTransportError"]

#: Size of each read from the socket (and of each write to the file).
BLOCK_BYTES = 1024 * 1024
#: Redirect hops followed before giving up.
MAX_REDIRECTS = 5


@dataclass(frozen=True)
class LinkTimeouts:
    connect: float = 30.0
    #: Longest wait for the next block of a body, not for the whole file.
    read: float = 120.0


class LinkResponse:
    """An open response: status, headers and the body as blocks."""

    def __init__(self, raw: urllib3.BaseHTTPResponse) -> None:
        self._raw = raw
        self.status_code: int = raw.status
        self.headers: Mapping[str, str] = raw.headers

    def iter_blocks(self) -> Iterator[bytes]:
        """The body as it arrives, one socket read per block (up to BLOCK_BYTES, whatever is there).

        Nothing waits for a block to fill: bytes reach the caller, and the file, as soon as the
        network delivers them. A connection lost midway raises LinkTransportError.
        """
        read = self._raw.read1  # type: ignore[attr-defined]
        try:
            while block := read(BLOCK_BYTES, decode_content=False):
                yield block
        except Exception as error:
            translated = _translate(error)
            if translated is None:
                raise
            raise translated from error


@functools.lru_cache(maxsize=8)
def _ssl_context(verify: bool | str) -> ssl.SSLContext:
    """httpx's own rules for verify=True/False/"path/to/ca.pem" (SSL_CERT_FILE included).

    Loading a CA bundle takes tens of milliseconds, so a context is built once per process and
    value; contexts are safe to share between threads.
    """
    if isinstance(verify, str):
        if os.path.isdir(verify):
            return ssl.create_default_context(capath=verify)
        return ssl.create_default_context(cafile=verify)
    return httpx.create_ssl_context(verify=verify)


def _translate(error: Exception) -> LinkTransportError | None:
    """One error type for the caller, marked with whether another attempt could succeed (None for
    an exception that is not urllib3's, which the caller lets through)."""
    from urllib3.exceptions import HTTPError, MaxRetryError, ResponseError
    from urllib3.exceptions import SSLError as Urllib3SSLError

    if not isinstance(error, HTTPError):
        return None
    cause: BaseException = error
    if isinstance(error, MaxRetryError) and error.reason is not None:
        cause = error.reason
    if isinstance(cause, ResponseError):
        return LinkTransportError(f"too many redirects: {cause}", retryable=False)
    if isinstance(cause, Urllib3SSLError):
        text = str(cause).lower()
        # A certificate that fails verification will fail again; other TLS hiccups may not.
        refused = "certificate verify failed" in text or "hostname mismatch" in text
        return LinkTransportError(f"TLS error: {cause}", retryable=not refused)
    return LinkTransportError(f"{type(cause).__name__}: {cause}", retryable=True)


class LinkClient:
    """Fetches presigned links; one per download, closed when it ends."""

    def __init__(self, verify: bool | str = True, timeouts: LinkTimeouts | None = None) -> None:
        # urllib3 is imported here, not with the module: only a download needs it (CLI start-up).
        import urllib3

        self._urllib3 = urllib3
        self._verify = verify
        times = timeouts or LinkTimeouts()
        self._timeout = urllib3.Timeout(connect=times.connect, read=times.read)
        self._retries = urllib3.Retry(
            total=None, connect=0, read=0, status=0, other=0, redirect=MAX_REDIRECTS, raise_on_redirect=True
        )
        self._managers: dict[str | None, urllib3.PoolManager] = {}
        self._lock = threading.Lock()

    def _manager(self, url: str) -> urllib3.PoolManager:
        """The pool for ``url``: direct, or through the proxy the environment names for it."""
        parts = urlsplit(url)
        proxy: str | None = None
        if parts.hostname and not urllib.request.proxy_bypass(parts.hostname):
            proxy = urllib.request.getproxies().get(parts.scheme)
        with self._lock:
            manager = self._managers.get(proxy)
            if manager is None:
                options: dict[str, Any] = {
                    "retries": self._retries,
                    "ssl_context": _ssl_context(self._verify),
                }
                pools = self._urllib3
                manager = pools.ProxyManager(proxy, **options) if proxy else pools.PoolManager(**options)
                self._managers[proxy] = manager
            return manager

    @contextmanager
    def get(self, url: str, headers: Mapping[str, str] | None = None) -> Iterator[LinkResponse]:
        """GET ``url`` and hold the response open for streaming until the block ends."""
        try:
            raw = self._manager(url).request(
                "GET",
                url,
                headers=dict(headers or {}),
                preload_content=False,
                decode_content=False,
                timeout=self._timeout,
            )
        except Exception as error:
            translated = _translate(error)
            if translated is None:
                raise
            raise translated from error
        try:
            yield LinkResponse(raw)
        finally:
            # An unread remainder is dropped with its connection rather than drained.
            raw.close()
            raw.release_conn()

    def close(self) -> None:
        with self._lock:
            for manager in self._managers.values():
                manager.clear()
            self._managers.clear()
