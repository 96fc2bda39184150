"""The runs service end to end: a real ct_local with the service embedded, driven through the SDK.

One server for the module (runs train one at a time on it); each test builds its own datasets.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_runs import webhooks
from ct_testing import wait_until

from ct_core import CortexTrainingClient
from ct_core.errors import APIError, FailedPreconditionError, InvalidArgumentError, NotFoundError

DATABASE, SCHEMA = "RUNS_DB", "PUBLIC"


@pytest.fixture(scope="module")
def server(module_local_server_factory: Any, webhook_receiver: Any, kit: Any) -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CT_RUNS_WEBHOOK_SECRET", kit.secret)
        patch.delenv("CT_PLUGINS", raising=False)
        yield module_local_server_factory(
            settings={**kit.settings, "runs_webhook_urls": [webhook_receiver.url]}
        )


@pytest.fixture(scope="module")
def dataset(
    client: CortexTrainingClient, tmp_path_factory: pytest.TempPathFactory, kit: Any
) -> dict[str, Any]:
    path = kit.write_corpus(tmp_path_factory.mktemp("corpus") / "corpus.jsonl", kit.corpus_lines())
    return client.datasets.build(path, label_fields=["topic"], seed=1, wait=True, timeout=600)


@pytest.fixture(scope="module")
def finished_run(client: CortexTrainingClient, dataset: dict[str, Any], kit: Any) -> dict[str, Any]:
    """One run that trains to its end; several tests read it."""
    spec = kit.small_spec(dataset["dataset_id"])
    first = client.runs.start(spec)
    again = client.runs.start(spec)
    run = client.runs.wait(first["run_id"], timeout=600)
    return {"first": first, "again": again, "run": run, "spec": spec}


# --- datasets ------------------------------------------------------------------------------------


def test_dataset_build_splits_fingerprints_and_labels(
    client: CortexTrainingClient, dataset: dict[str, Any]
) -> None:
    assert dataset["status"] == "succeeded", dataset
    assert dataset["dataset_id"].startswith("ds_") and len(dataset["dataset_id"]) == 29
    assert dataset["splits"]["train"]["rows"] + dataset["splits"]["validation"]["rows"] == 120
    assert dataset["splits"]["validation"]["rows"] == 12
    assert set(dataset["fingerprints"]) >= {"source", "train", "validation"}
    assert dataset["violations"] == []
    [label] = dataset["labels"]
    assert label["field"] == "topic" and label["values"] == ["sea", "sky"]
    assert label["label_id"].startswith("lbl_")
    assert client.datasets.get(dataset["dataset_id"])["fingerprints"] == dataset["fingerprints"]


def test_same_file_and_seed_give_the_same_split(
    client: CortexTrainingClient, tmp_path: Path, dataset: dict[str, Any], kit: Any
) -> None:
    path = kit.write_corpus(tmp_path / "again.jsonl", kit.corpus_lines())
    again = client.datasets.build(path, label_fields=["topic"], seed=1, wait=True, timeout=600)
    assert again["dataset_id"] != dataset["dataset_id"]
    assert again["fingerprints"] == dataset["fingerprints"]
    other_seed = client.datasets.build(path, label_fields=["topic"], seed=2, wait=True, timeout=600)
    assert other_seed["fingerprints"]["source"] == dataset["fingerprints"]["source"]
    assert other_seed["fingerprints"]["train"] != dataset["fingerprints"]["train"]


def test_a_leaky_dataset_fails_closed(client: CortexTrainingClient, tmp_path: Path, kit: Any) -> None:
    lines = kit.corpus_lines(60, seed=11)
    # Every row twice: whatever the split, some text lands in both train and validation.
    path = kit.write_corpus(tmp_path / "leaky.jsonl", lines + [dict(line) for line in lines])
    built = client.datasets.build(path, wait=True, timeout=600)
    assert built["status"] == "succeeded"
    assert built["violations"] and {v["gate"] for v in built["violations"]} >= {"exact_duplicate"}
    with pytest.raises(FailedPreconditionError) as refused:
        client.runs.start(kit.small_spec(built["dataset_id"]))
    assert refused.value.code == "failed_precondition"
    assert "violation" in str(refused.value)


def test_a_bad_file_fails_the_build_with_the_line(client: CortexTrainingClient) -> None:
    built = client.datasets.build(b'{"text": "fine"}\nnot json\n', wait=True, timeout=600)
    assert built["status"] == "failed"
    assert built["error"]["code"] == "invalid_argument"
    assert "line 2" in built["error"]["message"]


def test_unknown_ids_answer_not_found(client: CortexTrainingClient) -> None:
    with pytest.raises(NotFoundError):
        client.datasets.get("ds_01m8rng1v17g51gxtxd8tpankf")
    with pytest.raises(NotFoundError):
        client.runs.get("run_01m8rng1v17g51gxtxd8tpankf")
    with pytest.raises(NotFoundError):
        client.runs.get("not-a-run")
    with pytest.raises(NotFoundError):
        client.runs.get_model("mdl_01m8rng1v17g51gxtxd8tpankf")


# --- specs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"overrides": {"max_seq_len": 128, "n_layers": 3}}, "overrides.n_layers"),
        ({"overrides": {"max_seq_len": 8}}, "overrides.max_seq_len"),
        ({"trainer": {"lr_schedule": "cosine"}}, "trainer.lr_schedule"),
        ({"trainer": {"epochs": 0}}, "trainer.epochs"),
        ({"model_config_tier": "XL"}, "model_config_tier"),
        ({"labels": ["lbl_01m8rng1v17g51gxtxd8tpankf"]}, "labels[0]"),
    ],
)
def test_invalid_specs_name_the_field(
    client: CortexTrainingClient, dataset: dict[str, Any], change: dict[str, Any], field: str, kit: Any
) -> None:
    spec = {**kit.small_spec(dataset["dataset_id"]), **change}
    with pytest.raises(InvalidArgumentError) as refused:
        client.runs.start(spec)
    assert refused.value.code == "invalid_argument"
    assert refused.value.field == field, str(refused.value)


# --- a whole run --------------------------------------------------------------------------------------


def test_identical_spec_in_flight_returns_the_same_run(finished_run: dict[str, Any]) -> None:
    assert finished_run["again"]["run_id"] == finished_run["first"]["run_id"]
    assert finished_run["again"]["config_fingerprint"] == finished_run["first"]["config_fingerprint"]


def test_a_run_trains_to_its_budget_and_registers_its_best_checkpoint(
    client: CortexTrainingClient, finished_run: dict[str, Any]
) -> None:
    run = finished_run["run"]
    assert run["status"] == "succeeded", run.get("error")
    assert run["step"] == run["total_steps"] == run["trainer"]["epochs"] * run["steps_per_epoch"]
    assert run["trainer"]["lr_schedule"] == "wsd" and run["trainer"]["early_stopping"] is True
    assert len(run["config_fingerprint"]) == 64
    assert run["best_val_loss"] is not None
    assert run["gpu_seconds"] > 0 and run["usage"]["training_gpu_seconds"] == run["gpu_seconds"]
    # Retention: the last three and the best, the rest deleted on the service.
    kept = {c["checkpoint_id"] for c in run["checkpoints"]}
    assert len(kept) <= 4 and run["best_checkpoint_id"] in kept
    best = next(c for c in run["checkpoints"] if c["checkpoint_id"] == run["best_checkpoint_id"])
    assert best["val_loss"] == run["best_val_loss"]
    on_service = {c["checkpoint_id"] for job in run["job_ids"] for c in client.list_checkpoints(job)}
    assert kept <= on_service
    model = client.runs.get_model(run["model_id"])
    assert model["status"] == "training" and model["run_id"] == run["run_id"]
    assert model["source_checkpoint_id"] == run["best_checkpoint_id"] and model["fallback"] is False
    assert model["checkpoint_id"] in on_service


def test_metrics_series_and_cursor(client: CortexTrainingClient, finished_run: dict[str, Any]) -> None:
    run = finished_run["run"]
    page = client.runs.metrics(run["run_id"])
    series = page["series"]
    assert {"train_loss", "val_loss", "lr", "epoch", "tokens_per_s", "val_accuracy/topic"} <= set(series)
    assert [s for s, _ in series["train_loss"]] == list(range(1, run["total_steps"] + 1))
    assert series["epoch"][-1] == [run["total_steps"], run["trainer"]["epochs"]]
    assert page["cursor"] == run["total_steps"]
    # WSD: warmup up, stable, decay to the floor at the last step.
    lrs = [v for _, v in series["lr"]]
    assert max(lrs) == pytest.approx(run["trainer"]["learning_rate"])
    assert lrs[-1] < lrs[len(lrs) // 2]
    later = client.runs.metrics(run["run_id"], after_step=run["total_steps"] - 3)
    assert [s for s, _ in later["series"]["train_loss"]] == [
        run["total_steps"] - 2,
        run["total_steps"] - 1,
        run["total_steps"],
    ]
    empty = client.runs.metrics(run["run_id"], after_step=page["cursor"])
    assert empty["series"] == {} and empty["cursor"] == page["cursor"]


def test_logs_plain_and_structured(client: CortexTrainingClient, finished_run: dict[str, Any]) -> None:
    run_id = finished_run["run"]["run_id"]
    plain = client.runs.logs(run_id)["logs"]
    assert plain and all(set(entry) == {"timestamp", "severity", "message"} for entry in plain)
    structured = client.runs.logs(run_id, structured=True)
    events = {entry.get("event") for entry in structured["logs"]}
    assert {"started", "validation", "checkpoint", "model_registered", "succeeded"} <= events
    validation = next(e for e in structured["logs"] if e.get("event") == "validation")
    assert validation["step"] > 0 and "loss" in validation["validation"] and validation["epoch"] > 0
    after = client.runs.logs(run_id, structured=True, after=structured["logs"][2]["seq"])
    assert after["logs"][0]["seq"] == structured["logs"][3]["seq"]


def test_completion_webhook_is_signed_and_sent_once(
    finished_run: dict[str, Any], webhook_receiver: Any, kit: Any
) -> None:
    run_id = finished_run["run"]["run_id"]

    def mine() -> list[dict[str, Any]]:
        return [r for r in webhook_receiver.received() if json.loads(r["body"])["data"]["run_id"] == run_id]

    # The hook is sent right after the run turns terminal; give it time to arrive.
    wait_until(mine, timeout=60, interval=0.05, message="the completion webhook never arrived")
    time.sleep(0.5)  # a duplicate would arrive right behind the first
    assert len(mine()) == 1
    [request] = mine()
    assert webhooks.verify(kit.secret, request["headers"], request["body"])
    assert not webhooks.verify("another-secret", request["headers"], request["body"])
    event = json.loads(request["body"])
    assert event["type"] == "run.completed" and event["data"]["status"] == "succeeded"
    assert event["data"]["usage"]["training_gpu_seconds"] > 0
    assert {k.lower(): v for k, v in request["headers"].items()}["x-ct-delivery"] == f"{run_id}.completed"


def test_the_registered_model_deploys_and_chats(
    client: CortexTrainingClient, finished_run: dict[str, Any]
) -> None:
    model = client.runs.get_model(finished_run["run"]["model_id"])
    spec = {
        "source": {"type": "registered_model", "model_id": model["model_id"]},
        "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
        "inference": {"max_seq_len": 512},
    }
    created = client.create_model_deployment(spec)
    deployment = created["deployment"]
    try:
        client.wait_for_model_deployment(deployment, timeout=120)
        described = client.describe_model_deployment(deployment)
        assert described["source"] == {
            "type": "checkpoint",
            "job_id": model["job_id"],
            "checkpoint_id": model["checkpoint_id"],
        }
        from openai import OpenAI

        openai = OpenAI(base_url=client.model_deployment_base_url(deployment), api_key="unused")
        answer = openai.chat.completions.create(
            model=deployment, messages=[{"role": "user", "content": "alpha bravo"}], max_completion_tokens=8
        )
        assert isinstance(answer.choices[0].message.content, str)
    finally:
        client.drop_model_deployment(deployment)


# --- early stopping, cancel ---------------------------------------------------------------------------------


def test_an_early_stopped_run_succeeds_below_its_budget(
    client: CortexTrainingClient, dataset: dict[str, Any], kit: Any
) -> None:
    # No validation can improve by 10 nats: the first result is the best, the next one stops.
    spec = kit.small_spec(dataset["dataset_id"], epochs=4, patience=1, min_delta=10.0, val_every_steps=6)
    run = client.runs.wait(client.runs.start(spec)["run_id"], timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    assert run["early_stop"] is not None and run["early_stop"]["step"] == 12
    assert "no validation improvement" in run["early_stop"]["reason"]
    cooldown = run["trainer"]["cooldown_steps"]
    assert run["step"] == 12 + cooldown < run["total_steps"]
    lrs = client.runs.metrics(run["run_id"])["series"]["lr"]
    assert lrs[-1][0] == run["step"] and lrs[-1][1] < lrs[11][1]
    assert run["model_id"]


def test_every_checkpoint_at_a_validated_step_keeps_its_validation_loss(
    client: CortexTrainingClient, dataset: dict[str, Any], kit: Any
) -> None:
    # A learning rate this high makes the validation loss go up and down, so some cadence
    # checkpoints fall on a validation that is not a new best; they keep their loss too.
    spec = kit.small_spec(
        dataset["dataset_id"], epochs=2, val_every_steps=5, learning_rate=0.3, early_stopping=False
    )
    run = client.runs.wait(client.runs.start(spec)["run_id"], timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    logs = client.runs.logs(run["run_id"], structured=True, limit=10_000)["logs"]
    validated = {e["step"]: e["validation"] for e in logs if e.get("event") == "validation"}
    saved = [e["checkpoint"] for e in logs if e.get("event") == "checkpoint"]
    at_validation = [c for c in saved if c["step"] in validated]
    assert any(not validated[c["step"]]["new_best"] for c in at_validation), (validated, saved)
    for checkpoint in at_validation:
        assert checkpoint["val_loss"] == validated[checkpoint["step"]]["loss"], checkpoint
    for checkpoint in saved:
        if checkpoint["step"] not in validated:
            assert checkpoint["val_loss"] is None, checkpoint
    # The best is still the lowest validation loss among the retained checkpoints.
    kept = [c for c in run["checkpoints"] if c["val_loss"] is not None]
    best = min(kept, key=lambda c: (c["val_loss"], c["step"]))
    assert run["best_checkpoint_id"] == best["checkpoint_id"]
    assert run["best_val_loss"] == min(v["loss"] for v in validated.values())


def test_cancel_a_queued_run_then_a_running_one(
    client: CortexTrainingClient, dataset: dict[str, Any], kit: Any
) -> None:
    long_spec = kit.small_spec(dataset["dataset_id"], epochs=50, checkpoint_every_steps=1000)
    running = client.runs.start({**long_spec, "seed": 5})
    queued = client.runs.start({**long_spec, "seed": 6})
    # One run trains at a time on this server, so the second waits in the queue.
    deadline_run = _wait_for(client, running["run_id"], lambda r: r["status"] == "running" and r["step"] >= 3)
    assert client.runs.get(queued["run_id"])["status"] == "queued"
    cancelled = client.runs.cancel(queued["run_id"])
    assert cancelled["status"] == "cancelled"
    assert client.runs.get(running["run_id"])["status"] == "running"
    client.runs.cancel(running["run_id"])
    final = client.runs.wait(running["run_id"], timeout=300)
    assert final["status"] == "cancelled" and final["model_id"] is None
    assert deadline_run["step"] <= final["step"] < final["total_steps"]
    last = final["checkpoints"][-1]
    assert last["step"] == final["step"] and "final" in last["reasons"]
    # The final checkpoint is valid: a new job starts from it (weights and optimizer states).
    body = {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": final["model_name"],
                "source_checkpoint_info": {
                    "checkpoint_id": last["checkpoint_id"],
                    "source_job_id": last["job_id"],
                },
                "training_config": {
                    "optimizer": {"name": "AdamW", "lr": 1e-3},
                    "max_seq_len": 128,
                    "n_gpus": 1,
                },
            }
        ],
        "hardware": "H200",
    }
    job_id = client.create_job_from_body(body)["job_id"]
    try:
        assert client.wait_for_job(job_id)["status"].lower() == "running"
    finally:
        client.cancel_job(job_id)
    with pytest.raises(APIError):
        client.runs.cancel("run_01m8rng1v17g51gxtxd8tpankf")


def _wait_for(client: CortexTrainingClient, run_id: str, ready: Any, timeout: float = 300) -> dict[str, Any]:
    last: dict[str, Any] = {}

    def ready_run() -> dict[str, Any] | None:
        nonlocal last
        last = run = client.runs.get(run_id)
        if ready(run):
            return run
        assert run["status"] not in ("failed", "succeeded", "cancelled"), run
        return None

    return wait_until(
        ready_run,
        timeout=timeout,
        interval=0.1,
        message=lambda: f"run {run_id} not ready: {last.get('status')} at step {last.get('step')}",
    )


def test_list_runs_newest_first_and_by_status(
    client: CortexTrainingClient, finished_run: dict[str, Any]
) -> None:
    runs = client.runs.list()
    ids = [run["run_id"] for run in runs]
    assert finished_run["run"]["run_id"] in ids
    created = [run["created_at"] for run in runs]
    assert created == sorted(created, reverse=True)
    succeeded = client.runs.list(status="succeeded")
    assert succeeded and all(run["status"] == "succeeded" for run in succeeded)
    assert len(client.runs.list(limit=1)) == 1
    # Another schema of the same server has none of them.
    with CortexTrainingClient(base_url=client.base_url, database=DATABASE, schema="OTHER") as other:
        assert other.runs.list() == []
        with pytest.raises(NotFoundError):
            other.runs.get(finished_run["run"]["run_id"])


def test_routes_check_the_callers_token_and_role(local_server_factory: Any, kit: Any) -> None:
    from ct_core.errors import AuthenticationError

    server = local_server_factory(tokens={"alice-token": "ALICE", "bob-token": "BOB"}, settings=kit.settings)

    def as_(token: str | None) -> CortexTrainingClient:
        return CortexTrainingClient(base_url=server.base_url, database=DATABASE, schema=SCHEMA, token=token)

    with as_("alice-token") as alice, as_("bob-token") as bob, as_(None) as nobody:
        built = alice.datasets.build(
            b'{"text": "one row"}\n{"text": "another row"}\n', wait=True, timeout=600
        )
        assert built["status"] == "succeeded"
        with pytest.raises(NotFoundError):
            bob.datasets.get(built["dataset_id"])
        with pytest.raises(NotFoundError):
            bob.runs.start(kit.small_spec(built["dataset_id"], epochs=1))
        with pytest.raises(AuthenticationError):
            nobody.runs.list()
        with pytest.raises(AuthenticationError):
            nobody.datasets.get(built["dataset_id"])
