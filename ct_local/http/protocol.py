"""The HTTP/1.1 protocol the local server speaks: uvicorn's httptools road, with the request head bounded.

Why httptools: a training loop is thousands of small requests (a step, its polls), and with uvicorn's
h11 road about a seventh of the server's interpreter time went to parsing them in pure Python;
llhttp (C, through httptools) does it for a fraction. ct_core's client already needs httptools.

Why a subclass: uvicorn's httptools road reads a request head of any length into memory (a caller
that sends one endless header line fills the server's memory), where h11 stops at 16 KiB. This
protocol counts a request's head as the parser hands it over (the target, each header) and what
arrives while a head is still incomplete (an endless line never reaches a callback); past
`MAX_HEAD_BYTES` either way it answers 400 and closes the connection, as the h11 road does. Bodies
are bounded elsewhere (ct_local.http.limits).
"""

from __future__ import annotations

import asyncio

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: The longest request line and headers taken, as uvicorn's h11 road allows.
MAX_HEAD_BYTES = 16 * 1024


class HeadTooLarge(httptools.HttpParserError):
    """Raised from a parser callback: uvicorn answers a parser error 400 and closes the connection."""


class BoundedHeadProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol; a request head longer than `MAX_HEAD_BYTES` is refused."""

    #: True while the bytes that arrive belong to a request's head (from the connection's start,
    #: and from the start of each request until its headers are complete).
    in_head = True
    #: The current request's head bytes the parser handed over, those read while its head was
    #: incomplete, and whether a request began in the last read (then that read's bytes were partly
    #: the previous request's, and are not counted as read head bytes).
    parsed_bytes = 0
    head_bytes = 0
    began = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.in_head, self.parsed_bytes, self.head_bytes, self.began = True, 0, 0, False
        super().connection_made(transport)

    def on_message_begin(self) -> None:
        self.in_head, self.parsed_bytes, self.head_bytes, self.began = True, 0, 0, True
        super().on_message_begin()

    def _parsed(self, size: int) -> None:
        self.parsed_bytes += size
        if self.parsed_bytes > MAX_HEAD_BYTES:
            raise HeadTooLarge(f"the request head is longer than {MAX_HEAD_BYTES} bytes")

    def on_url(self, url: bytes) -> None:
        self._parsed(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._parsed(len(name) + len(value) + 4)  # ": " and the line's end
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self.in_head = False
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        self.began = False
        super().data_received(data)
        if not self.in_head or self.transport.is_closing():
            return
        # Still inside a head after this read: what it brought is head, except what came before a
        # request that began in it (not counted; the head is then held to one read more at most).
        if not self.began:
            self.head_bytes += len(data)
        if self.head_bytes > MAX_HEAD_BYTES:
            self.send_400_response("Request head too large.")
