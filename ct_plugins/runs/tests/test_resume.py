"""Exact resume: a run whose service is SIGKILLed again and again, or whose training job fails,
ends with the metrics of the same run left alone (bit-identical on the CPU local server).

Only ``tokens_per_s`` may differ: it is a wall-clock measurement.
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "RESUME_DB", "PUBLIC"
#: Series that are functions of the config alone.
DETERMINISTIC = ("train_loss", "val_loss", "lr", "epoch", "val_accuracy/topic")
KILLS = 10


@pytest.fixture
def server(local_server_factory: Any, kit: Any) -> Any:
    return local_server_factory(settings=kit.settings)


def _client(server: Any) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=server.base_url, database=DATABASE, schema=SCHEMA, poll_interval=0.02, poll_max_interval=0.25
    )


@pytest.fixture
def reference(server: Any, kit: Any, tmp_path: Any) -> Iterator[dict[str, Any]]:
    """A dataset, the spec of a run that stops early, and that run trained without interruption."""
    with _client(server) as client:
        path = kit.write_corpus(tmp_path / "corpus.jsonl", kit.corpus_lines())
        dataset = client.datasets.build(path, label_fields=["topic"], seed=3, wait=True, timeout=120)
        # Early stopping after two validations without a 0.25 gain: the stop step is part of what
        # must come out the same.
        spec = kit.small_spec(dataset["dataset_id"], epochs=3, patience=2, min_delta=0.25, val_every_steps=4)
        run = client.runs.wait(client.runs.start(spec)["run_id"], timeout=600)
        assert run["status"] == "succeeded", run.get("error")
        yield {"spec": spec, "run": run, "series": client.runs.metrics(run["run_id"])["series"]}


def _same_metrics(client: CortexTrainingClient, run: dict[str, Any], reference: dict[str, Any]) -> None:
    series = client.runs.metrics(run["run_id"])["series"]
    for name in DETERMINISTIC:
        assert series.get(name) == reference["series"].get(name), name
    assert run["early_stop"] == reference["run"]["early_stop"]
    assert run["step"] == reference["run"]["step"]
    assert run["best_val_loss"] == reference["run"]["best_val_loss"]


def test_sigkill_at_ten_random_points_resumes_exactly(server: Any, reference: dict[str, Any]) -> None:
    assert reference["run"]["early_stop"] is not None, reference["series"]["val_loss"]
    rng = random.Random(20261201)
    with _client(server) as client:
        run_id = client.runs.start(reference["spec"])["run_id"]
        assert run_id != reference["run"]["run_id"]
        kills = 0
        while kills < KILLS:
            run = client.runs.get(run_id)
            if run["status"] in ("succeeded", "failed", "cancelled"):
                break
            if rng.random() < 0.3:
                # While the service is starting up or recovering.
                time.sleep(rng.uniform(0.0, 1.0))
            else:
                # Mid-segment, a few steps past where the run stands now.
                _wait_until_step(client, run_id, run["step"] + rng.randint(1, 7))
            server.stop(signal.SIGKILL)
            kills += 1
            server.start()
        run = client.runs.wait(run_id, timeout=900)
        assert run["status"] == "succeeded", run.get("error")
        assert kills >= 6
        _same_metrics(client, run, reference)
        resumed = [
            e
            for e in client.runs.logs(run_id, structured=True, limit=10_000)["logs"]
            if e.get("event") == "resumed"
        ]
        assert resumed, "the run never resumed from a checkpoint"
        # Every job but the live one was ended; the run names them all.
        assert len(run["job_ids"]) >= 2


def _wait_until_step(client: CortexTrainingClient, run_id: str, step: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while True:
        run = client.runs.get(run_id)
        if run["step"] >= step or run["status"] in ("succeeded", "failed", "cancelled"):
            return
        assert time.monotonic() < deadline, f"run {run_id} stuck at step {run['step']}"
        time.sleep(0.02)


def test_a_failed_training_job_resumes_on_a_new_job(server: Any, reference: dict[str, Any]) -> None:
    with _client(server) as client:
        run_id = client.runs.start(reference["spec"])["run_id"]
        deadline = time.monotonic() + 300
        while True:
            run = client.runs.get(run_id)
            if run["step"] >= 7 and run["job_ids"]:
                break
            assert time.monotonic() < deadline and run["status"] in ("queued", "running"), run
            time.sleep(0.05)
        failed_job = run["job_ids"][-1]
        answer = httpx.post(
            f"{server.base_url}/_ct/jobs/{failed_job}/status",
            json={"status": "failed", "reason": "PREEMPTED", "reason_details": "test preemption"},
            headers=server.admin_headers,
            timeout=10,
        )
        assert answer.status_code == 200, answer.text
        run = client.runs.wait(run_id, timeout=600)
        assert run["status"] == "succeeded", run.get("error")
        assert failed_job in run["job_ids"] and run["job_ids"][-1] != failed_job
        _same_metrics(client, run, reference)
        events = [e.get("event") for e in client.runs.logs(run_id, structured=True, limit=10_000)["logs"]]
        assert "job_lost" in events and "resumed" in events
