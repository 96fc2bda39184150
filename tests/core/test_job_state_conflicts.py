"""A data-plane call on a job that cannot serve it fails at once and says why.

The general retry rule repeats a 409 (a restarting zone) and a 404 517601 for a job this client has
just created (a moment of invisibility), for about a minute. Both answers also come when the job
itself is the problem: it is pending or has ended (409), or the job is visible and it is the
request id that is wrong (404). On the first such answer the client reads the job once and stops
retrying when the job's state explains the answer; a running job's 409 keeps its retries.

Every client here talks to the real local server through a recording relay and never really sleeps,
so a test counts the requests a call made and the waits it took.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ct_core import CortexTrainingClient, SubJobConfig
from ct_core.data.payloads import build_forward_backward_payload
from ct_core.errors import ConflictError, JobNotRunningError, NotFoundError

DB = "CT_TEST_DB"
MODEL = "Qwen/Qwen3-0.6B"


def _training(n_gpus: int = 1) -> SubJobConfig:
    return SubJobConfig.training_job(
        MODEL, optimizer={"name": "AdamW", "lr": 1e-3}, max_seq_len=64, train_batch_size=1, n_gpus=n_gpus
    )


def _frame() -> bytes:
    return build_forward_backward_payload({"texts": ["a short text"], "tokenizer": "byte", "max_length": 16})


@pytest.fixture
def schema() -> str:
    return f"S_{uuid.uuid4().hex[:8].upper()}"


@pytest.fixture
def direct(local_server: Any, schema: str) -> Iterator[CortexTrainingClient]:
    """A client straight to the server, for setting jobs up."""
    with CortexTrainingClient(
        base_url=local_server.base_url, database=DB, schema=schema, poll_interval=0.02, poll_timeout=60
    ) as client:
        yield client


@pytest.fixture
def recorded(
    local_server: Any, schema: str, relay: Any, no_sleep: Any
) -> Iterator[tuple[Any, CortexTrainingClient]]:
    """(recorder, client): a client of the same schema whose requests the recorder sees."""
    recorder = relay(local_server.base_url)
    with CortexTrainingClient(
        base_url=recorder.base_url, database=DB, schema=schema, sleep=no_sleep, poll_interval=0.02
    ) as client:
        yield recorder, client


def _calls(recorder: Any, since: int = 0) -> list[str]:
    """`METHOD last-path-segment` of each request the recorder saw, from index `since` on."""
    return [
        f"{seen.method} {seen.path.split('?', 1)[0].rstrip('/').rsplit('/', 1)[-1]}"
        for seen in recorder.requests[since:]
    ]


def test_fwd_bwd_on_a_pending_job_fails_at_once_naming_the_status(
    direct: CortexTrainingClient, recorded: tuple[Any, CortexTrainingClient], no_sleep: Any
) -> None:
    # More GPUs than the account holds: the job stays pending.
    job_id = direct.create_job([_training(n_gpus=1000)])
    assert direct.get_job(job_id)["status"] == "pending"
    recorder, client = recorded
    with pytest.raises(JobNotRunningError) as caught:
        client.forward_backward(job_id, _frame())
    error = caught.value
    assert isinstance(error, ConflictError) and error.status_code == 409
    assert error.job_id == job_id and error.job_status == "pending"
    assert "pending" in str(error) and "wait_for_job" in str(error)
    # One refused call, one read of the job, no retry and no wait.
    assert _calls(recorder) == ["POST forward-backward", f"GET {job_id}"]
    assert no_sleep.calls == []


@pytest.mark.parametrize(
    ("status", "reason"), [("cancelled", ""), ("failed", "boom"), ("terminated", "idle_timeout")]
)
def test_step_on_an_ended_job_fails_at_once_naming_the_status(
    direct: CortexTrainingClient,
    recorded: tuple[Any, CortexTrainingClient],
    no_sleep: Any,
    local_server: Any,
    status: str,
    reason: str,
) -> None:
    job_id = direct.create_job([_training()])
    local_server.force_status(job_id, status, reason=reason)
    recorder, client = recorded
    with pytest.raises(JobNotRunningError) as caught:
        client.step(job_id)
    error = caught.value
    assert error.job_status == status and error.reason == reason
    assert f"is {status}" in str(error) and "has ended" in str(error)
    assert _calls(recorder) == ["POST step", f"GET {job_id}"]
    assert no_sleep.calls == []


def test_a_restarting_zone_409_on_a_running_job_is_still_retried(
    direct: CortexTrainingClient,
    recorded: tuple[Any, CortexTrainingClient],
    no_sleep: Any,
    local_server: Any,
) -> None:
    job_id = direct.create_job([_training()])
    direct.wait_for_job(job_id)
    local_server.set_faults(
        {
            "path": f"/{job_id}/step$",
            "method": "POST",
            "action": "respond",
            "status": 409,
            "body": {"message": "the zone is restarting", "code": 409},
            "count": 2,
        }
    )
    recorder, client = recorded
    request_id = client.step(job_id)
    assert direct.poll_request(job_id, request_id)["global_steps"] >= 1
    # The job was read once (running: the conflict is the zone's), then the step was retried.
    assert _calls(recorder)[:4] == ["POST step", f"GET {job_id}", "POST step", "POST step"]
    assert len(no_sleep.calls) >= 2


def test_a_mistyped_request_id_on_a_just_created_job_fails_at_once(
    direct: CortexTrainingClient, recorded: tuple[Any, CortexTrainingClient], no_sleep: Any
) -> None:
    recorder, client = recorded
    # This client created the job a moment ago: its 404s are in the grace window.
    job_id = client.create_job([_training()])
    direct.wait_for_job(job_id)
    waits_before, since = len(no_sleep.calls), len(recorder.requests)
    with pytest.raises(NotFoundError) as caught:
        client.get_request_status(job_id, "req-mistyped")
    assert caught.value.code == "517601" and "req-mistyped" in str(caught.value)
    # One refused poll, one read of the job (it is there, so the request id is what is wrong).
    assert _calls(recorder, since) == ["GET req-mistyped", f"GET {job_id}"]
    assert len(no_sleep.calls) == waits_before
