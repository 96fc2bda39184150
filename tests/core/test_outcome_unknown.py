"""A step, save or load whose answer is lost after it was sent raises RequestOutcomeUnknown.

The SDK never repeats such a call (it could apply an optimizer step twice), so it says what it
knows: the call may have been applied, and how to find out. The client names every such call with
an id of its own (the ``x-ct-request-id`` header); the local server uses it as the request id, so
``get_request_status(job, that id)`` answers whether it ran, and the training-metrics rows carry it.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest
from ct_testing import wait_until
from ct_testing.plugin import run_ct

from ct_core import CortexTrainingClient
from ct_core.errors import (
    CTConnectionError,
    CTError,
    CTTimeoutError,
    NotFoundError,
    RequestOutcomeUnknown,
    ServerError,
)

BODY = {
    "sub_job_configs": [
        {
            "job_type": "training",
            "model_name": "Qwen/Qwen3-0.6B",
            "training_config": {"optimizer": {"name": "AdamW", "lr": 1e-2}},
        }
    ],
    "idle_timeout_seconds": 0,
}
# The proxy holds the step's answer back until it closes: longer than any read timeout.
HELD_ANSWER_S = 120.0
READ_TIMEOUT_S = 1.0


@pytest.fixture
def server(local_server_factory: Any) -> Any:
    return local_server_factory(settings={"artifact_upload_interval_s": 0.2})


def _client(server: Any, **options: Any) -> CortexTrainingClient:
    return CortexTrainingClient(base_url=server.base_url, database="DB", schema="OUTCOME", **options)


def _running_job(client: CortexTrainingClient) -> str:
    job_id = str(client.create_job_from_body(BODY)["job_id"])
    client.wait_for_job(job_id)
    return job_id


def _executions(server: Any, job_id: str) -> dict[str, int]:
    answer = httpx.get(f"{server.base_url}/_ct/jobs/{job_id}/executions", timeout=30.0).json()
    return dict(answer["executions"])


def test_a_lost_answer_after_a_server_error_raises_outcome_unknown_and_is_not_repeated(server: Any) -> None:
    with _client(server, max_retries=3) as client:
        job_id = _running_job(client)
        server.set_faults(
            {"path": "/step$", "method": "POST", "action": "respond", "status": 502, "count": 1}
        )
        with pytest.raises(RequestOutcomeUnknown) as caught:
            client.step(job_id)
        error = caught.value
        # Still the error it replaces, for code that catches that.
        assert isinstance(error, ServerError) and isinstance(error, CTError)
        assert error.status_code == 502
        assert error.operation == "step" and error.job_id == job_id
        message = str(error)
        assert "may have been applied" in message and error.client_request_id in message
        assert "get_request_status" in message
        assert error.hint is not None and "may have been applied" in error.hint
        # Read-only reconciliation: the id the client sent is unknown, so the step never ran.
        with pytest.raises(NotFoundError):
            client.get_request_status(job_id, error.client_request_id)
        assert _executions(server, job_id).get("step", 0) == 0


@pytest.mark.parametrize("loss", ["read timeout", "connection reset"])
def test_a_step_that_ran_but_whose_answer_was_lost_raises_outcome_unknown_and_the_id_reconciles(
    server: Any, relay: Any, act: Any, tmp_path: Any, loss: str
) -> None:
    # A proxy in front of the server passes the step on, then loses the answer: the step did run.
    proxy = relay(server.base_url)
    forward = proxy.responder
    # Set once the server has answered the step the proxy passed on (it may be after the client
    # gave up waiting): only then is there a request for the client's id to find.
    step_ran = threading.Event()

    def lose_the_step_answer(seen: Any) -> Any:
        answer = forward(seen)
        if seen.method == "POST" and seen.path.endswith("/step"):
            step_ran.set()
            if loss == "connection reset":
                return act(reset=True)
            return act(answer.status, answer.body, headers=answer.headers, delay=HELD_ANSWER_S)
        return answer

    proxy.responder = lose_the_step_answer
    # Only the step goes through the proxy with the short read timeout; the job's setup and the
    # checks after it use a client with the usual timeouts, straight to the server.
    options = {"request_timeout": (10.0, READ_TIMEOUT_S), "max_retries": 3}
    with (
        _client(server) as client,
        CortexTrainingClient(base_url=proxy.base_url, database="DB", schema="OUTCOME", **options) as lossy,
    ):
        job_id = _running_job(client)
        with pytest.raises(RequestOutcomeUnknown) as caught:
            lossy.step(job_id)
        error = caught.value
        assert isinstance(error, CTTimeoutError if loss == "read timeout" else CTConnectionError)
        assert not error.never_sent
        assert "may have been applied" in str(error)
        steps = [r for r in proxy.requests if r.path.endswith("/step")]
        assert len(steps) == 1
        assert steps[0].header("x-ct-request-id") == error.client_request_id
        assert step_ran.wait(60)
        # The server ran it: its status under the client's id says so.
        result = client.poll_request(job_id, error.client_request_id)
        assert result["global_steps"] == 1
        assert _executions(server, job_id)["step"] == 1
        # The training-metrics row of that step carries the same id.
        sub = f"{job_id}:training:0"
        rows: list[dict[str, Any]] = []

        def step_row_written() -> list[dict[str, Any]] | None:
            nonlocal rows
            if client.download_training_metrics(job_id, tmp_path, resume=True, stale_after_seconds=None):
                text = (tmp_path / sub / "training.jsonl").read_text()
                rows = [json.loads(line) for line in text.splitlines()]
            return rows if any(r["op"] == "step" for r in rows) else None

        rows = wait_until(step_row_written, timeout=60, interval=0.2, message=lambda: f"rows so far: {rows}")
        [step_row] = [r for r in rows if r["op"] == "step"]
        assert step_row["request_id"] == error.client_request_id


def test_the_local_server_runs_a_client_named_request_once(server: Any) -> None:
    with _client(server) as client:
        job_id = _running_job(client)
    url = f"{server.base_url}/api/v2/databases/DB/schemas/OUTCOME/cortex-training/{job_id}"
    named = {"x-ct-request-id": "3f1c2d4e-0000-4000-8000-00000000abcd"}
    with server.http() as http:
        first = http.post(f"{url}/step", json={}, headers=named).json()
        again = http.post(f"{url}/step", json={}, headers=named).json()
        assert first["request_id"] == again["request_id"] == named["x-ct-request-id"]
        # The same id on another kind of call is a client bug, refused without running anything.
        clash = http.post(f"{url}/save", json={}, headers=named)
        assert clash.status_code == 400 and "x-ct-request-id" in clash.json()["message"]
        bad = http.post(f"{url}/step", json={}, headers={"x-ct-request-id": "x" * 300})
        assert bad.status_code == 400 and "x-ct-request-id" in bad.json()["message"]
        wait_until(
            lambda: http.get(f"{url}/requests/{first['request_id']}").json()["status"] == "done",
            timeout=60,
            message="the first step never finished",
        )
    assert _executions(server, job_id) == {"step": 1}


def test_the_cli_hint_says_the_call_may_have_been_applied(server: Any, ct_home: Any) -> None:
    with _client(server) as client:
        job_id = _running_job(client)
    server.set_faults({"path": "/step$", "method": "POST", "action": "respond", "status": 504, "count": 1})
    result = run_ct(
        "--base-url", server.base_url, "--database", "DB", "--schema", "OUTCOME", "--job", job_id, "step"
    )
    assert result.returncode == 1, result
    assert "may have been applied" in result.stderr, result
    assert "check the host" not in result.stderr, result
