"""Fault injection: make the local server misbehave on purpose, for tests and benchmarks.

A rule matches requests by path regex (searched in the decoded path) and optional method, and
then, for its next ``count`` matches (every match when ``count`` is null), either answers with a
chosen status and body (``respond``), closes the connection without answering (``drop``), or
waits ``delay_s`` seconds before handling the request normally (``delay``). ``skip`` lets that
many matches through first, so a test can fail "the second poll". Rules come from the settings at
start-up and from the loopback-only admin route ``/_ct/faults`` at runtime; admin paths are never
faulted, so a test can always clear what it scripted.

Rule JSON: ``{"path": "/step$", "method": "POST", "action": "respond", "status": 503,
"body": {"message": "busy"}, "headers": {"retry-after": "0"}, "count": 2, "skip": 0,
"delay_s": 0}``.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ct_core import constants

ACTIONS = ("respond", "drop", "delay")
ADMIN_PREFIX = "/_ct/"
REQUEST_ID_HEADER = constants.REQUEST_ID_HEADER


@dataclass
class FaultRule:
    path: re.Pattern[str]
    method: str | None = None
    action: str = "respond"
    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    count: int | None = 1
    skip: int = 0
    delay_s: float = 0.0
    hits: int = 0

    @classmethod
    def from_json(cls, spec: Mapping[str, Any]) -> FaultRule:
        known = {"path", "method", "action", "status", "body", "headers", "count", "skip", "delay_s"}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(f"unknown fault rule key(s): {', '.join(unknown)}")
        action = str(spec.get("action", "respond"))
        if action not in ACTIONS:
            raise ValueError(f"fault action must be one of {', '.join(ACTIONS)}, got {action!r}")
        count = spec.get("count", 1)
        if count is not None and (not isinstance(count, int) or count < 0):
            raise ValueError("fault count must be a non-negative integer or null")
        method = spec.get("method")
        return cls(
            path=re.compile(str(spec.get("path", ""))),
            method=str(method).upper() if method else None,
            action=action,
            status=int(spec.get("status", 500)),
            body=spec.get("body"),
            headers={str(k).lower(): str(v) for k, v in dict(spec.get("headers") or {}).items()},
            count=count,
            skip=int(spec.get("skip", 0)),
            delay_s=float(spec.get("delay_s", 0.0)),
        )

    def describe(self) -> dict[str, Any]:
        return {
            "path": self.path.pattern,
            "method": self.method,
            "action": self.action,
            "status": self.status,
            "count": self.count,
            "skip": self.skip,
            "delay_s": self.delay_s,
            "hits": self.hits,
        }


class FaultSet:
    """The active rules; the first rule that matches and still has uses decides."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []

    def add(self, specs: list[Mapping[str, Any]]) -> list[FaultRule]:
        rules = [FaultRule.from_json(s) for s in specs]
        with self._lock:
            self._rules.extend(rules)
        return rules

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def describe(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.describe() for r in self._rules]

    def take(self, method: str, path: str) -> FaultRule | None:
        with self._lock:
            for rule in self._rules:
                if rule.method not in (None, method) or not rule.path.search(path):
                    continue
                rule.hits += 1
                if rule.hits <= rule.skip:
                    return None
                if rule.count is not None and rule.hits - rule.skip > rule.count:
                    continue
                return rule
        return None


def _encode_body(body: Any) -> tuple[bytes, str]:
    if body is None:
        return b"", "application/json"
    if isinstance(body, str):
        return body.encode(), "text/plain; charset=utf-8"
    return json.dumps(body).encode(), "application/json"


class FaultMiddleware:
    """Outermost ASGI layer: applies the first matching fault before the app sees the request."""

    def __init__(self, app: ASGIApp, faults: FaultSet) -> None:
        self.app = app
        self.faults = faults

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(ADMIN_PREFIX):
            await self.app(scope, receive, send)
            return
        rule = self.faults.take(scope["method"], scope["path"])
        if rule is None:
            await self.app(scope, receive, send)
            return
        if rule.delay_s > 0:
            await asyncio.sleep(rule.delay_s)
        if rule.action == "delay":
            await self.app(scope, receive, send)
        elif rule.action == "drop":
            await _drop(send)
        else:
            payload, content_type = _encode_body(rule.body)
            headers = {"content-type": content_type, REQUEST_ID_HEADER: str(uuid.uuid4()), **rule.headers}
            headers["content-length"] = str(len(payload))
            await send(
                {
                    "type": "http.response.start",
                    "status": rule.status,
                    "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
                }
            )
            await send({"type": "http.response.body", "body": payload})


async def _drop(send: Send) -> None:
    """Close the connection without a response.

    uvicorn's ``send`` is a bound method of its request cycle, which holds the socket transport;
    aborting that transport is the only way an ASGI app can hang up mid-request. When the server
    is not uvicorn, a response that promises a body and never delivers it is the fallback: the
    server then closes the connection because the response is incomplete.
    """
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is not None and hasattr(transport, "abort"):
        transport.abort()
        # Let connection_lost run so the server sees a disconnect rather than a missing response.
        await asyncio.sleep(0.01)
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"100")]})
    await send({"type": "http.response.body", "body": b"", "more_body": True})
