"""Fixtures for the data-plane tests: one training server for the session and a small HTTP driver.

The driver talks to ct_local the way the contract says a client does (request-chunk envelopes for
forward-backward, polling with cursors), using httpx and ct_core.wire only, so these tests do not
depend on the SDK's data-plane methods. The session server uses a small result-chunk threshold so
large results come back as result chunks while small ones stay inline.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from ct_testing import wait_until
from ct_testing.plugin import SHARED_SERVER_GPUS, create_job, wait_for_job_status

from ct_core import wire

# Results whose DSSST1 frame exceeds this many bytes come back as result_chunk events.
RESULT_THRESHOLD = 4096
# Each result chunk frame is at most this large (8 KiB of it is header allowance).
RESULT_CHUNK_BYTES = 8192 + 1024
SERVER_SETTINGS = {
    "result_chunk_threshold_bytes": RESULT_THRESHOLD,
    "result_chunk_max_bytes": RESULT_CHUNK_BYTES,
}
# Upper bound on waiting for a request; only a hang (or a very loaded machine) gets near it.
POLL_LIMIT_S = 120.0
TEXT = (
    "The quick brown fox jumps over the lazy dog. A tiny model learns this sentence by heart "
    "when it sees it often enough. "
)


def text_batch(text: str = TEXT, rows: int = 2) -> dict[str, Any]:
    """An SFT batch over ``text``: next-token labels, the last target ignored."""
    import torch

    ids = torch.tensor([list(text.encode())] * rows, dtype=torch.long)
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    return {"args": (), "kwargs": {"input_ids": ids, "labels": labels}}


def frame_of(batch: Any, *, dssst1: bool = True) -> bytes:
    metadata = {"response_options": {"format": "dssst1", "delivery": "chunked"}} if dssst1 else None
    return wire.dumps(batch, metadata=metadata)


class RequestFailed(AssertionError):
    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(f"request ended {status['status']}: {status['error']}")
        self.status = status


@dataclass
class Driver:
    """A minimal data-plane client for one job."""

    http: httpx.Client
    prefix: str
    job_id: str = ""
    polls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"{self.prefix}/{self.job_id}"

    def create(self, training_config: dict[str, Any] | None = None, **sub_job: Any) -> str:
        config = {"optimizer": {"name": "AdamW", "lr": 1e-2}, "n_gpus": 1, **(training_config or {})}
        sub = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": config, **sub_job}
        self.job_id = create_job(self.http, self.prefix, [sub])
        return self.job_id

    def wait_running(self) -> dict[str, Any]:
        return wait_for_job_status(self.http, self.url, {"running"}, limit_s=POLL_LIMIT_S)

    def start(self, training_config: dict[str, Any] | None = None, **sub_job: Any) -> Driver:
        self.create(training_config, **sub_job)
        self.wait_running()
        return self

    # --- submission ---------------------------------------------------------------------------

    def chunks(self, frame: bytes, *, max_bytes: int = 0, group_id: str | None = None) -> list[bytes]:
        return wire.encode_byte_chunks(
            frame,
            kind="request",
            operation="fwd-bwd",
            max_bytes=max_bytes,
            chunk_group_id=group_id or str(uuid.uuid4()),
            force_chunk=True,
        )

    def post_chunk(self, chunk: bytes) -> httpx.Response:
        return self.http.post(
            f"{self.url}/forward-backward",
            content=chunk,
            headers={"content-type": "application/octet-stream"},
        )

    def forward_backward(self, batch: Any, *, max_bytes: int = 0) -> str:
        body: dict[str, Any] = {}
        for chunk in self.chunks(frame_of(batch), max_bytes=max_bytes):
            response = self.post_chunk(chunk)
            assert response.status_code == 200, response.text
            body = response.json()
        return str(body["request_id"])

    def step(self, learning_rate: float | None = None) -> str:
        body = {} if learning_rate is None else {"learning_rate": learning_rate}
        response = self.http.post(f"{self.url}/step", json=body)
        assert response.status_code == 200, response.text
        return str(response.json()["request_id"])

    def save(self, checkpoint_type: str | None = None) -> str:
        body = {} if checkpoint_type is None else {"checkpoint_type": checkpoint_type}
        response = self.http.post(f"{self.url}/save", json=body)
        assert response.status_code == 200, response.text
        return str(response.json()["request_id"])

    def load(self, checkpoint_id: str, **fields: Any) -> str:
        response = self.http.post(f"{self.url}/load", json={"checkpoint_id": checkpoint_id, **fields})
        assert response.status_code == 200, response.text
        return str(response.json()["request_id"])

    def operation(self, operation_type: str, payload: Any = None, **hints: Any) -> httpx.Response:
        body: dict[str, Any] = {"operation_type": operation_type, **hints}
        if payload is not None:
            body["payload"] = payload
        return self.http.post(f"{self.url}/operation", json=body)

    def forward(self, batch: Any) -> str:
        payload = {
            "payload_b64": base64.b64encode(frame_of(batch)).decode(),
            "content_type": "application/octet-stream",
        }
        response = self.operation("forward", payload)
        assert response.status_code == 200, response.text
        return str(response.json()["request_id"])

    # --- polling ------------------------------------------------------------------------------

    def status(self, request_id: str, **params: Any) -> dict[str, Any]:
        response = self.http.get(f"{self.url}/requests/{request_id}", params=params)
        assert response.status_code == 200, response.text
        return response.json()

    def poll(self, request_id: str, *, max_events: int | None = None) -> dict[str, Any]:
        """Wait for the request, drain result chunks through next_cursor, and decode the result."""
        chunks: list[bytes] = []
        self.polls = []

        def finished() -> dict[str, Any] | None:
            # Read every page the server has (following next_cursor) before waiting again.
            cursor = ""
            while True:
                params: dict[str, Any] = {}
                if cursor:
                    params["cursor"] = cursor
                if max_events is not None:
                    params["max_events"] = max_events
                status = self.status(request_id, **params)
                self.polls.append(status)
                for event in status["events"]:
                    assert event["type"] == "result_chunk"
                    raw = base64.b64decode(event["payload_b64"])
                    assert hashlib.sha256(raw).hexdigest() == event["payload_sha256"]
                    chunks.append(raw)
                cursor = status["next_cursor"]
                if not cursor:
                    break
            if status["status"] in {"failed", "cancelled"}:
                raise RequestFailed(status)
            return status if status["status"] == "done" else None

        status = wait_until(finished, timeout=POLL_LIMIT_S, message=f"request {request_id} never finished")
        if chunks:
            return wire.decode_result_chunks(chunks)
        result = status["result"]
        if result.get("wire_format") == "DSSST1":
            return wire.loads(base64.b64decode(result["payload_b64"]))
        return result

    def executions(self, base_url: str) -> dict[str, int]:
        response = httpx.get(f"{base_url}/_ct/jobs/{self.job_id}/executions", timeout=10.0)
        response.raise_for_status()
        return response.json()["executions"]


@pytest.fixture(scope="session")
def training_server(session_local_server_factory: Any) -> Any:
    """A server for the data-plane tests (session-wide: the model imports are paid once).

    Its tests start jobs and leave them running, about 60 GPUs' worth when one worker runs every
    file here, so the ceiling is the shared server's 999 GPUs rather than the default 64: a later
    job never waits as pending for capacity, and a 1000-GPU job still never fits.
    """
    from ct_local.settings import KNOWN_HARDWARE

    ceiling = {name: {"max_total_gpus": SHARED_SERVER_GPUS} for name in KNOWN_HARDWARE}
    return session_local_server_factory(settings={**SERVER_SETTINGS, "capacity": ceiling})


@pytest.fixture
def http(training_server: Any) -> Iterator[httpx.Client]:
    with training_server.http() as client:
        yield client


@pytest.fixture
def dp(training_server: Any, http: httpx.Client) -> Driver:
    """A driver on a schema of its own (tests sharing the server never see each other's jobs)."""
    return Driver(http, training_server.prefix(schema="S_" + uuid.uuid4().hex[:10].upper()))


@pytest.fixture
def new_driver(training_server: Any, http: httpx.Client):
    """``new_driver()`` -> another driver on the same server (for a second job)."""

    def make(prefix: str | None = None) -> Driver:
        return Driver(http, prefix or training_server.prefix(schema="S_" + uuid.uuid4().hex[:10].upper()))

    return make


@pytest.fixture(name="text_batch")
def text_batch_fixture():
    """``text_batch(text=TEXT, rows=2)`` -> an SFT batch dict of torch tensors."""
    return text_batch


@pytest.fixture(name="frame_of")
def frame_of_fixture():
    """``frame_of(batch, dssst1=True)`` -> a DSSST1 frame with the reference's response options."""
    return frame_of


@pytest.fixture(name="request_failed")
def request_failed_fixture() -> type[RequestFailed]:
    return RequestFailed
