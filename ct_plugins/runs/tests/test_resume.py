"""Exact resume: a run whose service is SIGKILLed again and again, or whose training job fails,
ends with the metrics of the same run left alone (bit-identical on the CPU local server).

Only ``tokens_per_s`` may differ: it is a wall-clock measurement.
"""

from __future__ import annotations

import random
import signal
import time
from typing import Any

import httpx
import pytest
from ct_testing import wait_until

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "RESUME_DB", "PUBLIC"
#: Series that are functions of the config alone.
DETERMINISTIC = ("train_loss", "val_loss", "lr", "epoch", "val_accuracy/topic")
KILLS = 10
#: How long the server holds the one status read the test scripts: ample time for the test to
#: fail the job meanwhile (it waits for the read to arrive, not for a time).
HOLD_S = 5.0
#: How long the server would hold the step the first kill lands on: longer than any wait for it.
HOLD_STEP_S = 600.0


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, kit: Any) -> Any:
    return kit.write_corpus(tmp_path_factory.mktemp("resume") / "corpus.jsonl", kit.corpus_lines())


def _spec_on(client: CortexTrainingClient, corpus: Any, kit: Any) -> dict[str, Any]:
    """The dataset built on this client's service (the same file and seed give the same split),
    and the spec of a run on it that stops early."""
    dataset = client.datasets.build(corpus, label_fields=["topic"], seed=3, wait=True, timeout=600)
    assert dataset["status"] == "succeeded", dataset
    # Early stopping after two validations without a 0.25 gain: the stop step is part of what
    # must come out the same.
    return kit.small_spec(dataset["dataset_id"], epochs=3, patience=2, min_delta=0.25, val_every_steps=4)


@pytest.fixture(scope="module")
def reference(module_local_server_factory: Any, kit: Any, corpus: Any) -> dict[str, Any]:
    """The run trained without interruption, once for the module, on a server of its own: each
    test trains the same spec on its own server (a run is bit-identical from one server process to
    the next, which is what a resume after SIGKILL relies on too)."""
    server = module_local_server_factory(settings=kit.settings)
    with kit.client(server.base_url, DATABASE, SCHEMA) as client:
        spec = _spec_on(client, corpus, kit)
        run = client.runs.wait(client.runs.start(spec)["run_id"], timeout=600)
        assert run["status"] == "succeeded", run.get("error")
        return {"run": run, "series": client.runs.metrics(run["run_id"])["series"]}


@pytest.fixture
def server(local_server_factory: Any, kit: Any) -> Any:
    return local_server_factory(settings=kit.settings)


def _same_metrics(client: CortexTrainingClient, run: dict[str, Any], reference: dict[str, Any]) -> None:
    series = client.runs.metrics(run["run_id"])["series"]
    for name in DETERMINISTIC:
        assert series.get(name) == reference["series"].get(name), name
    assert run["early_stop"] == reference["run"]["early_stop"]
    assert run["step"] == reference["run"]["step"]
    assert run["best_val_loss"] == reference["run"]["best_val_loss"]


def _running_past(client: CortexTrainingClient, run_id: str, step: int) -> dict[str, Any]:
    """The run once it has committed a checkpoint past `step` on a live job."""

    def past_step() -> dict[str, Any] | None:
        run = client.runs.get(run_id)
        if run["step"] >= step and run["job_ids"]:
            return run
        assert run["status"] in ("queued", "running"), run
        return None

    return wait_until(past_step, timeout=300, interval=0.05, message=f"run {run_id} never passed step {step}")


def _fail_job(server: Any, job_id: str) -> None:
    answer = httpx.post(
        f"{server.base_url}/_ct/jobs/{job_id}/status",
        json={"status": "failed", "reason": "PREEMPTED", "reason_details": "test preemption"},
        headers=server.admin_headers,
        timeout=10,
    )
    assert answer.status_code == 200, answer.text


def test_a_failed_training_job_resumes_on_a_new_job(
    server: Any, reference: dict[str, Any], corpus: Any, kit: Any
) -> None:
    with kit.client(server.base_url, DATABASE, SCHEMA) as client:
        run_id = client.runs.start(_spec_on(client, corpus, kit))["run_id"]
        failed_job = _running_past(client, run_id, 7)["job_ids"][-1]
        # Mid-segment or between two segments, wherever the failure lands, it is reported.
        _fail_job(server, failed_job)
        run = client.runs.wait(run_id, timeout=600)
        assert run["status"] == "succeeded", run.get("error")
        assert failed_job in run["job_ids"] and run["job_ids"][-1] != failed_job
        _same_metrics(client, run, reference)
        events = [e.get("event") for e in client.runs.logs(run_id, structured=True, limit=10_000)["logs"]]
        assert "job_lost" in events and "resumed" in events


def test_a_job_that_fails_between_two_segments_is_reported_and_replaced(
    server: Any, reference: dict[str, Any], corpus: Any, kit: Any
) -> None:
    with kit.client(server.base_url, DATABASE, SCHEMA) as client:
        run_id = client.runs.start(_spec_on(client, corpus, kit))["run_id"]
        failed_job = _running_past(client, run_id, 7)["job_ids"][-1]
        # A segment reads its job's status before it carries on with it: the server holds that
        # read (the next one of the job) while the test fails the job, so the failure lands
        # exactly between two segments.
        server.set_faults(
            {"path": f"/cortex-training/{failed_job}$", "method": "GET", "action": "delay", "delay_s": HOLD_S}
        )
        wait_until(
            lambda: kit.fault_hit(server),
            timeout=300,
            interval=0.01,
            message=lambda: str(client.runs.get(run_id)),
        )
        _fail_job(server, failed_job)
        run = client.runs.wait(run_id, timeout=600)
        assert run["status"] == "succeeded", run.get("error")
        assert failed_job in run["job_ids"] and run["job_ids"][-1] != failed_job
        _same_metrics(client, run, reference)
        logs = client.runs.logs(run_id, structured=True, limit=10_000)["logs"]
        events = [e.get("event") for e in logs]
        assert "job_lost" in events, events
        lost = next(e for e in logs if e.get("event") == "job_lost")
        assert failed_job in lost["message"]
        assert "resumed" in events[events.index("job_lost") :]


# The longest test last, so the module's reference run is not charged to its time limit; ten
# restarts of a server process take minutes on a loaded machine, hence a limit above the default.
@pytest.mark.timeout(600)
def test_sigkill_at_ten_random_points_resumes_exactly(
    server: Any, reference: dict[str, Any], corpus: Any, kit: Any
) -> None:
    assert reference["run"]["early_stop"] is not None, reference["series"]["val_loss"]
    rng = random.Random(20261201)
    with kit.client(server.base_url, DATABASE, SCHEMA) as client:
        run_id = client.runs.start(_spec_on(client, corpus, kit))["run_id"]
        assert run_id != reference["run"]["run_id"]
        kills = 0
        while kills < KILLS:
            run = client.runs.get(run_id)
            if run["status"] in ("succeeded", "failed", "cancelled"):
                break
            if kills == 0:
                # The first kill lands inside a segment that trains on from a committed checkpoint,
                # however fast or slow the machine: the server holds that segment's first step (a
                # segment is marked open before it sends anything). A run's visible step only moves
                # when a segment commits, so a kill "a few steps on" lands just after a commit, often
                # before the next segment opens: the restart then carries on with the same job, and a
                # run whose every kill landed there never resumed from a checkpoint at all.
                _wait_until_checkpoint(client, run_id)
                _hold_the_next_step(server, client, run_id, kit)
            elif kills == 1:
                # The second lands between two segments of the resumed job: the server holds the
                # read of the job's status that a segment makes before it carries on with a job.
                # The restart finds the segment closed and the job running, carries on with it, and
                # says so in the run's logs.
                _hold_between_two_segments(server, client, run_id, kit)
            elif rng.random() < 0.3:
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
        logs = client.runs.logs(run_id, structured=True, limit=10_000)["logs"]
        events = [e.get("event") for e in logs]
        assert "resumed" in events, f"the run never resumed from a checkpoint: {events}"
        # The restart after the second kill carried on with the live job, and the run says so.
        recovered = [e for e in logs if e.get("event") == "recovered"]
        assert recovered, f"no restart between two segments was logged: {events}"
        assert all(e["step"] is not None and e["worker"] for e in recovered), recovered
        # Every job but the live one was ended; the run names them all.
        assert len(run["job_ids"]) >= 2


def _wait_until_step(client: CortexTrainingClient, run_id: str, step: int, timeout: float = 300) -> None:
    wait_until(
        lambda: (
            (run := client.runs.get(run_id))["step"] >= step
            or run["status"] in ("succeeded", "failed", "cancelled")
        ),
        timeout=timeout,
        message=f"run {run_id} never reached step {step}",
    )


def _hold_the_next_step(server: Any, client: CortexTrainingClient, run_id: str, kit: Any) -> None:
    """Hold the next step request the server receives (the kill that follows ends it) and return
    once it is held: the run then stands inside an open segment past a committed checkpoint."""
    server.set_faults({"path": "/step$", "method": "POST", "action": "delay", "delay_s": HOLD_STEP_S})
    _wait_for_a_held_request(server, client, run_id, kit)


def _hold_between_two_segments(server: Any, client: CortexTrainingClient, run_id: str, kit: Any) -> None:
    """Once the run's current job has committed a checkpoint, hold the next read of that job's
    status (a segment's first request when it carries on with the job) and return once held."""
    run = _running_past(client, run_id, client.runs.get(run_id)["step"] + 1)
    job_id = run["job_ids"][-1]
    server.set_faults(
        {"path": f"/cortex-training/{job_id}$", "method": "GET", "action": "delay", "delay_s": HOLD_STEP_S}
    )
    _wait_for_a_held_request(server, client, run_id, kit)


def _wait_for_a_held_request(server: Any, client: CortexTrainingClient, run_id: str, kit: Any) -> None:
    """Until the server holds a request the fault rules match; the run must stay live meanwhile."""

    def held() -> bool:
        if kit.fault_hit(server):
            return True
        run = client.runs.get(run_id)
        assert run["status"] in ("queued", "running"), run
        return False

    wait_until(held, timeout=300, message=f"no request of run {run_id} was held")


def _wait_until_checkpoint(client: CortexTrainingClient, run_id: str, timeout: float = 300) -> None:
    wait_until(
        lambda: (
            (run := client.runs.get(run_id))["checkpoints"]
            or run["status"] in ("succeeded", "failed", "cancelled")
        ),
        timeout=timeout,
        message=f"run {run_id} saved no checkpoint",
    )
