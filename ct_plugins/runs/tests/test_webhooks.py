"""The run.completed webhook against a real HTTP receiver on loopback.

The receiver is a `ThreadingHTTPServer` that records every request (headers and body) and answers
from a script. Waits between attempts go through an injected sleep that only records the delay, so
the backoff and Retry-After are checked exactly and nothing waits for real.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from ct_runs import webhooks
from ct_runs.webhooks import body_for, check_url, deliver, deliver_all, sign, verify

from ct_core import __version__

SECRET = "whsec-test-0123456789abcdef"
RUN: dict[str, Any] = {
    "run_id": "run_01J9Z8X7W6V5T4S3R2Q1P0N9M8",
    "status": "succeeded",
    "model_id": "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9M9",
    "best_val_loss": 1.25,
    "early_stop": {"step": 40, "reason": "patience"},
    "gpu_seconds": 12.5,
    "config_fingerprint": "ab" * 32,
    "created_at": "2025-01-01T00:00:00Z",
    "finished_at": "2025-01-01T00:05:00Z",
    "trainer": {"epochs": 10},
}
DELIVERY = webhooks.delivery_id_for(RUN["run_id"])


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A loopback HTTP server: records requests, answers (status, headers) from `script` in order.

    Once the script is used up every request gets 200.
    """

    url: str = ""
    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, received: Received) -> tuple[int, dict[str, str]]:
        with self.lock:
            self.requests.append(received)
            return self.script.pop(0) if self.script else (200, {})


def _handler_for(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            status, extra = receiver.answer(Received(self.path, dict(self.headers.items()), body))
            payload = b'{"ok": true}' if 200 <= status < 300 else b'{"error": "scripted"}'
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(made))
    server.daemon_threads = True
    made.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/ct?token=t0k3n"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield made
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


@pytest.fixture
def dead_url() -> Iterator[str]:
    """A loopback port that is bound but not listening: every connection is refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
    finally:
        sock.close()


class Sleeps:
    """An injected sleep: records each delay, waits for none."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def _deliver(url: str, sleeps: Sleeps, **options: Any) -> webhooks.DeliveryResult:
    return deliver(url, body_for(RUN), secret=SECRET, delivery_id=DELIVERY, sleep=sleeps, **options)


# --- signature ---------------------------------------------------------------------------------------


def test_a_delivered_event_verifies_with_the_secret(receiver: Receiver) -> None:
    sleeps = Sleeps()
    result = _deliver(receiver.url, sleeps)
    assert result == webhooks.DeliveryResult(receiver.url, True, 1, 200, None)
    assert sleeps.delays == []
    [got] = receiver.requests
    assert got.path == "/hooks/ct?token=t0k3n"
    assert verify(SECRET, got.headers, got.body)
    headers = {name.lower(): value for name, value in got.headers.items()}
    assert headers["x-ct-event"] == "run.completed"
    assert headers["x-ct-delivery"] == f"{RUN['run_id']}.completed"
    assert headers["content-type"] == "application/json"
    assert headers["user-agent"] == f"ct-runs/{__version__}"
    timestamp = int(headers["x-ct-timestamp"])
    assert headers["x-ct-signature"] == sign(SECRET, timestamp, got.body)
    assert SECRET not in json.dumps(got.headers) and SECRET.encode() not in got.body


def test_a_tampered_body_a_wrong_secret_or_a_stale_timestamp_fails(receiver: Receiver) -> None:
    _deliver(receiver.url, Sleeps())
    [got] = receiver.requests
    assert verify(SECRET, got.headers, got.body)
    tampered = got.body.replace(b'"succeeded"', b'"failed"')
    assert tampered != got.body
    assert not verify(SECRET, got.headers, tampered)
    assert not verify("another-secret", got.headers, got.body)
    assert not verify("", got.headers, got.body)
    timestamp = int(got.headers["X-CT-Timestamp"])
    assert verify(SECRET, got.headers, got.body, now=timestamp + 299)
    assert not verify(SECRET, got.headers, got.body, now=timestamp + 301)
    assert not verify(SECRET, got.headers, got.body, now=timestamp - 301)
    assert not verify(SECRET, got.headers, got.body, tolerance_s=10, now=timestamp + 11)


def test_verify_refuses_missing_or_malformed_headers() -> None:
    body = body_for(RUN)
    now = int(time.time())
    good = {"X-CT-Timestamp": str(now), "X-CT-Signature": sign(SECRET, now, body)}
    assert verify(SECRET, good, body)
    assert verify(SECRET, {name.lower(): value for name, value in good.items()}, body)
    assert not verify(SECRET, {"X-CT-Signature": good["X-CT-Signature"]}, body)
    assert not verify(SECRET, {"X-CT-Timestamp": str(now)}, body)
    assert not verify(SECRET, {**good, "X-CT-Timestamp": "soon"}, body)
    assert not verify(SECRET, {**good, "X-CT-Timestamp": "-5"}, body)
    assert not verify(
        SECRET, {**good, "X-CT-Signature": good["X-CT-Signature"].removeprefix("sha256=")}, body
    )
    # A signature over another timestamp does not carry over to this one.
    assert not verify(SECRET, {**good, "X-CT-Timestamp": str(now + 1)}, body)
    with pytest.raises(ValueError, match="secret"):
        sign("", now, body)


def test_without_a_secret_nothing_is_signed(receiver: Receiver) -> None:
    result = deliver(receiver.url, body_for(RUN), secret=None, delivery_id=DELIVERY, sleep=Sleeps())
    assert result.delivered
    [got] = receiver.requests
    assert "x-ct-signature" not in {name.lower() for name in got.headers}
    assert not verify(SECRET, got.headers, got.body)


# --- the body ----------------------------------------------------------------------------------------


def test_the_body_is_canonical_and_holds_the_run_summary() -> None:
    body = body_for(RUN)
    assert body == body_for(dict(reversed(list(RUN.items()))))
    event = json.loads(body)
    assert body == json.dumps(event, sort_keys=True, separators=(",", ":")).encode()
    assert event == {
        "type": "run.completed",
        "id": f"{RUN['run_id']}.completed",
        "created_at": RUN["finished_at"],
        "data": {
            "run_id": RUN["run_id"],
            "status": "succeeded",
            "model_id": RUN["model_id"],
            "best_val_loss": 1.25,
            "early_stop": {"step": 40, "reason": "patience"},
            "gpu_seconds": 12.5,
            "usage": {"training_gpu_seconds": 12.5},
            "config_fingerprint": RUN["config_fingerprint"],
        },
    }


def test_a_failed_run_without_a_loss_still_makes_valid_json() -> None:
    failed = {**RUN, "status": "failed", "model_id": None, "best_val_loss": float("nan"), "early_stop": None}
    event = json.loads(body_for(failed))
    assert event["data"]["status"] == "failed"
    assert event["data"]["best_val_loss"] is None and event["data"]["model_id"] is None
    with pytest.raises(ValueError, match="run_id"):
        body_for({"status": "failed"})


# --- retries -----------------------------------------------------------------------------------------


def test_two_503s_then_200_take_three_attempts_with_one_delivery_id(receiver: Receiver) -> None:
    receiver.script = [(503, {}), (503, {})]
    sleeps = Sleeps()
    result = _deliver(receiver.url, sleeps)
    assert result.delivered and result.attempts == 3 and result.status_code == 200
    assert sleeps.delays == [1.0, 2.0]
    assert len(receiver.requests) == 3
    assert {got.headers["X-CT-Delivery"] for got in receiver.requests} == {DELIVERY}
    assert {got.body for got in receiver.requests} == {body_for(RUN)}
    # Every attempt is signed on its own and verifies.
    assert all(verify(SECRET, got.headers, got.body) for got in receiver.requests)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 504])
def test_busy_and_failing_receivers_are_retried(receiver: Receiver, status: int) -> None:
    receiver.script = [(status, {})]
    sleeps = Sleeps()
    result = _deliver(receiver.url, sleeps)
    assert result.delivered and result.attempts == 2
    assert sleeps.delays == [1.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_a_refusal_is_final_at_once(receiver: Receiver, status: int) -> None:
    receiver.script = [(status, {})]
    sleeps = Sleeps()
    result = _deliver(receiver.url, sleeps)
    assert not result.delivered
    assert (result.attempts, result.status_code) == (1, status)
    assert result.error is not None and f"HTTP {status}" in result.error
    assert sleeps.delays == [] and len(receiver.requests) == 1


def test_a_redirect_is_not_followed(receiver: Receiver) -> None:
    receiver.script = [(302, {"Location": "/elsewhere"})]
    result = _deliver(receiver.url, Sleeps())
    assert not result.delivered and result.status_code == 302
    assert result.error is not None and "redirect" in result.error
    assert [got.path for got in receiver.requests] == ["/hooks/ct?token=t0k3n"]


def test_a_dead_port_is_retried_then_reported_not_delivered(dead_url: str) -> None:
    sleeps = Sleeps()
    result = _deliver(dead_url, sleeps, max_attempts=4)
    assert not result.delivered
    assert (result.attempts, result.status_code) == (4, None)
    assert result.error is not None and "could not reach the receiver" in result.error
    assert sleeps.delays == [1.0, 2.0, 4.0]


def test_retry_after_is_honoured_and_capped(receiver: Receiver) -> None:
    receiver.script = [(429, {"Retry-After": "7"}), (503, {"Retry-After": "3600"}), (503, {})]
    sleeps = Sleeps()
    result = _deliver(receiver.url, sleeps)
    assert result.delivered and result.attempts == 4
    # 7 s as asked; an hour is cut to the 60 s ceiling; without the header, the backoff (third retry).
    assert sleeps.delays == [7.0, 60.0, 4.0]


def test_the_backoff_doubles_up_to_a_minute(receiver: Receiver) -> None:
    receiver.script = [(500, {})] * 9
    sleeps = Sleeps()
    result = _deliver(receiver.url, sleeps, max_attempts=9)
    assert not result.delivered and result.attempts == 9 and result.status_code == 500
    assert sleeps.delays == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    assert len(receiver.requests) == 9


def test_the_secret_and_the_url_path_are_never_logged(
    receiver: Receiver, dead_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    receiver.script = [(503, {}), (400, {})]
    refused = _deliver(receiver.url, Sleeps())
    unreachable = _deliver(dead_url, Sleeps(), max_attempts=2)
    assert not refused.delivered and not unreachable.delivered
    # The secret and the signature appear in no log line of any library.
    assert SECRET not in caplog.text and "sha256=" not in caplog.text
    # This module's own lines name the receiver by scheme and host: a URL's path may be a credential.
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name == "ct_runs.webhooks")
    assert DELIVERY in ours and "http://127.0.0.1:" in ours
    assert "t0k3n" not in ours and "/hooks/ct" not in ours
    for result in (refused, unreachable):
        assert result.error is not None and SECRET not in result.error


# --- configuration and fan-out -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "",
        "ftp://example.com/hook",
        "file:///etc/passwd",
        "example.com/hook",
        "http://",
        "https:///path",
        " http://example.com/hook",
        "http://exa mple.com/",
        "http://example.com:99999/hook",
        "javascript:alert(1)",
    ],
)
def test_only_http_and_https_urls_are_accepted(url: str) -> None:
    with pytest.raises(ValueError, match="webhook URL"):
        check_url(url)
    with pytest.raises(ValueError, match="webhook URL"):
        deliver_all([url], RUN, secret=SECRET, sleep=Sleeps())


def test_good_urls_pass_unchanged() -> None:
    for url in (
        "http://127.0.0.1:8080/hook",
        "https://hooks.example.com/ct?token=abc",
        "HTTPS://Example.com",
    ):
        assert check_url(url) == url


def test_deliver_all_sends_one_event_to_each_url(receiver: Receiver, dead_url: str) -> None:
    receiver.script = [(503, {})]
    sleeps = Sleeps()
    # A bad URL anywhere in the list stops everything before a request is sent.
    with pytest.raises(ValueError):
        deliver_all([receiver.url, "ftp://nope"], RUN, secret=SECRET, sleep=sleeps)
    assert receiver.requests == []
    results = deliver_all([receiver.url, dead_url], RUN, secret=SECRET, sleep=sleeps, max_attempts=2)
    assert [(r.url, r.delivered, r.attempts) for r in results] == [
        (receiver.url, True, 2),
        (dead_url, False, 2),
    ]
    assert {got.headers["X-CT-Delivery"] for got in receiver.requests} == {DELIVERY}
    assert all(verify(SECRET, got.headers, got.body) for got in receiver.requests)
    assert json.loads(receiver.requests[-1].body)["data"]["run_id"] == RUN["run_id"]
    assert results[0].to_dict() == {
        "url": receiver.url,
        "delivered": True,
        "attempts": 2,
        "status_code": 200,
        "error": None,
    }
