"""Resuming a failed or cancelled run, registering a cancelled run's model, listing models.

A cancelled run resumed by request trains on exactly as the same run left alone: the same metric
series, the same early stop and the same weights in its registered model (bit-identical on the
CPU local server), because the resume takes the path a restart after SIGKILL takes.
"""

from __future__ import annotations

import hashlib
from typing import Any

import httpx
import pytest
from ct_testing import wait_until

from ct_core import CortexTrainingClient
from ct_core.errors import ConflictError, InvalidArgumentError

DATABASE, SCHEMA = "RESUME_DB", "PUBLIC"
#: Series that are functions of the config alone (tokens_per_s is a wall-clock measurement).
DETERMINISTIC = ("train_loss", "val_loss", "lr", "epoch", "val_accuracy/topic")
#: How long the server holds the step the test cancels at: ample time to send the cancel, which
#: the run then reads at its next step boundary (the test waits for the hold to begin, not a time).
HOLD_S = 10.0


@pytest.fixture(scope="module")
def spec(client: CortexTrainingClient, tmp_path_factory: pytest.TempPathFactory, kit: Any) -> dict[str, Any]:
    corpus = kit.write_corpus(tmp_path_factory.mktemp("resume-register") / "corpus.jsonl", kit.corpus_lines())
    dataset = client.datasets.build(corpus, label_fields=["topic"], seed=3, wait=True, timeout=600)
    assert dataset["status"] == "succeeded", dataset
    return kit.small_spec(dataset["dataset_id"], epochs=3, patience=2, min_delta=0.25, val_every_steps=4)


@pytest.fixture(scope="module")
def reference(client: CortexTrainingClient, spec: dict[str, Any]) -> dict[str, Any]:
    """The run trained without interruption."""
    run = client.runs.wait(client.runs.start(spec)["run_id"], timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    return {"run": run, "series": client.runs.metrics(run["run_id"])["series"]}


def _weights_sha256(client: CortexTrainingClient, model: dict[str, Any]) -> str:
    """The SHA-256 of the registered model's weights file, downloaded through its export links."""
    files = client.export_checkpoint(model["job_id"], model["checkpoint_id"])["files"]
    weights = next(f for f in files if f["filename"] == "model.safetensors")
    answer = httpx.get(weights["url"], timeout=60)
    answer.raise_for_status()
    return hashlib.sha256(answer.content).hexdigest()


@pytest.mark.timeout(900)
def test_a_cancelled_run_resumed_ends_as_the_run_left_alone(
    server: Any, client: CortexTrainingClient, spec: dict[str, Any], reference: dict[str, Any], kit: Any
) -> None:
    run_id = client.runs.start(spec)["run_id"]
    cancelled = kit.cancel_mid_run(server, client, run_id)
    assert 0 < cancelled["step"] < reference["run"]["step"], cancelled
    assert cancelled["model_id"] is None

    resumed = client.runs.resume(run_id)
    assert resumed["run_id"] == run_id and resumed["status"] == "queued"
    assert resumed["cancel_requested"] is False and resumed["finished_at"] is None
    run = client.runs.wait(run_id, timeout=600)
    assert run["status"] == "succeeded", run.get("error")

    series = client.runs.metrics(run_id)["series"]
    for name in DETERMINISTIC:
        assert series.get(name) == reference["series"].get(name), name
    for key in ("step", "early_stop", "best_val_loss", "best_step"):
        assert run[key] == reference["run"][key], key
    model = client.runs.get_model(run["model_id"])
    expected = client.runs.get_model(reference["run"]["model_id"])
    assert model["step"] == expected["step"]
    assert _weights_sha256(client, model) == _weights_sha256(client, expected)
    events = [e.get("event") for e in client.runs.logs(run_id, structured=True, limit=10_000)["logs"]]
    assert events.index("cancelled") < events.index("resume_requested") < events.index("succeeded"), events
    assert "resumed" in events[events.index("resume_requested") :], events


def test_resume_refuses_a_succeeded_run_and_says_what_to_do(
    client: CortexTrainingClient, reference: dict[str, Any]
) -> None:
    run_id = reference["run"]["run_id"]
    with pytest.raises(ConflictError) as refused:
        client.runs.resume(run_id)
    assert refused.value.status_code == 409 and refused.value.code == "aborted"
    assert "succeeded" in str(refused.value) and reference["run"]["model_id"] in str(refused.value)
    assert client.runs.get(run_id)["status"] == "succeeded"


def test_running_and_never_started_runs_refuse_resume_and_register(
    server: Any, client: CortexTrainingClient, spec: dict[str, Any], kit: Any
) -> None:
    # One run trains at a time: while the server holds a step of the first, the second is queued.
    running = client.runs.start({**spec, "seed": 11})["run_id"]
    wait_until(
        lambda: client.runs.get(running)["job_ids"], timeout=300, message="the first run never started"
    )
    server.set_faults({"path": "/step$", "method": "POST", "action": "delay", "delay_s": HOLD_S})
    try:
        wait_until(lambda: kit.fault_hit(server), timeout=300, interval=0.01)
        queued = client.runs.start({**spec, "seed": 13})
        assert queued["status"] == "queued", queued
        cancelled = client.runs.cancel(queued["run_id"])
        assert cancelled["status"] == "cancelled" and not cancelled["checkpoints"], cancelled

        with pytest.raises(ConflictError, match="no resumable checkpoint") as refused:
            client.runs.resume(queued["run_id"])
        assert refused.value.status_code == 409 and refused.value.code == "aborted"
        assert "ct runs start" in str(refused.value)
        with pytest.raises(ConflictError, match="before any validation"):
            client.runs.register(queued["run_id"])
        assert client.runs.models(run_id=queued["run_id"]) == []

        with pytest.raises(ConflictError, match="only a failed or cancelled run"):
            client.runs.resume(running)
        with pytest.raises(ConflictError, match="cancel it"):
            client.runs.register(running)
    finally:
        server.clear_faults()
        client.runs.cancel(running)
    assert client.runs.wait(running, timeout=600)["status"] == "cancelled"


def test_a_cancelled_run_registers_its_best_checkpoint(
    server: Any, client: CortexTrainingClient, spec: dict[str, Any], reference: dict[str, Any], kit: Any
) -> None:
    run_id = client.runs.start({**spec, "seed": 5})["run_id"]
    run = kit.cancel_mid_run(server, client, run_id)
    best = run["best_checkpoint_id"]
    assert best is not None, run  # validation runs every 4 steps, before the first checkpoint

    model = client.runs.register(run_id)
    assert model["run_id"] == run_id and model["run_status"] == "cancelled"
    assert model["source_checkpoint_id"] == best and model["fallback"] is False
    assert best in model["status_detail"] and "cancelled" in model["status_detail"]
    # The corpus is text with a label field: no chat template, and the record says which format.
    assert model["format"] == "labels" and model["chat_template"] is None
    assert client.runs.get(run_id)["model_id"] == model["model_id"]
    assert client.runs.get_model(model["model_id"]) == model
    # Asking again answers the same model; a run with a model cannot be resumed past it.
    assert client.runs.register(run_id) == model
    with pytest.raises(ConflictError, match=model["model_id"]):
        client.runs.resume(run_id)

    listed = client.runs.models()
    assert {model["model_id"], reference["run"]["model_id"]} <= {m["model_id"] for m in listed}
    assert [m["model_id"] for m in client.runs.models(run_id=run_id)] == [model["model_id"]]
    with pytest.raises(InvalidArgumentError) as bad:
        client.runs.models(run_id="not-a-run")
    assert bad.value.field == "run_id"
