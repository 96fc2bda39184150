"""The client-side rules of a deployment spec: no server involved."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ct_model_deployment.spec import BAD_DEPLOYMENT_ID, check_spec, create_body, deployment_id_of, job_id_of

from ct_core.errors import ValidationError

UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"


def problems(spec: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        check_spec(spec)
    return str(caught.value)


def test_valid_spec_is_normalized_and_copied(spec: dict[str, Any]) -> None:
    spec["deployment"]["gpu_type"] = "b300"
    original = copy.deepcopy(spec)
    normalized = check_spec(spec)
    assert normalized["deployment"]["gpu_type"] == "B300"
    assert spec == original


def test_a_typo_is_reported_as_unknown_and_missing_together(spec: dict[str, Any]) -> None:
    spec["deployment"]["min_replica"] = spec["deployment"].pop("min_replicas")
    text = problems(spec)
    assert "unknown keys: min_replica" in text
    assert "missing keys: min_replicas" in text


def test_top_level_keys_are_exact(spec: dict[str, Any]) -> None:
    spec["extra"] = {}
    del spec["inference"]
    text = problems(spec)
    assert "spec has unknown keys: extra" in text and "spec is missing keys: inference" in text
    assert "must be a JSON object" in problems([spec])


def test_every_problem_is_named_in_one_error(spec: dict[str, Any]) -> None:
    spec["deployment"].update({"class": "PRODUCTION", "gpu_type": "A100", "gpus_per_replica": 3})
    spec["inference"]["max_seq_len"] = 0
    text = problems(spec)
    for needle in (
        "deployment.class",
        "deployment.gpu_type",
        "gpus_per_replica must be one of",
        "max_seq_len",
    ):
        assert needle in text


@pytest.mark.parametrize("bad", [True, False, 1.0, 2.5, 0, -1, "1", None])
@pytest.mark.parametrize("key", ["min_replicas", "gpus_per_replica"])
def test_counts_are_positive_integers(spec: dict[str, Any], key: str, bad: Any) -> None:
    spec["deployment"][key] = bad
    assert f"deployment.{key} must be a positive integer" in problems(spec)


@pytest.mark.parametrize("bad", [True, 1.0, 0])
def test_max_seq_len_is_a_positive_integer(spec: dict[str, Any], bad: Any) -> None:
    spec["inference"]["max_seq_len"] = bad
    assert "inference.max_seq_len must be a positive integer" in problems(spec)


@pytest.mark.parametrize(
    ("replicas", "gpus", "ok"),
    [
        (1, 8, True),
        (8, 1, True),
        (3, 2, True),
        (2, 8, True),
        (4, 4, True),
        (5, 2, False),
        (3, 4, False),
        (3, 8, True),
    ],
)
def test_total_gpus_fit_a_node_or_whole_nodes(
    spec: dict[str, Any], replicas: int, gpus: int, ok: bool
) -> None:
    spec["deployment"].update(min_replicas=replicas, gpus_per_replica=gpus)
    if ok:
        check_spec(spec)
    else:
        assert "must be at most 8 or a multiple of 8" in problems(spec)


@pytest.mark.parametrize("gpu_type", ["h200", "B200", "b300", "H200"])
def test_gpu_type_any_case(spec: dict[str, Any], gpu_type: str) -> None:
    spec["deployment"]["gpu_type"] = gpu_type
    assert check_spec(spec)["deployment"]["gpu_type"] == gpu_type.upper()


def test_class_must_be_exactly_evaluation(spec: dict[str, Any]) -> None:
    spec["deployment"]["class"] = "evaluation"
    assert "deployment.class must be 'EVALUATION'" in problems(spec)


def test_source_rules(spec: dict[str, Any]) -> None:
    spec["source"] = {"type": "hub", "model": "x"}
    assert "source.type must be one of base_model, checkpoint" in problems(spec)
    spec["source"] = {"type": "base_model", "model": "  "}
    assert "source.model must be a non-empty string" in problems(spec)
    spec["source"] = {"type": "checkpoint", "job_id": "j", "checkpoint_id": "", "model": "m"}
    text = problems(spec)
    assert "source has unknown keys: model" in text
    assert "source.checkpoint_id must be a non-empty string" in text
    spec["source"] = {"type": "checkpoint", "job_id": 7, "checkpoint_id": "cp"}
    assert "source.job_id must be a non-empty string" in problems(spec)


def test_base_model_body(spec: dict[str, Any]) -> None:
    spec["deployment"].update(min_replicas=3, gpus_per_replica=2, gpu_type="B200")
    spec["inference"]["max_seq_len"] = 8192
    body = create_body(check_spec(spec), "Qwen/Qwen3-0.6B")
    assert body == {
        "idle_timeout_seconds": 0,
        "hardware": "B200",
        "sub_job_configs": [
            {
                "job_type": "sampling",
                "model_name": "Qwen/Qwen3-0.6B",
                "inference_config": {
                    "deployment_class": "EVALUATION",
                    "num_replicas": 3,
                    "n_gpus": 6,
                    "max_seq_len": 8192,
                    "vllm_config": {"tensor_parallel_size": 2, "max_model_len": 8192},
                },
            }
        ],
    }


def test_checkpoint_body_names_the_source(spec: dict[str, Any]) -> None:
    spec["source"] = {"type": "checkpoint", "job_id": UUID, "checkpoint_id": "cp_1"}
    sub_job = create_body(check_spec(spec), "m")["sub_job_configs"][0]
    assert sub_job["model_name"] == "m"
    assert sub_job["source_checkpoint_info"] == {"source_job_id": UUID, "checkpoint_id": "cp_1"}
    assert "experiment_name" not in create_body(check_spec(spec), "m")


def test_deployment_ids() -> None:
    assert job_id_of(f"sf-ct-{UUID}") == UUID
    assert deployment_id_of(UUID) == f"sf-ct-{UUID}"
    for bad in (
        UUID,
        f"sf-ct-{UUID.upper()}",
        f"SF-CT-{UUID}",
        f" sf-ct-{UUID}",
        f"sf-ct-{UUID}x",
        "name",
        None,
        7,
    ):
        with pytest.raises(ValidationError, match=BAD_DEPLOYMENT_ID):
            job_id_of(bad)
