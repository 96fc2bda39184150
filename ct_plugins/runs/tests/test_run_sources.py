"""What a run starts from and validates on: `model` (a registered model id continues from its
weights) and `validation_dataset_id` (a build of its own replaces the dataset's split)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ct_core import CortexTrainingClient
from ct_core.errors import InvalidArgumentError

DATABASE, SCHEMA = "SOURCES_DB", "PUBLIC"
#: Rows of the separate validation build.
VALIDATION_ROWS = 40


@pytest.fixture(scope="module")
def dataset(
    client: CortexTrainingClient, tmp_path_factory: pytest.TempPathFactory, kit: Any
) -> dict[str, Any]:
    corpus = kit.write_corpus(tmp_path_factory.mktemp("sources") / "corpus.jsonl", kit.corpus_lines())
    built = client.datasets.build(corpus, seed=3, wait=True, timeout=600)
    assert built["status"] == "succeeded", built
    return built


@pytest.fixture(scope="module")
def base_run(client: CortexTrainingClient, dataset: dict[str, Any], kit: Any) -> dict[str, Any]:
    run = client.runs.start(kit.small_spec(dataset["dataset_id"], epochs=1), wait=True, timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    return run


def _first_loss(client: CortexTrainingClient, run_id: str) -> float:
    return float(client.runs.metrics(run_id)["series"]["train_loss"][0][1])


def test_a_run_continues_from_a_registered_model(
    client: CortexTrainingClient, dataset: dict[str, Any], base_run: dict[str, Any], kit: Any
) -> None:
    model = client.runs.get_model(base_run["model_id"])
    spec = {**kit.small_spec(dataset["dataset_id"], epochs=1), "model": model["model_id"]}
    run = client.runs.start(spec, wait=True, timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    assert run["model"] == model["model_id"] and run["model_name"] == base_run["model_name"]
    # Its first job loaded the registered weights-only export, without optimizer states.
    job = client.get_job(run["job_ids"][0])
    sub_job = job["sub_jobs"][0]
    assert sub_job["source_checkpoint_info"]["checkpoint_id"] == model["checkpoint_id"]
    assert sub_job["source_checkpoint_info"]["source_job_id"] == model["job_id"]
    assert sub_job["training_config"]["load_optimizer_states"] is False
    # And it starts where the first run ended: its first step's loss is well below the base model's.
    assert _first_loss(client, run["run_id"]) < 0.8 * _first_loss(client, base_run["run_id"])


def test_an_unknown_registered_model_is_refused_at_its_field(
    client: CortexTrainingClient, dataset: dict[str, Any], kit: Any
) -> None:
    spec = {**kit.small_spec(dataset["dataset_id"]), "model": "mdl_01JZZZZZZZZZZZZZZZZZZZZZZZ"}
    with pytest.raises(InvalidArgumentError) as refused:
        client.runs.start(spec)
    assert refused.value.field == "model"


def test_a_separate_validation_dataset_replaces_the_split(
    client: CortexTrainingClient,
    dataset: dict[str, Any],
    base_run: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
    kit: Any,
) -> None:
    lines = kit.corpus_lines(rows=VALIDATION_ROWS, seed=99)
    path = tmp_path_factory.mktemp("validation") / "validation.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    validation = client.datasets.build(path, seed=3, wait=True, timeout=600)
    assert validation["status"] == "succeeded", validation

    spec = {
        **kit.small_spec(dataset["dataset_id"], epochs=1),
        "validation_dataset_id": validation["dataset_id"],
    }
    run = client.runs.start(spec, wait=True, timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    assert run["validation_dataset_id"] == validation["dataset_id"]

    # It trains on every row of the dataset (its split has nothing else to do) ...
    rows = dataset["splits"]["train"]["rows"] + dataset["splits"]["validation"]["rows"]
    assert base_run["steps_per_epoch"] == -(-dataset["splits"]["train"]["rows"] // 4)
    assert run["steps_per_epoch"] == -(-rows // 4)
    # ... and validates on every row of the validation build, both its splits.
    logs = client.runs.logs(run["run_id"], structured=True, limit=10_000)["logs"]
    validations = [e["validation"] for e in logs if e.get("event") == "validation"]
    assert validations, [e.get("event") for e in logs]
    assert all(v["dataset_id"] == validation["dataset_id"] for v in validations), validations
    assert all(v["rows"] == VALIDATION_ROWS for v in validations), validations
    # A run without one validates on its dataset's split.
    base_logs = client.runs.logs(base_run["run_id"], structured=True, limit=10_000)["logs"]
    base = next(e["validation"] for e in base_logs if e.get("event") == "validation")
    assert base["dataset_id"] == dataset["dataset_id"]
    assert base["rows"] == dataset["splits"]["validation"]["rows"]


def test_a_model_trained_on_chat_rows_records_its_chat_template(
    client: CortexTrainingClient, tmp_path_factory: pytest.TempPathFactory, kit: Any
) -> None:
    from ct_runs import templates

    rows = []
    for line in kit.corpus_lines(rows=60, seed=21):
        words = line["text"].split()
        messages = [
            {"role": "user", "content": " ".join(words[:7])},
            {"role": "assistant", "content": " ".join(words[7:])},
        ]
        rows.append({"messages": messages})
    path = tmp_path_factory.mktemp("chat") / "chat.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    dataset = client.datasets.build(path, seed=3, wait=True, timeout=600)
    assert dataset["status"] == "succeeded" and dataset["format"] == "chat", dataset
    run = client.runs.start(kit.small_spec(dataset["dataset_id"], epochs=1), wait=True, timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    model = client.runs.get_model(run["model_id"])
    assert model["format"] == "chat" and model["run_status"] == "succeeded"
    assert model["chat_template"] == {"name": templates.TEMPLATE, "end_of_turn": templates.END_OF_TURN}
    assert model["source_checkpoint_id"] in model["status_detail"] and run["run_id"] in model["status_detail"]


def test_the_logs_carry_the_train_loss_at_a_cadence(
    client: CortexTrainingClient, base_run: dict[str, Any]
) -> None:
    logs = client.runs.logs(base_run["run_id"], structured=True, limit=10_000)["logs"]
    progress = [e for e in logs if e.get("event") == "progress"]
    assert progress, [e.get("event") for e in logs]
    steps = [e["step"] for e in progress]
    assert steps == sorted(set(steps)) and steps[-1] == base_run["step"], steps
    # One line at least at every checkpoint, each with the loss the metrics hold for its step.
    checkpoints = {c["step"] for c in base_run["checkpoints"]}
    assert checkpoints <= set(steps), (checkpoints, steps)
    losses = dict(map(tuple, client.runs.metrics(base_run["run_id"])["series"]["train_loss"]))
    for entry in progress:
        assert entry["train_loss"] == losses[entry["step"]]
        assert f"train loss {entry['train_loss']:.6f}" in entry["message"]
