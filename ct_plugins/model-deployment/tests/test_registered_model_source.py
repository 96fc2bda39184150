"""A registered model (what a succeeded managed run registers) as a deployment source.

The spec rules and the reading of the runs service's record need no server; the lookup's failure
paths run against a real ct_local. Deploying a real registered model end to end is the runs
service's test, where a run has registered one.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_model_deployment import model_deployments
from ct_model_deployment.errors import ModelDeploymentError
from ct_model_deployment.spec import (
    BAD_MODEL_ID,
    check_spec,
    create_body,
    is_model_id,
    registered_checkpoint,
)

from ct_core.client import CortexTrainingClient
from ct_core.errors import ValidationError

DB = "DEP_DB"
SCHEMA = "PUBLIC"
MODEL_ID = "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9M9"
RECORD: dict[str, Any] = {
    "model_id": MODEL_ID,
    "status": "training",
    "run_id": "run_01J9Z8X7W6V5T4S3R2Q1P0N9M8",
    "model_name": "Qwen/Qwen3-0.6B",
    "job_id": "0f8fad5b-d9cb-469f-a165-70867728950e",
    "checkpoint_id": "cp_best_weights",
    "source_checkpoint_id": "cp_best",
    "step": 40,
    "val_loss": 1.25,
    "fallback": False,
}


def registered(spec: dict[str, Any], model_id: Any = MODEL_ID) -> dict[str, Any]:
    made = copy.deepcopy(spec)
    made["source"] = {"type": "registered_model", "model_id": model_id}
    return made


def problems(spec: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        check_spec(spec)
    return str(caught.value)


class Sleeps:
    """The client's injected sleep: records each retry wait, waits for none."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


# --- the spec ------------------------------------------------------------------------------------


def test_a_registered_model_source_is_accepted_as_written(spec: dict[str, Any]) -> None:
    lower = "mdl_" + MODEL_ID.removeprefix("mdl_").lower()
    for model_id in (MODEL_ID, lower):
        made = registered(spec, model_id)
        assert check_spec(made)["source"] == {"type": "registered_model", "model_id": model_id}


@pytest.mark.parametrize(
    "bad",
    [
        "mdl_",
        "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9M",  # 25 characters
        "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9M9A",  # 27 characters
        "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9MI",  # I is not in Crockford's base32
        "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9MU",  # nor U
        "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9-9",
        "MDL_01J9Z8X7W6V5T4S3R2Q1P0N9M9",
        "run_01J9Z8X7W6V5T4S3R2Q1P0N9M9",
        "01J9Z8X7W6V5T4S3R2Q1P0N9M9",
        " mdl_01J9Z8X7W6V5T4S3R2Q1P0N9M9",
        "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9M9\n",
    ],
)
def test_a_model_id_that_is_not_mdl_and_a_ulid_is_refused(spec: dict[str, Any], bad: str) -> None:
    assert not is_model_id(bad)
    text = problems(registered(spec, bad))
    assert BAD_MODEL_ID in text and repr(bad) in text


@pytest.mark.parametrize("bad", [None, 7, "", "   ", ["mdl_x"]])
def test_a_model_id_must_be_a_non_empty_string(spec: dict[str, Any], bad: Any) -> None:
    assert "source.model_id must be a non-empty string" in problems(registered(spec, bad))


def test_a_very_long_bad_id_is_shortened_in_the_message(spec: dict[str, Any]) -> None:
    text = problems(registered(spec, "mdl_" + "x" * 500))
    assert BAD_MODEL_ID in text and "x" * 61 not in text and "..." in text


def test_the_source_keys_are_exact_and_every_problem_is_named(spec: dict[str, Any]) -> None:
    made = registered(spec, "mdl_nope")
    made["source"]["job_id"] = RECORD["job_id"]
    made["deployment"]["gpus_per_replica"] = 3
    text = problems(made)
    assert "source has unknown keys: job_id" in text
    assert BAD_MODEL_ID in text and "gpus_per_replica must be one of" in text
    del made["source"]["model_id"], made["source"]["job_id"]
    assert "source is missing keys: model_id" in problems(made)
    assert "registered_model" in problems({**spec, "source": {"type": "registered", "model_id": MODEL_ID}})


def test_an_unresolved_source_never_becomes_a_create_body(spec: dict[str, Any]) -> None:
    # Sent as it is, it would deploy the bare base model without anyone noticing.
    with pytest.raises(ValueError, match="resolved"):
        create_body(check_spec(registered(spec)), "Qwen/Qwen3-0.6B")


# --- reading the runs service's record -------------------------------------------------------------


def test_a_record_resolves_to_its_weights_only_checkpoint(spec: dict[str, Any]) -> None:
    source = registered_checkpoint(copy.deepcopy(RECORD), MODEL_ID)
    assert source == {"type": "checkpoint", "job_id": RECORD["job_id"], "checkpoint_id": "cp_best_weights"}
    # The resolved spec is an ordinary checkpoint spec, and its body names that checkpoint.
    resolved = check_spec({**spec, "source": source})
    body = create_body(resolved, RECORD["model_name"])
    assert body["sub_job_configs"][0]["source_checkpoint_info"] == {
        "source_job_id": RECORD["job_id"],
        "checkpoint_id": "cp_best_weights",
    }


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"checkpoint_id": None}, "names no checkpoint_id to deploy"),
        ({"checkpoint_id": ""}, "names no checkpoint_id to deploy"),
        ({"job_id": 12}, "names no job_id to deploy"),
        ({"job_id": None, "checkpoint_id": None}, "names no job_id and no checkpoint_id"),
        ({"model_id": "mdl_01J9Z8X7W6V5T4S3R2Q1P0N9MA"}, "answered for 'mdl_01J9Z8X7W6V5T4S3R2Q1P0N9MA'"),
    ],
)
def test_a_record_that_cannot_be_deployed_is_refused(change: dict[str, Any], needle: str) -> None:
    record = {**RECORD, **change}
    with pytest.raises(ValidationError) as caught:
        registered_checkpoint(record, MODEL_ID)
    assert needle in str(caught.value) and MODEL_ID in str(caught.value)


@pytest.mark.parametrize("answer", [None, [], "mdl", 3])
def test_an_answer_that_is_not_an_object_is_refused(answer: Any) -> None:
    with pytest.raises(ValidationError, match="not a JSON object"):
        registered_checkpoint(answer, MODEL_ID)


# --- the SDK and the CLI -------------------------------------------------------------------------


def test_a_bad_id_is_refused_before_anything_is_sent(spec: dict[str, Any]) -> None:
    # Nothing listens on port 9: a request would fail with a connection error instead.
    with (
        CortexTrainingClient(base_url="http://127.0.0.1:9", database=DB, schema=SCHEMA) as client,
        pytest.raises(ValidationError) as caught,
    ):
        model_deployments(client).create(registered(spec, "mdl_short"))
    assert BAD_MODEL_ID in str(caught.value)


def test_dry_run_prints_the_source_unresolved_and_sends_nothing(
    run_ct: Any, tmp_path: Path, spec: dict[str, Any]
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(registered(spec)))
    result = run_ct(
        "--base-url",
        "http://127.0.0.1:9",
        "--database",
        DB,
        "model-deployment",
        "create",
        str(path),
        "--dry-run",
    )
    assert result.returncode == 0, result
    assert result.json["source"] == {"type": "registered_model", "model_id": MODEL_ID}


def test_the_cli_names_a_bad_id(run_ct: Any, tmp_path: Path, spec: dict[str, Any]) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(registered(spec, "mdl_0000")))
    result = run_ct(
        "--base-url", "http://127.0.0.1:9", "--database", DB, "model-deployment", "create", str(path)
    )
    assert result.returncode == 1 and result.stdout == ""
    assert "source.model_id must be mdl_ followed by 26 base32 characters" in result.stderr


@pytest.fixture
def client(dep_server: Any) -> Iterator[CortexTrainingClient]:
    with CortexTrainingClient(
        base_url=dep_server.base_url, database=DB, schema=SCHEMA, sleep=Sleeps()
    ) as made:
        yield made


def test_an_unknown_model_fails_at_once_and_creates_nothing(
    client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    before = {job["job_id"] for job in client.list_jobs()}
    with pytest.raises(ModelDeploymentError) as caught:
        model_deployments(client).create(registered(spec))
    error = caught.value
    assert error.status_code == 404
    assert f"registered model {MODEL_ID} not found in {DB}.{SCHEMA}" in str(error)
    # A 404 on the general path is retried (a new job can lag); a model lookup takes it as final.
    assert client.sleep.delays == []  # type: ignore[attr-defined]
    assert {job["job_id"] for job in client.list_jobs()} == before
