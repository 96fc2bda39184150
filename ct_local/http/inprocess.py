"""Requests of the services inside `ct local serve` to this very server, without a socket.

A service the server hosts (the Tinker API) acts on the server through ct_core, as any caller
does: same routes, same middleware, same token checks, same answers. Over loopback each of its
requests also costs both ends of an HTTP/1.1 exchange in the server's one interpreter: ct_core's
client writes and parses it on the service's thread, uvicorn parses and writes it on the event
loop. `InProcessRoad` hands the request to the server's ASGI app on the server's event loop
instead, and the answer back block by block as the app sends it: only the bytes on the wire are
skipped.

It is ct_core's `Road` (`usable`, `send`, `stream`): a client made with
`CortexTrainingClient(..., road=...)` sends through it while `usable()` is true, and through its
own connections otherwise. It is not usable on the event loop's own thread (that thread would wait
on itself) nor once the server has stopped (`close`): the client's socket then gets what any
caller gets.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import unquote

from starlette.types import ASGIApp, Message

from ct_core.errors import CTConnectionError, CTTimeoutError

Headers = list[tuple[bytes, bytes]]

log = logging.getLogger("ct_local.http.inprocess")

#: The answer's last block was sent; the app returned (after it, or having broken off).
_END = ("end", None)
_RETURNED = ("returned", None)


class _Exchange:
    """One request on the event loop: the answer's head and blocks go into a thread-safe queue."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.body_taken = False
        self.answers: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        # Bound to the server's loop on first use (there), set from the caller's thread through it.
        self.gone = asyncio.Event()

    async def receive(self) -> Message:
        if not self.body_taken:
            self.body_taken = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        # The body was read: the next message is the caller going away (a stream closed early).
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.answers.put(("head", (int(message["status"]), list(message.get("headers", [])))))
        elif message["type"] == "http.response.body":
            block = bytes(message.get("body", b""))
            if block:
                self.answers.put(("body", block))
            if not message.get("more_body", False):
                self.answers.put(_END)


class InProcessRoad:
    """Requests to `app` (the server's ASGI app, as served) on the event loop it runs on."""

    def __init__(
        self, app: ASGIApp, loop: asyncio.AbstractEventLoop, loop_thread: int, server: tuple[str, int]
    ) -> None:
        self._app = app
        self._loop = loop
        self._loop_thread = loop_thread
        self._server = server
        self._closed = False
        self._counting = threading.Lock()
        self._requests = 0

    @classmethod
    def on_this_loop(cls, app: ASGIApp, server: tuple[str, int]) -> InProcessRoad:
        """The road to `app` on the running event loop; call it on that loop."""
        return cls(app, asyncio.get_running_loop(), threading.get_ident(), server)

    @property
    def requests(self) -> int:
        """Requests sent through this road so far (what a test or a benchmark reads)."""
        return self._requests

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The server's event loop, which runs every request of this road."""
        return self._loop

    def usable(self) -> bool:
        """False on the event loop's own thread, and once the server has stopped."""
        return not self._closed and threading.get_ident() != self._loop_thread

    def close(self) -> None:
        """The server stopped: requests go to the callers' sockets from now on."""
        self._closed = True

    def _scope(self, method: str, target: str, headers: Headers) -> dict[str, Any]:
        path, _, query = target.partition("?")
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": unquote(path),
            "raw_path": path.encode("ascii"),
            "query_string": query.encode("ascii"),
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 0),
            "server": self._server,
        }

    def send(
        self, method: str, target: str, headers: Headers, body: Any, timeouts: dict[str, float | None]
    ) -> tuple[int, Headers, bytes]:
        """Send one request and read the whole answer."""
        with self.stream(method, target, headers, body, timeouts) as (status, answer_headers, blocks):
            return status, answer_headers, b"".join(blocks)

    @contextlib.contextmanager
    def stream(
        self, method: str, target: str, headers: Headers, body: Any, timeouts: dict[str, float | None]
    ) -> Iterator[tuple[int, Headers, Iterator[bytes]]]:
        """Send one request and yield (status, headers, body blocks as the app sends them).

        Leaving early tells the app the caller went away (`http.disconnect`), as a closed socket
        would. Each block is waited for up to the read timeout (`CTTimeoutError`); an app that
        fails before it answered raises `CTConnectionError`, as a dropped connection does.
        """
        url = f"http://{self._server[0]}:{self._server[1]}{target}"
        content = _joined(body)
        head = [(name.lower(), value) for name, value in headers if name.lower() != b"content-length"]
        head.append((b"content-length", str(len(content)).encode("ascii")))
        if not any(name == b"host" for name, _ in head):
            head.append((b"host", f"{self._server[0]}:{self._server[1]}".encode("ascii")))
        exchange = _Exchange(content)
        scope = self._scope(method, target, head)

        async def run() -> None:
            try:
                await self._app(scope, exchange.receive, exchange.send)
            except BaseException as error:
                exchange.answers.put(("error", repr(error)))
                if not isinstance(error, asyncio.CancelledError):
                    # What uvicorn logs for a request over a socket, so no failure goes unseen.
                    log.exception("Exception in ASGI application (in-process request %s %s)", method, target)
                raise
            finally:
                exchange.answers.put(_RETURNED)

        try:
            future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        except RuntimeError:  # the loop is closed: the server is gone
            raise CTConnectionError(
                f"the local server has stopped: {url}", url=url, never_sent=True
            ) from None
        with self._counting:
            self._requests += 1
        wait = timeouts.get("read")

        def take() -> tuple[str, Any]:
            try:
                return exchange.answers.get(timeout=wait)
            except queue.Empty:
                raise CTTimeoutError(f"ReadTimeout for url: {url}: no answer in {wait} s", url=url) from None

        kind, value = take()
        if kind != "head":  # an app that returns unanswered: a connection closed without a word
            why = f": {value}" if kind == "error" else ""
            raise CTConnectionError(f"the local server ended {url} without an answer{why}", url=url)
        status, answer_headers = value

        def blocks() -> Iterator[bytes]:
            while True:
                kind, value = take()
                if kind == "end":
                    return
                if kind != "body":  # returned or failed before its last block: cut off
                    raise CTConnectionError(
                        f"the local server broke off its answer to {url}: {value or 'it ended'}", url=url
                    )
                yield value

        try:
            yield status, answer_headers, blocks()
        finally:
            if not future.done():
                # The caller went away before the answer's end: the app hears it, as from a socket.
                with contextlib.suppress(RuntimeError):  # the loop has closed meanwhile
                    self._loop.call_soon_threadsafe(exchange.gone.set)


def _joined(body: bytes | Iterable[Any] | None) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    return b"".join(bytes(part) for part in body)
