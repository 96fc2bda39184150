"""Live logs of a job with several sub-jobs, no sub-job named: the training sub-job is read.

The service refuses a tail-logs operation without routing hints when the job has several sub-jobs
(400). `ct logs` reads the training sub-job then, and so do `tail_logs` and `stream_logs`: they read
the job once, send the training sub-job's id, and log which sub-job they chose.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ct_core import CortexTrainingClient, SubJobConfig

DB = "CT_LOGS_DB"
MODEL = "Qwen/Qwen3-0.6B"


@pytest.fixture
def job(local_server: Any) -> Iterator[tuple[str, str]]:
    """(schema, job id) of a running job with a trainer and a sampler."""
    schema = f"S_{uuid.uuid4().hex[:8].upper()}"
    with CortexTrainingClient(
        base_url=local_server.base_url, database=DB, schema=schema, poll_interval=0.02, poll_timeout=60
    ) as client:
        trainer = SubJobConfig.training_job(
            MODEL, optimizer={"name": "AdamW", "lr": 1e-3}, max_seq_len=64, train_batch_size=1, n_gpus=1
        )
        sampler = SubJobConfig.sampling_job(MODEL, max_seq_len=64, n_gpus=1)
        job_id = client.create_job([trainer, sampler])
        client.wait_for_job(job_id)
        yield schema, job_id


def _tail_bodies(recorder: Any) -> list[dict[str, Any]]:
    bodies = [json.loads(seen.body) for seen in recorder.requests if seen.path.endswith("/operation")]
    return [body for body in bodies if body.get("operation_type") == "tail-logs"]


def test_tail_and_stream_logs_default_to_the_training_sub_job(
    local_server: Any, relay: Any, job: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    schema, job_id = job
    recorder = relay(local_server.base_url)
    with (
        CortexTrainingClient(base_url=recorder.base_url, database=DB, schema=schema) as client,
        caplog.at_level(logging.INFO, logger="ct_core.dataplane"),
    ):
        page = client.tail_logs(job_id, max_lines=5)
        assert isinstance(page.get("entries"), list)
        entries = list(client.stream_logs(job_id, follow=False, max_lines=5))
        assert all("_raw" in entry for entry in entries)
        assert client.default_log_sub_job(job_id) == f"{job_id}:training:0"
    training = f"{job_id}:training:0"
    bodies = _tail_bodies(recorder)
    assert bodies and all(body["sub_job_id"] == training for body in bodies), bodies
    # The job was read once to choose, and the choice is said (once).
    reads = [seen for seen in recorder.requests if seen.method == "GET" and seen.path.endswith(job_id)]
    assert len(reads) == 1
    chosen = [r.getMessage() for r in caplog.records if "training sub-job" in r.getMessage()]
    assert len(chosen) == 1 and training in chosen[0] and f"{job_id}:sampling:0" in chosen[0]


def test_a_named_sub_job_is_read_as_named(local_server: Any, relay: Any, job: tuple[str, str]) -> None:
    schema, job_id = job
    recorder = relay(local_server.base_url)
    sampler = f"{job_id}:sampling:0"
    with CortexTrainingClient(base_url=recorder.base_url, database=DB, schema=schema) as client:
        client.tail_logs(job_id, max_lines=5, sub_job_id=sampler)
    assert [body["sub_job_id"] for body in _tail_bodies(recorder)] == [sampler]
    assert not [seen for seen in recorder.requests if seen.method == "GET"]
