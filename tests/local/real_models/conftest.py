"""Tiny real Hugging Face models built in the test, and a server that serves them.

Nothing is downloaded: each model is a random-init config of a real architecture (Qwen3, Llama)
with hidden size 64 and two layers, saved next to a small byte-level BPE tokenizer with a chat
template (``ct_testing.tiny_models``). The folders are what a user's own model folder holds, so the
server loads them exactly as it would load a downloaded one.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from ct_testing import tiny_models, wait_until
from ct_testing.plugin import create_job, wait_for_job_status

from ct_core import wire

#: Upper bound on waiting for a request or a job; only a hang gets near it.
POLL_LIMIT_S = 180.0


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    """The test models' tokenizer (the same for every architecture)."""
    return tiny_models.bpe_tokenizer()


@pytest.fixture(scope="session")
def model_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{architecture: folder}`` for every test architecture, built once per session."""
    root = tmp_path_factory.mktemp("real-models")
    return {name: tiny_models.save_model(root / name, name) for name in tiny_models.ARCHITECTURES}


@pytest.fixture(scope="session")
def real_server(session_local_server_factory: Any, model_folders: dict[str, Path]) -> Any:
    """One server for the folder: each test architecture registered as ``tiny-<architecture>``."""
    args = ["--hardware", "H200=100000"]
    for name, folder in model_folders.items():
        args += ["--model", f"tiny-{name}={folder}"]
    return session_local_server_factory(extra_args=args)


@dataclass
class Driver:
    """A job on the real-model server, spoken to over plain HTTP with ct_core.wire."""

    http: httpx.Client
    prefix: str
    job_id: str = ""

    @property
    def url(self) -> str:
        return f"{self.prefix}/{self.job_id}"

    def start(self, *sub_jobs: dict[str, Any]) -> Driver:
        self.job_id = create_job(self.http, self.prefix, sub_jobs)
        wait_for_job_status(self.http, self.url, {"running"}, limit_s=POLL_LIMIT_S)
        return self

    def wait(self, request_id: str) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            response = self.http.get(f"{self.url}/requests/{request_id}")
            assert response.status_code == 200, response.text
            status = response.json()
            return dict(status) if status["status"] in {"done", "failed", "cancelled"} else None

        return wait_until(
            finished, timeout=POLL_LIMIT_S, interval=0.05, message=f"request {request_id} never finished"
        )

    def result(self, response: httpx.Response) -> dict[str, Any]:
        assert response.status_code == 200, response.text
        status = self.wait(response.json()["request_id"])
        assert status["status"] == "done", status
        result = status["result"]
        if result.get("wire_format") == "DSSST1":
            return dict(wire.loads(base64.b64decode(result["payload_b64"]), backend="numpy"))
        return dict(result)

    def post_frame(self, action: str, logical: dict[str, Any], **query: Any) -> httpx.Response:
        return self.http.post(
            f"{self.url}/{action}",
            content=wire.dumps(logical),
            params=query,
            headers={"content-type": "application/octet-stream"},
        )

    def forward(self, ids: list[list[int]]) -> Any:
        """The shifted log-probabilities of ``ids`` (the forward operation)."""
        import torch

        frame = wire.dumps({"args": (), "kwargs": {"input_ids": torch.tensor(ids, dtype=torch.long)}})
        payload = {
            "payload_b64": base64.b64encode(frame).decode(),
            "content_type": "application/octet-stream",
        }
        response = self.http.post(
            f"{self.url}/operation", json={"operation_type": "forward", "payload": payload}
        )
        return self.result(response)["logprobs"]

    def fwd_bwd(self, ids: list[list[int]]) -> float:
        import torch

        input_ids = torch.tensor(ids, dtype=torch.long)
        labels = torch.roll(input_ids, -1, dims=1)
        labels[:, -1] = -100
        batch = {"args": (), "kwargs": {"input_ids": input_ids, "labels": labels}}
        return float(self.result(self.post_frame("forward-backward", batch))["avg_loss"])

    def step(self, lr: float | None = None) -> dict[str, Any]:
        return self.result(
            self.http.post(f"{self.url}/step", json={} if lr is None else {"learning_rate": lr})
        )

    def save(self, checkpoint_type: str) -> dict[str, Any]:
        return self.result(self.http.post(f"{self.url}/save", json={"checkpoint_type": checkpoint_type}))


@pytest.fixture
def real_http(real_server: Any) -> Iterator[httpx.Client]:
    with real_server.http() as client:
        yield client


@pytest.fixture
def driver(real_server: Any, real_http: httpx.Client) -> Driver:
    return Driver(real_http, real_server.prefix(schema="S_" + uuid.uuid4().hex[:10].upper()))


@pytest.fixture
def driver_class() -> type[Driver]:
    """The :class:`Driver` class, for a test that starts a server of its own."""
    return Driver
