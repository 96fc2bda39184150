"""What a request may send before any handler reads it: how long, how much, and how deeply nested.

:class:`BodyLimitMiddleware` stands in front of every route. It reads the whole request body itself,
under three limits of the server settings, and then hands the route the body it read:

- ``body_timeout_s``: the whole body must arrive within this many seconds of the request's start.
  A client that promises more bytes than it sends is answered 408 and the connection is closed,
  so slow or lying bodies cannot hold connections open.
- ``max_body_bytes``: a longer body is answered 413, by its Content-Length before anything is read,
  or as soon as more has arrived; the connection is closed, as the rest is never read.
- ``max_json_depth``: a JSON body nested deeper is answered 400 before any parser sees it. Python's
  parser recurses once per level and fails with RecursionError near a thousand levels, which would
  be a 500 and a dropped connection.

The nesting check looks at every body, whatever its content type says (the routes parse JSON
whatever the label): a body that decodes, the way ``json.loads`` decodes bytes, to text starting
with ``[`` or ``{`` is measured up to the first byte a JSON parser could not get past, so a binary
DSSST1 frame (whose first eight bytes hold zero bytes) ends the scan at once. Refusals carry the
service's error body, or OpenAI's on the ``/inference/v1/`` routes, and name the limit and its
setting.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ct_local.http import errors
from ct_local.settings import ServerSettings

#: What a JSON parser can read, token by token: a string (skipped whole, so brackets inside it
#: do not count; control characters end it, as they end the parser's), one bracket, or a run of
#: the other bytes JSON may hold outside strings (numbers, literals, separators, whitespace). Any
#: other byte is where a parser stops with a syntax error, and so is where the scan stops.
_TOKENS = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*"|[\[\]{}]|[\s,:0-9a-zA-Z.+\-]+', re.DOTALL)
_OPENERS = frozenset(b"[{")
_CLOSERS = frozenset(b"]}")
_INFERENCE_MARK = "/inference/v1/"


class _TooLarge(Exception):
    pass


class _Disconnected(Exception):
    pass


def json_text(raw: bytes) -> bytes | None:
    """``raw`` as UTF-8 text when a JSON parser would read it as an array or object, else None.

    Decodes as ``json.loads`` does for bytes (UTF-8, with or without a byte order mark, UTF-16 or
    UTF-32 by the pattern of zero bytes), so nothing the handlers parse escapes the depth check.
    """
    try:
        encoding = json.detect_encoding(raw)
        text = (
            raw
            if encoding == "utf-8"
            else raw.decode(encoding, "surrogatepass").encode("utf-8", "surrogatepass")
        )
    except (UnicodeError, LookupError):
        return None
    stripped = text.lstrip(b" \t\r\n")
    return text if stripped[:1] and stripped[0] in _OPENERS else None


def nesting_exceeds(text: bytes, limit: int) -> bool:
    """Whether the arrays and objects of JSON ``text`` nest deeper than ``limit`` levels.

    Counts brackets outside strings up to the first byte a parser could not read, so it is linear
    in the text, never recurses, and measures at least as far as any parser gets.
    """
    if text.count(b"[") + text.count(b"{") <= limit:
        return False  # too few brackets to reach the limit: the common case costs two scans in C
    depth = 0
    position = 0
    for match in _TOKENS.finditer(text):
        if match.start() != position:
            return False  # a byte no token covers: the parser stops there
        position = match.end()
        first = text[match.start()]
        if first in _OPENERS:
            depth += 1
            if depth > limit:
                return True
        elif first in _CLOSERS:
            depth = max(depth - 1, 0)
    return False


def _refusal(scope: Scope, status: int, message: str, *, close: bool) -> JSONResponse:
    headers = {"connection": "close"} if close else None
    if _INFERENCE_MARK in str(scope.get("path", "")):
        kind = "invalid_request_error"
        body: dict[str, Any] = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        return JSONResponse(body, status_code=status, headers=headers)
    code: str | int = errors.CODE_INVALID_REQUEST if status == 400 else status
    return JSONResponse({"message": message, "code": code}, status_code=status, headers=headers)


class BodyLimitMiddleware:
    """Reads every request body under the time, size and nesting limits of ``settings``."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        settings = self.settings
        limit = settings.max_body_bytes
        too_large = f"the request body is larger than {limit} bytes (max_body_bytes)"
        headers = Headers(scope=scope)
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            await _refusal(scope, 413, too_large, close=True)(scope, receive, send)
            return
        try:
            async with asyncio.timeout(settings.body_timeout_s):
                body = await self._read(receive, limit)
        except TimeoutError:
            message = f"the request body did not arrive within {settings.body_timeout_s:g} s (body_timeout_s)"
            await _refusal(scope, 408, message, close=True)(scope, receive, send)
            return
        except _TooLarge:
            await _refusal(scope, 413, too_large, close=True)(scope, receive, send)
            return
        except _Disconnected:
            return  # nobody is left to answer
        if body:
            text = json_text(body)
            depth = settings.max_json_depth
            if text is not None and nesting_exceeds(text, depth):
                message = f"the JSON body is nested deeper than {depth} levels (max_json_depth)"
                await _refusal(scope, 400, message, close=False)(scope, receive, send)
                return
        await self.app(scope, _replay(body, receive), send)

    @staticmethod
    async def _read(receive: Receive, limit: int) -> bytes:
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected()
            part = message.get("body", b"")
            size += len(part)
            if size > limit:
                raise _TooLarge()
            parts.append(part)
            if not message.get("more_body", False):
                return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the route the body already read, then waits on the connection as before."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
