"""Keep-alive HTTP/1.1 connections over the standard library, for a client with no proxy.

`ct_core.http.pool.Pool` sends through this module whenever the environment names no proxy for the
client's origin (plain HTTP or HTTPS); a proxied client keeps httpcore's pool. Both sit behind the
same `Pool.send` / `Pool.stream` interface, so `Transport.request()` stays the one request path.

Why: a training loop makes thousands of tiny step and poll requests. Profiling showed most of the
client's time per request inside the generic HTTP machinery (h11's event state machine, httpcore's
per-request trace and pool bookkeeping), and a small POST written as two packets (head, then body)
costs the server a second wake-up. Here a request is one write of bytes built once, and the answer
is read into a buffer the connection reuses and parsed by llhttp, Node.js's HTTP parser in C,
through httptools (status line, headers, Content-Length or chunked bodies, keep-alive): the
standard library's `http.client` parser, which a bare `http.client` loop uses, builds an
`email.message.Message` per answer and cost more than all the rest of a small request.

What this layer guarantees, as the httpcore road does:

- keep-alive: a connection whose answer was read to its end goes back onto a thread-safe stack of
  idle ones, and the next request takes the most recently used one; at most `max_connections` are
  open at once, and a request waits up to its pool timeout for one (then `CTTimeoutError`, with
  `never_sent`);
- an idle connection the server has closed (or written to unasked) is noticed before it is used,
  by polling its socket, and dropped; the request goes out on another one, so it is sent once.
  When the first write of a request to a reused connection fails before the socket took a single
  byte, the server cannot have seen the request, and it is written once more on a new connection.
  No other failure is repeated here: it is raised with `never_sent=False` and the caller's retry
  rule decides (a step is not repeated when its answer is lost);
- a server that answers before it has read the whole body (a 413, say) and closes: the answer is
  read and returned, as httpcore does, instead of the failed write;
- timeouts: connecting (the TLS handshake included) under the connect timeout, writing the request
  under the write timeout, waiting for and reading the answer under the read timeout;
- TLS with the caller's SSL context (`ct_core.http.pool.ssl_context`: certificates and host names
  verified unless turned off); a failed check becomes `TLSVerificationError`;
- an informational answer other than 100 Continue (which is skipped) is refused as a
  broken exchange and its connection dropped, so a later answer can never be taken for another
  request's;
- request bodies as bytes (a small one sent with the head in one write) or an iterable of byte
  slices written as they are, held to the declared Content-Length;
- the request target and header names and values are checked before anything is sent (no line
  break can slip into the head);
- an answer's head is held to 64 KiB and 100 header fields;
- every failure below HTTP is a `CTConnectionError` (or subclass), raised here and only here.
"""

from __future__ import annotations

import re
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

import httptools

from ct_core.errors import CTConnectionError, CTTimeoutError, TLSVerificationError

#: A request body: bytes, or an iterable of byte slices (a chunk frame built from views).
Body = bytes | Iterable[bytes | memoryview]
Headers = list[tuple[bytes, bytes]]
Timeouts = dict[str, float | None]


class RawResponse(NamedTuple):
    """A finished answer: status, headers as sent, and the whole body."""

    status: int
    headers: Headers
    content: bytes


#: Bytes one read from the socket asks for (into the connection's own reused buffer): the most a
#: streamed answer hands over per block.
STREAM_BLOCK_BYTES = 64 * 1024
#: The most bytes an answer's status line and headers may take, and the most header fields in it
#: (a server that never ends its head cannot make the client read forever).
MAX_HEAD_BYTES = 64 * 1024
MAX_HEADER_FIELDS = 100
#: Bodies up to this size are joined to the head (one copy, one write); larger ones are written apart.
JOINED_BODY_BYTES = 64 * 1024
_CONTENT_LENGTH = b"content-length"
#: A header name is an RFC 9110 token.
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: A request target never holds a space or a control character (it is percent-encoded).
_BAD_TARGET = re.compile(r"[\x00-\x20\x7f]")
#: What a failed first write on a reused connection says: the server had closed it.
_STALE_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)
#: Header fields that frame a body: with neither, the body runs until the server closes.
_FRAMING = (b"content-length", b"transfer-encoding")
_READABLE = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP if hasattr(select, "poll") else 0


class _Connection:
    """One open socket (TLS or not), and whether it has carried a request before."""

    __slots__ = ("buffer", "poller", "reused", "sock", "view")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reused = False
        # Answers are read into this buffer, reused from read to read; the parser copies out of it.
        self.buffer = bytearray(STREAM_BLOCK_BYTES)
        self.view = memoryview(self.buffer)
        # poll(), unlike select(), works for any file descriptor number.
        self.poller = select.poll() if _READABLE else None
        if self.poller is not None:
            self.poller.register(sock, _READABLE)

    def is_dead(self) -> bool:
        """True when an idle socket is readable: the server closed it, reset it or wrote unasked."""
        sock = self.sock
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return True
        try:
            if self.poller is not None:
                return bool(self.poller.poll(0))
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class _MalformedAnswer(Exception):
    """The server's bytes are no HTTP/1.1 answer we may take (never leaves: `CTConnectionError`)."""


class _Answer:
    """One answer read off a connection; llhttp (through httptools) parses what the socket gives.

    The parser calls the `on_*` methods as it goes: it may see an interim 100 Continue, the head,
    body pieces (already de-chunked) and the end of the message, in any split over reads.
    """

    __slots__ = (
        "blocks",
        "complete",
        "connection",
        "extra",
        "head_done",
        "headers",
        "interim",
        "keep",
        "parser",
        "problem",
        "seen",
        "status",
    )

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.headers: Headers = []
        self.blocks: list[bytes] = []
        self.head_done = self.complete = self.interim = self.extra = self.keep = False
        self.problem: str | None = None
        self.seen = 0

    # --- llhttp's callbacks ------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.complete:
            self.extra = True  # the server wrote beyond its answer: this connection is not clean

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.head_done:
            return  # a chunked body's trailer fields: not part of the head handed back
        self.headers.append((name, value))
        if len(self.headers) > MAX_HEADER_FIELDS:
            self.problem = f"the answer has more than {MAX_HEADER_FIELDS} header fields"

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if status >= 200:
            self.status, self.head_done = status, True
        elif status == 100:
            # 100 Continue is only a go-ahead: the final answer follows on the same connection.
            self.interim, self.headers = True, []
        else:
            # Any other interim answer is refused: the answer behind it could be taken for the
            # next request's.
            self.problem = f"informational answer {status} before the final one"

    def on_body(self, body: bytes) -> None:
        if not self.complete:
            self.blocks.append(body)

    def on_message_complete(self) -> None:
        if self.interim:
            self.interim = False
        elif self.head_done and not self.complete:
            self.complete = True
            self.keep = self.parser.should_keep_alive()

    # --- reading -----------------------------------------------------------------------------------

    def _feed(self) -> bool:
        """Read once from the socket and parse it; False when the server has closed."""
        connection = self.connection
        taken = connection.sock.recv_into(connection.buffer)
        if not taken:
            return False
        try:
            self.parser.feed_data(connection.view[:taken])
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as error:
            if not self.complete:
                raise _MalformedAnswer(self.problem or f"{type(error).__name__}: {error}") from error
            self.extra = True  # what followed the answer is no HTTP: the answer stands, the connection goes
        if self.problem is not None:
            raise _MalformedAnswer(self.problem)
        if not self.head_done:
            self.seen += taken  # all of it head so far
            if self.seen > MAX_HEAD_BYTES:
                raise _MalformedAnswer(f"the answer's head is longer than {MAX_HEAD_BYTES} bytes")
        return True

    def read_head(self) -> None:
        """Read until the final answer's status and headers are in."""
        while not self.head_done:
            if not self._feed():
                raise _MalformedAnswer("the server closed the connection without an answer")

    def _closed_early(self) -> None:
        """The server closed before the body's end: fine only for a body that runs to the close."""
        framed = any(name.lower() in _FRAMING for name, _ in self.headers)
        if framed:
            raise _MalformedAnswer("the server closed the connection before the answer's body ended")
        self.complete, self.keep = True, False

    def read_block(self) -> bytes:
        """The next piece of the body (b"" at its end)."""
        while not self.blocks:
            if self.complete:
                return b""
            if not self._feed():
                self._closed_early()
        return self.blocks.pop(0)

    def read_all(self) -> bytes:
        """The whole body."""
        while not self.complete:
            if not self._feed():
                self._closed_early()
        blocks, self.blocks = self.blocks, []
        return blocks[0] if len(blocks) == 1 else b"".join(blocks)

    @property
    def reusable(self) -> bool:
        """The answer ended cleanly and the server keeps the connection open (HTTP/1.1, no `close`)."""
        return self.complete and self.keep and not self.extra


class _StaleConnection(Exception):
    """The first write on a reused connection failed before the socket took any byte."""


def _broken(error: BaseException, url: str) -> CTConnectionError:
    return CTConnectionError(f"connection failed for url: {url}: {type(error).__name__}: {error}", url=url)


def _read_failure(error: BaseException, url: str) -> CTConnectionError:
    if isinstance(error, TimeoutError):
        return CTTimeoutError(f"ReadTimeout for url: {url}: {error}", url=url)
    return _broken(error, url)


class DirectPool:
    """Keep-alive HTTP/1.1 connections to one origin, with no proxy (see the module docstring)."""

    def __init__(
        self,
        *,
        https: bool,
        host: str,
        port: int,
        host_header: bytes,
        base_path: str,
        context: ssl.SSLContext | None,
        max_connections: int,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if https and context is None:
            raise ValueError("an HTTPS pool needs an SSL context")
        self.https = https
        self.host = host
        self.port = port
        self.host_header = host_header
        self.base_path = base_path
        self._context = context
        if context is not None:
            # This layer speaks HTTP/1.1 only: never let a server pick anything else.
            context.set_alpn_protocols(["http/1.1"])
        self._origin = f"{'https' if https else 'http'}://{host_header.decode('latin-1')}{base_path}"
        # One lock guards the idle stack and the count of free slots (connections that may open or
        # be in use beside those running): a request takes both in one acquisition.
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self._slot_freed = threading.Condition(self._lock)
        self._free_slots = max_connections
        self._waiting = 0
        self._closed = False
        self._checked_names: set[bytes] = set()

    def url(self, target: str) -> str:
        """The absolute URL of a request target on this origin, for messages."""
        return self._origin + target

    # --- connections -----------------------------------------------------------------------------

    def _connect(self, timeout: float | None, url: str) -> _Connection:
        """A new connection, TLS handshake done, or the ct exception saying nothing was sent."""
        where = f" for url: {url}"
        sock: socket.socket | None = None
        try:
            # An ASCII host goes to getaddrinfo as bytes: a str host would load the idna codec.
            host: str | bytes = self.host.encode("ascii") if self.host.isascii() else self.host
            # (typeshed says str; getaddrinfo, which create_connection hands it to, takes bytes too)
            sock = socket.create_connection((host, self.port), timeout=timeout)  # type: ignore[arg-type]
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._context is not None:
                sock = self._context.wrap_socket(sock, server_hostname=self.host)
        except TimeoutError as error:
            if sock is not None:
                sock.close()
            raise CTTimeoutError(f"ConnectTimeout{where}: {error}", url=url, never_sent=True) from error
        except (OSError, ValueError) as error:
            if sock is not None:
                sock.close()
            if isinstance(error, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(error):
                raise TLSVerificationError(
                    f"TLS certificate verification failed{where}: {error}. The certificate is untrusted, "
                    "expired or issued for another name; check the host, or pass verify_ssl=False / "
                    "--no-verify-ssl for a trusted test server.",
                    url=url,
                    never_sent=True,
                ) from error
            raise CTConnectionError(f"could not connect{where}: {error}", url=url, never_sent=True) from error
        return _Connection(sock)

    def _take_slot(self, pool_timeout: float | None, url: str) -> _Connection | None:
        """Wait (up to the pool timeout) for a free slot; return the newest idle connection, if any."""
        with self._lock:
            if not self._free_slots:
                deadline = None if pool_timeout is None else time.monotonic() + pool_timeout
                self._waiting += 1
                try:
                    while not self._free_slots:
                        remaining = None if deadline is None else deadline - time.monotonic()
                        if remaining is not None and remaining <= 0:
                            raise CTTimeoutError(
                                f"PoolTimeout for url: {url}: no connection came free in {pool_timeout} s",
                                url=url,
                                never_sent=True,
                            )
                        self._slot_freed.wait(remaining)
                finally:
                    self._waiting -= 1
            self._free_slots -= 1
            return self._idle.pop() if self._idle else None

    def _give_slot(self, keep: _Connection | None = None) -> None:
        with self._lock:
            self._free_slots += 1
            if keep is not None:
                self._idle.append(keep)
            if self._waiting:
                self._slot_freed.notify()

    def _acquire(self, timeouts: Timeouts, url: str) -> _Connection:
        """A slot and an open connection: the newest idle one that is still alive, else a new one."""
        if self._closed:
            raise CTConnectionError(f"the connection pool is closed (url: {url})", url=url, never_sent=True)
        connection = self._take_slot(timeouts.get("pool"), url)
        try:
            while connection is not None and connection.is_dead():
                connection.close()
                with self._lock:
                    connection = self._idle.pop() if self._idle else None
            return connection if connection is not None else self._connect(timeouts.get("connect"), url)
        except BaseException:
            self._give_slot()
            raise

    def _release(self, connection: _Connection, reusable: bool) -> None:
        """Give the slot back; keep the connection idle when its last answer left it usable."""
        if reusable and not self._closed:
            connection.reused = True
            self._give_slot(connection)
        else:
            connection.close()
            self._give_slot()

    # --- one exchange ----------------------------------------------------------------------------

    def _head(self, method: str, target: str, headers: Headers) -> tuple[bytes, int | None]:
        """The request line and headers as bytes, and the declared Content-Length; ValueError if bad."""
        if _BAD_TARGET.search(target):
            raise ValueError(f"the request target {target!r} holds a space or a control character")
        parts = [
            method.encode("ascii"),
            b" ",
            (self.base_path + target).encode("ascii"),
            b" HTTP/1.1\r\nHost: ",
        ]
        parts.append(self.host_header)
        declared: int | None = None
        checked = self._checked_names
        for name, value in headers:
            if name not in checked:
                if not _TOKEN.fullmatch(name):
                    raise ValueError(f"invalid header name {name!r}")
                checked.add(name)
            if b"\r" in value or b"\n" in value or b"\0" in value:
                raise ValueError(f"the value of header {name.decode('latin-1')} holds a line break or NUL")
            parts += (b"\r\n", name, b": ", value)
            if len(name) == 14 and name.lower() == _CONTENT_LENGTH:
                declared = int(value)
        parts.append(b"\r\n\r\n")
        return b"".join(parts), declared

    @staticmethod
    def _write(connection: _Connection, first: bytes, rest: Body | None, declared: int | None) -> None:
        """Write `first` (the head, maybe with a small body), then `rest` (bytes or byte slices).

        Raises `_StaleConnection` when a reused connection's socket refused the very first byte.
        """
        sock = connection.sock
        if connection.reused:
            try:
                taken = sock.send(first)
            except _STALE_ERRORS as error:
                raise _StaleConnection() from error
            if taken < len(first):
                sock.sendall(memoryview(first)[taken:])
        else:
            sock.sendall(first)
        if rest is None:
            return
        if isinstance(rest, bytes):
            sock.sendall(rest)
            return
        sent = 0
        for piece in rest:
            size = memoryview(piece).nbytes
            if declared is not None and sent + size > declared:
                raise ValueError(f"the request body is longer than its Content-Length ({declared})")
            if size:
                sock.sendall(piece)
                sent += size
        if declared is not None and sent != declared:
            raise ValueError(f"the request body ended after {sent} of its {declared} declared bytes")

    def _exchange(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts, url: str
    ) -> tuple[_Connection, _Answer, bool]:
        """Take a connection, write the request, read the answer's head.

        Returns the connection, the answer (its body maybe not yet read) and whether the request
        was written whole (a connection whose write failed is never kept).
        On failure the connection is closed, its slot given back, and the ct exception
        raised.
        """
        try:
            head, declared = self._head(method, target, headers)
            if isinstance(body, bytes) and declared is not None and len(body) != declared:
                raise ValueError(f"the request body has {len(body)} bytes but declares {declared}")
        except ValueError as error:
            raise CTConnectionError(f"refused to send to {url}: {error}", url=url, never_sent=True) from error
        # A small body travels in the same packet as the head: one write, one wake-up of the server.
        rest: Body | None = body
        if isinstance(body, bytes) and len(body) <= JOINED_BODY_BYTES:
            head, rest = head + body, None
        connection = self._acquire(timeouts, url)
        write_error: OSError | None = None
        try:
            write_timeout, read_timeout = timeouts.get("write"), timeouts.get("read")
            connection.sock.settimeout(write_timeout)
            try:
                try:
                    self._write(connection, head, rest, declared)
                except _StaleConnection:
                    # The server closed this idle connection before it took a byte: use a new one.
                    connection.close()
                    connection = self._connect(timeouts.get("connect"), url)
                    connection.sock.settimeout(write_timeout)
                    self._write(connection, head, rest, declared)
            except CTConnectionError:
                raise  # the new connection could not be opened (an OSError too, but nothing was sent)
            except TimeoutError as error:
                raise CTTimeoutError(f"WriteTimeout for url: {url}: {error}", url=url) from error
            except OSError as error:
                # The server may have answered early (a 413, a 401) and closed: read that answer.
                write_error = error
            except ValueError as error:
                raise _broken(error, url) from error
            if read_timeout != write_timeout:
                connection.sock.settimeout(read_timeout)
            answer = _Answer(connection)
            try:
                answer.read_head()
            except (OSError, _MalformedAnswer) as error:
                if write_error is not None:
                    raise _broken(write_error, url) from write_error
                raise _read_failure(error, url) from error
        except BaseException:
            self._release(connection, False)
            raise
        return connection, answer, write_error is None

    def send(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> RawResponse:
        """Send one request and read the whole answer."""
        url = self._origin + target
        connection, answer, written = self._exchange(method, target, headers, body, timeouts, url)
        reusable = False
        try:
            content = answer.read_all()
            reusable = written and answer.reusable
        except (OSError, _MalformedAnswer) as error:
            raise _read_failure(error, url) from error
        finally:
            self._release(connection, reusable)
        return RawResponse(answer.status, answer.headers, content)

    @contextmanager
    def stream(
        self, method: str, target: str, headers: Headers, body: Body | None, timeouts: Timeouts
    ) -> Iterator[tuple[int, Headers, Iterator[bytes]]]:
        """Send one request and yield (status, headers, body blocks); the connection is put away after.

        The connection is kept for another request only when the body was read to its end.
        """
        url = self._origin + target
        connection, answer, written = self._exchange(method, target, headers, body, timeouts, url)
        finished = False

        def blocks() -> Iterator[bytes]:
            nonlocal finished
            while True:
                try:
                    block = answer.read_block()
                except (OSError, _MalformedAnswer) as error:
                    raise _read_failure(error, url) from error
                if not block:
                    finished = True
                    return
                yield block

        try:
            yield answer.status, answer.headers, blocks()
        finally:
            self._release(connection, finished and written and answer.reusable)

    def close(self) -> None:
        """Close the idle connections; those in use are closed when their request ends."""
        self._closed = True
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


__all__ = [
    "JOINED_BODY_BYTES",
    "STREAM_BLOCK_BYTES",
    "Body",
    "DirectPool",
    "Headers",
    "RawResponse",
    "Timeouts",
]
