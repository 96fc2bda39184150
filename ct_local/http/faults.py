"""Fault injection: make the local server misbehave on purpose, for tests and benchmarks.

A rule matches requests by path regex (searched in the decoded path) and optional method, and
then, for its next ``count`` matches (every match when ``count`` is null), either answers with a
chosen status and body (``respond``), closes the connection without answering (``drop``), or
waits ``delay_s`` seconds before handling the request normally (``delay``), or lets it through
and parks the generation it submits (``hold``). ``skip`` lets that many matches through first, so a
test can fail "the second poll". Rules come from the settings at start-up and from the
loopback-only admin route ``/_ct/faults`` at runtime; admin paths are never faulted, so a test can
always clear what it scripted.

A hold is for acting on a generation that is certainly running (cancelling it, polling it) with
no race against its end: a ``hold`` rule that matches a request submitting a generation (``POST
.../{job_id}/generate`` or ``generate-stream``) arms one hold for that job, and the next generation
of the job that reaches a decoding step parks there (:meth:`GenerationHolds.park`, called by the
sampler) until the rules are cleared (``DELETE /_ct/faults``) or the server shuts down, or at
most ``HOLD_LIMIT_S``. The
rule lists the request ids it parks under ``held``, so a test waits for that rather than for time.

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

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ct_core import constants

ACTIONS = ("respond", "drop", "delay", "hold")
ADMIN_PREFIX = "/_ct/"
REQUEST_ID_HEADER = constants.REQUEST_ID_HEADER
#: The longest a held generation stays parked when nobody releases it: a test that forgets to clear
#: its faults (or dies) must not leave a worker parked for good, nor keep the server from stopping.
HOLD_LIMIT_S = 600.0


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
    #: The request ids of the generations a ``hold`` rule parked (while they stay parked).
    held: list[str] = field(default_factory=list)

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
        described: dict[str, Any] = {
            "path": self.path.pattern,
            "method": self.method,
            "action": self.action,
            "status": self.status,
            "count": self.count,
            "skip": self.skip,
            "delay_s": self.delay_s,
            "hits": self.hits,
        }
        if self.action == "hold":
            described["held"] = list(self.held)
        return described


@dataclass
class _Hold:
    rule: FaultRule
    #: The path of the request that armed it, which names the job whose generation it parks.
    path: str
    request_id: str | None = None


class GenerationHolds:
    """Generations parked on purpose (the ``hold`` fault): armed by a matching request, taken by
    the next generation of its job at a decoding step, released all at once by :meth:`release`.

    The sampler calls :meth:`park` at every decoding step, so its cost when nothing is armed is
    one attribute read.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._armed: list[_Hold] = []
        #: Bumped by every release; a parked generation waits for it to move.
        self._releases = 0
        self.armed = False

    def arm(self, rule: FaultRule, path: str) -> None:
        with self._changed:
            self._armed.append(_Hold(rule, path))
            self.armed = True

    def park(self, job_id: str, request_id: str) -> None:
        """Park this decoding step when a hold armed for ``job_id`` is waiting; return once released."""
        if not self.armed:
            return
        marker = f"/{job_id}/"
        with self._changed:
            hold = next((h for h in self._armed if h.request_id is None and marker in h.path), None)
            if hold is None:
                return
            hold.request_id = request_id
            hold.rule.held.append(request_id)
            releases = self._releases
            self._changed.wait_for(lambda: self._releases != releases, timeout=HOLD_LIMIT_S)
            if hold in self._armed:
                self._armed.remove(hold)
            if request_id in hold.rule.held:
                hold.rule.held.remove(request_id)
            self.armed = bool(self._armed)

    def release(self) -> None:
        """Let every parked generation go on, and forget the holds not taken yet."""
        with self._changed:
            self._armed.clear()
            self.armed = False
            self._releases += 1
            self._changed.notify_all()


class FaultSet:
    """The active rules; the first rule that matches and still has uses decides."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        #: The generations ``hold`` rules park; the sampling workers reach it through their boards.
        self.holds = GenerationHolds()

    def add(self, specs: list[Mapping[str, Any]]) -> list[FaultRule]:
        rules = [FaultRule.from_json(s) for s in specs]
        with self._lock:
            self._rules.extend(rules)
        return rules

    def clear(self) -> None:
        """Remove every rule and release every held generation."""
        with self._lock:
            self._rules.clear()
        self.holds.release()

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
        if scope["type"] == "lifespan":
            await self.app(scope, self._releasing_on_shutdown(receive), send)
            return
        if scope["type"] != "http" or scope["path"].startswith(ADMIN_PREFIX):
            await self.app(scope, receive, send)
            return
        rule = self.faults.take(scope["method"], scope["path"])
        if rule is None:
            await self.app(scope, receive, send)
            return
        if rule.delay_s > 0:
            await asyncio.sleep(rule.delay_s)
        if rule.action == "hold":
            # Armed before the request reaches its handler, so its generation cannot start first.
            self.faults.holds.arm(rule, scope["path"])
            await self.app(scope, receive, send)
        elif rule.action == "delay":
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

    def _releasing_on_shutdown(self, receive: Receive) -> Receive:
        """``receive`` of the lifespan, releasing every held generation when the shutdown comes:
        the app then stops its workers, and a parked one would keep it waiting."""

        async def releasing() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                self.faults.holds.release()
            return message

        return releasing


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
