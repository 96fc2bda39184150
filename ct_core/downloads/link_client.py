"""GETs of presigned download links, built for multi-gigabyte bodies.

The service's own API goes through httpx, but its HTTP/1.1 stack reads a response 64 KiB at a time
and copies every block through h11's buffer in Python: on a fast link that, not the network, sets
the pace of a checkpoint download (under half of what a plain socket read manages on loopback).
urllib3 reads straight from the socket in blocks of the size asked for, so bodies are fetched with
it instead; once what came with the headers is handed over, a body as sent (a Content-Length, not
chunked) is read from the connection's socket into the caller's own buffer (`LinkResponse.readinto1`).
Everything a caller relies on stays as it is elsewhere in the SDK:

- TLS: the same SSL context httpx would build for the same ``verify`` value (certifi, or the
  given CA bundle, or none), so a certificate the API accepts is accepted here too;
- proxies: the standard environment variables (``HTTPS_PROXY``, ``NO_PROXY``...), as httpx honours
  (read once per host and client);
- redirects: followed (a few hops), since object stores may answer a link with one;
- timeouts: the same connect and per-read limits (on Linux the read limit is kept by the kernel,
  see `_kernel_read_timeout`);
- no retries inside urllib3: the caller decides, because a retry must continue from the bytes that
  are already on disk;
- one client serves several files at once: its pools keep as many connections per host as the
  caller says it will use, and a read blocked in one thread can be ended from another (`abort`).

Reads are sized for fast links: up to 4 MiB each (`BLOCK_BYTES`), and on a loopback link (a server
on this machine, Linux) each read waits until a mebibyte is there (`LOOPBACK_READ_AT_LEAST`), which
spares that server most of its wake-ups.

Presigned links carry their credentials in the query, so no auth header is ever sent.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
import threading
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ct_core.errors import LinkTransportError
from ct_core.http.pool import ssl_context

if TYPE_CHECKING:
    import socket

    import urllib3

__all__ = ["LinkClient", "LinkResponse", "LinkTimeouts", "LinkTransportError"]

#: Most bytes taken from the socket by one read (and written to the file by one write). A read
#: returns what has arrived, so a large block adds no wait on a slow link; on a fast one it means
#: fewer, larger reads and so fewer TCP window updates, each of which wakes the sender (on loopback
#: the reader itself runs the network work an update sets off). Measured on loopback against 1 MiB
#: blocks (bench/downloads.py, 2 cores): about a tenth less client CPU per GiB against a server that
#: sends with sendfile, a little less server CPU against `ct local serve`; 8 or 16 MiB add nothing.
BLOCK_BYTES = 4 * 1024 * 1024
#: On a loopback link (Linux), a read of the socket returns only once this many bytes of the body are
#: there (``SO_RCVLOWAT``), except near the end of the body (see `LinkResponse.readinto1`). The
#: server then runs on the same cores, and every read that finds a few dozen KiB opens the window a
#: little and wakes the server to send a little more: at gigabytes a second those wake-ups cost the
#: server more CPU than its copies. Measured against `ct local serve` (bench/downloads.py, 2 cores):
#: its CPU per GiB falls from about 0.66 to 0.56 s and the download is 15-20 % faster than without;
#: 512 KiB to 2 MiB do about as well. Over a real network reads still take what has arrived: there
#: the bytes should reach the file as they come, and the kernel's window tuning is left alone.
LOOPBACK_READ_AT_LEAST = 1024 * 1024
#: Redirect hops followed before giving up.
MAX_REDIRECTS = 5


@dataclass(frozen=True)
class LinkTimeouts:
    connect: float = 30.0
    #: Longest wait for the next block of a body, not for the whole file.
    read: float = 120.0


class LinkResponse:
    """An open response: status, headers and the body, read one socket read at a time."""

    def __init__(self, raw: urllib3.BaseHTTPResponse, *, gather: int = 0) -> None:
        """``gather``: bytes a direct read of a loopback socket waits for (0: none); see
        `LOOPBACK_READ_AT_LEAST`. Only for a socket whose reads block in the kernel."""
        self._raw = raw
        self.status_code: int = raw.status
        self.headers: Mapping[str, str] = raw.headers
        # Once http.client's buffer is empty: the connection's socket and the body bytes still to
        # come, when the rest of the body is read from the socket directly (see readinto1).
        self._may_switch = True
        self._recv_into: Callable[[memoryview], int] | None = None
        self._left = 0
        self._gather = gather
        self._low_water: _LowWater | None = None

    def readinto1(self, buffer: memoryview) -> int:
        """Up to ``len(buffer)`` bytes of the body into ``buffer``, from at most one socket read;
        0 once the body is complete. A connection lost midway raises LinkTransportError.

        Nothing waits for the buffer to fill: bytes reach the caller, and the file, as soon as the
        network delivers them (over loopback, once `LOOPBACK_READ_AT_LEAST` of them are there, while
        at least twice that much of the body is still to come). The first reads go through urllib3,
        and the first one hands over what arrived with the headers without waiting for more. Once
        http.client's buffer is known to be empty, where the body is as it is on the wire (a
        Content-Length, no chunked framing; nothing is decoded anyway), the socket is read straight
        into ``buffer``: no new object per read, which on a server that sends 64 KiB at a time costs
        more than the copy itself (every read of a large block would map fresh memory for it).
        """
        recv = self._recv_into
        if recv is None:
            return self._through_urllib3(buffer)
        left = self._left
        if not left:
            return 0
        wanted = buffer[:left] if left < len(buffer) else buffer
        low_water = self._low_water
        try:
            if low_water is not None:
                # A read that finds fewer bytes than it waits for takes them, then sleeps until
                # that many more are queued: so it waits only while at least twice as many are
                # still to come, and the body's last bytes are read as they arrive.
                low_water.set(self._gather if left >= 2 * self._gather else 1)
            got = recv(wanted)
        except (OSError, ValueError) as error:
            # ValueError: the socket was closed under the read (an abort from another thread).
            raise LinkTransportError(f"{type(error).__name__}: {error}", retryable=True) from error
        if not got:
            raise LinkTransportError(
                f"the connection closed or fell silent with {left} bytes of the body to come",
                retryable=True,
            )
        self._left = left - got
        if low_water is not None and not self._left:
            # The body is complete: whatever reads the connection next (an answer's headers) must
            # not wait for more than a byte (it is 1 already unless the tail rule changes).
            low_water.reset()
        return got

    def _through_urllib3(self, buffer: memoryview) -> int:
        raw = self._raw
        try:
            # read1 of a buffered reader returns what it holds without touching the socket, and
            # reads the socket once only when it holds nothing.
            block = raw.read1(len(buffer), decode_content=False)  # type: ignore[attr-defined]
        except Exception as error:
            translated = _translate(error)
            if translated is None:
                raise
            raise translated from error
        buffer[: len(block)] = block
        if self._may_switch and len(block) < len(buffer):
            # A read1 that returned less than asked emptied the buffer: it handed over all it held,
            # or held nothing and read the socket into the answer itself.
            self._may_switch = False
            sock, self._left = _socket_reader(raw)
            if sock is not None:
                self._recv_into = sock.recv_into
                if self._gather > 1:
                    self._low_water = _LowWater.on_loopback(sock)
        return len(block)

    def iter_blocks(self) -> Iterator[bytes]:
        """The body as it arrives, one socket read per block (up to BLOCK_BYTES, whatever is there)."""
        buffer = memoryview(bytearray(BLOCK_BYTES))
        while got := self.readinto1(buffer):
            yield bytes(buffer[:got])

    def abort(self) -> None:
        """End the transfer from another thread: a read blocked on the socket returns at once.

        Used when another file of the same download failed and this one must stop too; calling it
        on a response that already finished, or twice, does nothing.
        """
        with contextlib.suppress(Exception):
            self._raw.shutdown()


class _LowWater:
    """``SO_RCVLOWAT`` of one loopback socket: how many bytes a read waits for (1, the default).

    Set only when it changes (once per body, then for its tail, then back to 1). A value the kernel
    refuses, or cannot hold in the socket's buffer (an older kernel that does not grow the buffer
    for it), turns it off for the socket: reads then return whatever is there, as elsewhere.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._value = 1
        self._off = False

    @classmethod
    def on_loopback(cls, sock: socket.socket) -> _LowWater | None:
        """One for ``sock`` when its peer is a loopback address; None for any other socket."""
        import ipaddress
        import socket

        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return None
        try:
            loopback = ipaddress.ip_address(sock.getpeername()[0]).is_loopback
        except (OSError, ValueError):
            return None
        return cls(sock) if loopback else None

    def set(self, wanted: int) -> None:
        import socket

        wanted = max(1, wanted)
        if self._off or wanted == self._value:
            return
        try:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, wanted)
            room = self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
            if wanted > 1 and room < wanted:
                self._off = True
                self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, 1)
                wanted = 1
        except OSError:
            self._off = True
            return
        self._value = wanted

    def reset(self) -> None:
        if not self._off and self._value != 1:
            self.set(1)


def _socket_reader(raw: Any) -> tuple[socket.socket | None, int]:
    """The connection's socket and the body bytes still to come, when the rest of the body can be
    read from the socket as it is; (None, 0) to go on reading through urllib3.

    Called once a read left http.client's buffer empty. The body must have a known length and no
    chunked framing, and the socket must be a real one: inside a TLS proxy tunnel it is an object
    of urllib3's, read through urllib3.
    """
    import socket

    left = raw.length_remaining
    sock = getattr(raw.connection, "sock", None)
    if raw.chunked or not isinstance(left, int) or left <= 0 or not isinstance(sock, socket.socket):
        return None, 0
    return sock, left


def _kernel_read_timeout(seconds: float) -> list[tuple[int, int, int | bytes]]:
    """Socket options that have the kernel time out a silent read (Linux), or [] to leave the
    timeout to Python.

    A socket with a Python timeout is non-blocking underneath: every read that finds nothing
    waiting costs a failed recv, a poll and a second recv, and on a server that sends 64 KiB at a
    time that is most reads. ``SO_RCVTIMEO`` keeps the same limit per read with one blocking recv;
    a read that hits it fails like a dropped connection (retried, continuing from the bytes kept).
    The options keep urllib3's defaults (``TCP_NODELAY``).
    """
    import socket
    import struct
    import sys

    from urllib3.connection import HTTPConnection

    if not sys.platform.startswith("linux") or seconds <= 0:
        return []
    whole = int(seconds)
    timeval = struct.pack("@ll", whole, int((seconds - whole) * 1_000_000))
    return [
        *HTTPConnection.default_socket_options,
        (socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval),
        (socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval),
    ]


@functools.lru_cache(maxsize=8)
def _ssl_context(verify: bool | str) -> ssl.SSLContext:
    """The SDK's SSL context for ``verify`` (`ct_core.http.pool.ssl_context`: httpx's rules).

    Loading a CA bundle takes tens of milliseconds, so a context is built once per process and
    value; contexts are safe to share between threads.
    """
    return ssl_context(verify)


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

    def __init__(
        self, verify: bool | str = True, timeouts: LinkTimeouts | None = None, *, connections: int = 1
    ) -> None:
        """``connections``: how many GETs may run at once (per host); a pool keeps that many open, so
        concurrent files neither wait for one another nor open and drop a connection per file."""
        # urllib3 is imported here, not with the module: only a download needs it (CLI start-up).
        import urllib3

        self._urllib3 = urllib3
        self._verify = verify
        times = timeouts or LinkTimeouts()
        self._socket_options = _kernel_read_timeout(times.read)
        # With the read timeout kept by the kernel, the socket itself blocks (read=None).
        read = None if self._socket_options else times.read
        self._timeout = urllib3.Timeout(connect=times.connect, read=read)
        self._retries = urllib3.Retry(
            total=None, connect=0, read=0, status=0, other=0, redirect=MAX_REDIRECTS, raise_on_redirect=True
        )
        self._connections = max(1, connections)
        self._managers: dict[str | None, urllib3.PoolManager] = {}
        self._proxies: dict[tuple[str, str | None], str | None] = {}
        self._lock = threading.Lock()

    def _proxy(self, scheme: str, host: str | None) -> str | None:
        """The proxy the environment names for ``scheme://host``, or None; looked up once per host
        and client: reading the environment for every file cost as much CPU as setting up the GET."""
        key = (scheme, host)
        with self._lock:
            if key in self._proxies:
                return self._proxies[key]
        proxy: str | None = None
        if host and not urllib.request.proxy_bypass(host):
            proxy = urllib.request.getproxies().get(scheme)
        with self._lock:
            self._proxies[key] = proxy
        return proxy

    def _manager(self, url: str) -> urllib3.PoolManager:
        """The pool for ``url``: direct, or through the proxy the environment names for it."""
        parts = urlsplit(url)
        proxy = self._proxy(parts.scheme, parts.hostname)
        with self._lock:
            manager = self._managers.get(proxy)
            if manager is None:
                options: dict[str, Any] = {
                    "retries": self._retries,
                    "ssl_context": _ssl_context(self._verify),
                    "maxsize": self._connections,
                }
                if self._socket_options:
                    options["socket_options"] = self._socket_options
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
            # Reads block in the kernel only with its read timeout (Linux): only then may a read
            # wait for a number of bytes.
            yield LinkResponse(raw, gather=LOOPBACK_READ_AT_LEAST if self._socket_options else 0)
        finally:
            # An unread remainder is dropped with its connection rather than drained.
            raw.close()
            raw.release_conn()

    def close(self) -> None:
        with self._lock:
            for manager in self._managers.values():
                manager.clear()
            self._managers.clear()
            self._proxies.clear()
