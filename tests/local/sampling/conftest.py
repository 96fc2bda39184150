"""Fixtures for the sampling tests: one server for the module set and a small generation driver.

The driver speaks the wire protocol over httpx with ct_core.wire only (no SDK), so these tests pin
the server's generation, streaming, weight sync, prefix-cache and cancel behaviour independently
of the client.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from ct_testing import wait_until
from ct_testing.plugin import create_job, wait_for_job_status

from ct_core import wire

# Upper bound on waiting for a request; only a hang (or a very loaded machine) gets near it.
POLL_LIMIT_S = 120.0
TRAINING = {"optimizer": {"name": "AdamW", "lr": 5e-2}, "n_gpus": 1}


def sampling_sub_job(**inference: Any) -> dict[str, Any]:
    return {
        "job_type": "sampling",
        "model_name": "Qwen/Qwen3-0.6B",
        "inference_config": {"n_gpus": 1, "max_seq_len": 64, **inference},
    }


def training_sub_job() -> dict[str, Any]:
    return {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": dict(TRAINING)}


@dataclass
class Sampling:
    http: httpx.Client
    prefix: str
    job_id: str = ""

    @property
    def url(self) -> str:
        return f"{self.prefix}/{self.job_id}"

    def start(self, *sub_jobs: dict[str, Any]) -> Sampling:
        self.job_id = create_job(self.http, self.prefix, sub_jobs or [training_sub_job(), sampling_sub_job()])
        wait_for_job_status(self.http, self.url, {"running"}, limit_s=POLL_LIMIT_S)
        return self

    def post(self, action: str, logical: dict[str, Any], **query: Any) -> httpx.Response:
        return self.http.post(
            f"{self.url}/{action}",
            content=wire.dumps(logical),
            params=query,
            headers={"content-type": "application/octet-stream"},
        )

    def submit(self, logical: dict[str, Any], action: str = "generate", **query: Any) -> str:
        response = self.post(action, logical, **query)
        assert response.status_code == 200, response.text
        return str(response.json()["request_id"])

    def status(self, request_id: str, **params: Any) -> dict[str, Any]:
        response = self.http.get(f"{self.url}/requests/{request_id}", params=params)
        assert response.status_code == 200, response.text
        return response.json()

    def wait(self, request_id: str) -> dict[str, Any]:
        """The final status body of a request (any terminal state)."""
        return wait_until(
            lambda: (
                (status := self.status(request_id))["status"] in {"done", "failed", "cancelled"} and status
            ),
            timeout=POLL_LIMIT_S,
            message=f"request {request_id} never finished",
        )

    def result(self, request_id: str) -> dict[str, Any]:
        status = self.wait(request_id)
        assert status["status"] == "done", status
        result = status["result"]
        if result.get("wire_format") == "DSSST1":
            import base64

            return dict(wire.loads(base64.b64decode(result["payload_b64"]), backend="numpy"))
        return dict(result)

    def generate(self, prompts: Any, **params: Any) -> list[dict[str, Any]]:
        logical: dict[str, Any] = {"prompts": prompts}
        if params:
            logical["sampling_params"] = params
        return list(self.result(self.submit(logical))["results"])

    def operation(self, operation_type: str, payload: Any = None, **hints: Any) -> httpx.Response:
        body: dict[str, Any] = {"operation_type": operation_type, **hints}
        if payload is not None:
            body["payload"] = payload
        return self.http.post(f"{self.url}/operation", json=body)


@pytest.fixture(scope="session")
def sampling_server(session_local_server_factory: Any) -> Any:
    # Every test here starts its own job and none cancels it: a GPU ceiling far above what the
    # session creates keeps later jobs from queueing as pending for capacity.
    ceilings = ["--hardware", "H200=100000", "--hardware", "B200=100000", "--hardware", "B300=100000"]
    # No runs service: it lives for the whole session, and an idle one still polls its queues.
    return session_local_server_factory(extra_args=ceilings, settings={"runs_service": False})


@pytest.fixture
def sampling_http(sampling_server: Any) -> Iterator[httpx.Client]:
    with sampling_server.http() as client:
        yield client


@pytest.fixture
def sp(sampling_server: Any, sampling_http: httpx.Client) -> Sampling:
    """A driver on a schema of its own."""
    return Sampling(sampling_http, sampling_server.prefix(schema="S_" + uuid.uuid4().hex[:10].upper()))


@pytest.fixture(name="sampling_sub_job")
def sampling_sub_job_fixture():
    """``sampling_sub_job(**inference_config)`` -> a sampling sub-job config (max_seq_len 64)."""
    return sampling_sub_job


@pytest.fixture(name="training_sub_job")
def training_sub_job_fixture():
    """``training_sub_job()`` -> a training sub-job config."""
    return training_sub_job


@pytest.fixture(name="sampling_driver")
def sampling_driver_fixture():
    """``sampling_driver(http, prefix)`` -> a :class:`Sampling` driver for a server of the test's own."""
    return Sampling
