"""The debug trace of forward/backward calls: every attempt, the request id, every poll, no secret.

At DEBUG level the `ct_core` loggers trace each `forward_backward` call: a `[ct fwd-bwd] call=N`
label numbers the calls of a client, and under it come the submission, each HTTP attempt with its
outcome (status, the service's request id, or the failure) and the retry waits, the request id the
service gave, and each poll of that request until it ends. Nothing in it is a credential.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from ct_testing.plugin import run_ct

from ct_core import CortexTrainingClient, SubJobConfig
from ct_core.data.payloads import build_forward_backward_payload

TOKEN = "trace-secret-token-0123456789"
MODEL = "Qwen/Qwen3-0.6B"


@pytest.fixture(scope="module")
def server(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(tokens={TOKEN: "TRAINER"})


@pytest.fixture
def client(server: Any) -> Iterator[CortexTrainingClient]:
    with CortexTrainingClient(
        base_url=server.base_url,
        database="TRACE",
        schema="PUBLIC",
        token=TOKEN,
        poll_interval=0.02,
        poll_timeout=120,
    ) as made:
        yield made


def _frame() -> bytes:
    return build_forward_backward_payload({"texts": ["a short text"], "tokenizer": "byte", "max_length": 16})


def test_the_fwd_bwd_trace_shows_attempts_request_ids_and_polls(
    client: CortexTrainingClient, server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    trainer = SubJobConfig.training_job(
        MODEL, optimizer={"name": "AdamW", "lr": 1e-3}, max_seq_len=64, train_batch_size=1, n_gpus=1
    )
    job_id = client.create_job([trainer])
    client.wait_for_job(job_id)
    server.set_faults(
        {
            "path": f"/{job_id}/forward-backward$",
            "method": "POST",
            "action": "respond",
            "status": 503,
            "body": {"message": "busy", "code": 503},
            "count": 1,
        }
    )
    with caplog.at_level(logging.DEBUG, logger="ct_core"):
        first = client.forward_backward(job_id, _frame())
        client.poll_request(job_id, first)
        second = client.forward_backward(job_id, _frame())
        client.poll_request(job_id, second)
    lines = [record.getMessage() for record in caplog.records]
    traced = [line for line in lines if line.startswith("[ct fwd-bwd]")]

    def of(call: int, phase: str) -> list[str]:
        return [line for line in traced if f" call={call} " in line and f"phase={phase}" in line]

    # The first call: its refused attempt, the retry, the accepted one, then its request id.
    submit = of(1, "submit")
    assert any("attempt=1/" in line and "status=503" in line for line in submit), submit
    assert any("retry 1/" in line for line in submit), submit
    assert any("attempt=2/" in line and "status=200" in line for line in submit), submit
    assert any(f"request_id={first}" in line for line in submit), submit
    assert not any("attempt=2/" in line for line in of(2, "submit")), of(2, "submit")
    # Each call's polls carry its number and its request id, up to the end of the request.
    for call, request_id in ((1, first), (2, second)):
        polls = of(call, "poll")
        assert polls and all(f"request_id={request_id}" in line for line in polls), polls
        assert any(re.search(r"attempt=1/\d+ GET \S+ status=200", line) for line in polls), polls
        assert any("state=done" in line for line in polls), polls
    # The service's own request ids are named, and no line holds the token.
    assert any("snowflake_request_id=" in line for line in traced)
    assert TOKEN not in caplog.text


def test_ct_debug_shows_the_trace_of_a_ct_command_without_the_token(
    client: CortexTrainingClient, server: Any
) -> None:
    trainer = SubJobConfig.training_job(
        MODEL, optimizer={"name": "AdamW", "lr": 1e-3}, max_seq_len=64, train_batch_size=1, n_gpus=1
    )
    job_id = client.create_job([trainer])
    client.wait_for_job(job_id)
    args = ["--base-url", server.base_url, "--database", "TRACE", "--schema", "PUBLIC", "--job", job_id]
    batch = json.dumps({"texts": ["a short text"], "tokenizer": "byte", "max_length": 16})
    env = {"CORTEX_TRAINING_PAT": TOKEN}
    quiet = run_ct(*args, "fwd-bwd", "-", input=batch, env={**env, "CT_DEBUG": "0"})
    assert quiet.returncode == 0, quiet
    assert "[ct fwd-bwd]" not in quiet.stderr
    loud = run_ct(*args, "fwd-bwd", "-", input=batch, env={**env, "CT_DEBUG": "1"})
    assert loud.returncode == 0, loud
    request_id = loud.json["request_id"]
    trace = [line for line in loud.stderr.splitlines() if "[ct fwd-bwd] call=1 " in line]
    assert any("phase=submit" in line and "attempt=1/" in line for line in trace), loud.stderr
    assert any(f"phase=poll request_id={request_id}" in line for line in trace), loud.stderr
    assert TOKEN not in loud.stderr + loud.stdout
