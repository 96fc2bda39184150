"""`create_job_body_from_job`: what a create body for "a job like this one" keeps and leaves out.

A model deployment is recognised the way the service defines one: a job whose one sub-job samples
with `inference_config.deployment_class` "EVALUATION". It can set neither a pending timeout nor an
experiment, so its body keeps both null. Run state, times, owner and image fields of a sub-job are
left out (a new job runs the current image). The round trips go through a real ct_local server.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from ct_core.client import CortexTrainingClient
from ct_core.control.shaping import create_job_body_from_job

DEPLOYMENT_SUB_JOB: dict[str, Any] = {
    "job_type": "sampling",
    "model_name": "Qwen/Qwen3-0.6B",
    "inference_config": {
        "deployment_class": "EVALUATION",
        "num_replicas": 1,
        "n_gpus": 1,
        "max_seq_len": 64,
        "vllm_config": {"tensor_parallel_size": 1, "max_model_len": 64},
    },
}
RUN_FIELDS = {
    "sub_job_id": "j:sampling:0",
    "job_id": "j",
    "status": "running",
    "reason": "",
    "reason_details": "",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:01Z",
    "state_changed_at": "2026-01-01T00:00:02Z",
    "image_tag": "trainer:2026.01.01",
    "submitted_by": "ALICE",
    "owner_role": "TRAINER",
}


@pytest.fixture
def client(local_server: Any) -> Any:
    schema = f"S_{uuid.uuid4().hex[:8].upper()}"
    with CortexTrainingClient(base_url=local_server.base_url, database="DB", schema=schema) as made:
        yield made


def test_deployment_is_recognised_by_its_evaluation_class():
    record = {
        "job_id": "j",
        "hardware": "H200",
        "idle_timeout_seconds": 0,
        "pending_timeout_seconds": 600,
        "sub_jobs": [{**DEPLOYMENT_SUB_JOB, **RUN_FIELDS}],
    }
    body = create_job_body_from_job(record, experiment_name="EXP")
    assert body["pending_timeout_seconds"] is None and body["experiment_name"] is None
    assert body["idle_timeout_seconds"] == 0


def test_a_sampling_job_of_another_class_is_not_a_deployment():
    sub_job = {**DEPLOYMENT_SUB_JOB, "inference_config": {"deployment_class": None, "n_gpus": 1}}
    record = {"hardware": "H200", "pending_timeout_seconds": 600, "sub_jobs": [sub_job]}
    body = create_job_body_from_job(record, experiment_name="EXP")
    assert body["pending_timeout_seconds"] == 600 and body["experiment_name"] == "EXP"


def test_a_job_kind_marker_alone_does_not_make_a_deployment():
    record = {"hardware": "H200", "job_kind": "model_deployment", "sub_jobs": [{"job_type": "sampling"}]}
    body = create_job_body_from_job(record, experiment_name="EXP")
    assert body["experiment_name"] == "EXP" and body["pending_timeout_seconds"] == 86400


def test_sub_job_run_owner_and_image_fields_are_left_out():
    record = {
        "hardware": "H200",
        "image_tag": "trainer:2026.01.01",
        "submitted_by": "ALICE",
        "owner_role": "TRAINER",
        "state_changed_at": "2026-01-01T00:00:02Z",
        "sub_jobs": [{"job_type": "sampling", "model_name": "m", "inference_config": {}, **RUN_FIELDS}],
    }
    body = create_job_body_from_job(record)
    assert set(body) == {
        "hardware",
        "comment",
        "experiment_name",
        "idle_timeout_seconds",
        "pending_timeout_seconds",
        "sub_job_configs",
    }
    [config] = body["sub_job_configs"]
    assert set(config) == {
        "job_type",
        "model_name",
        "inference_config",
        "dtype",
        "seed",
        "source_checkpoint_info",
    }


def test_a_deployment_record_round_trips_through_the_service(client):
    created = client.create_job_from_body(
        {"hardware": "H200", "idle_timeout_seconds": 0, "sub_job_configs": [DEPLOYMENT_SUB_JOB]}
    )
    record = client.get_job(created["job_id"])
    body = create_job_body_from_job(record, experiment_name="EXP")
    assert body["pending_timeout_seconds"] is None and body["experiment_name"] is None
    again = client.get_job(client.create_job_from_body(body)["job_id"])
    [sub_job] = again["sub_jobs"]
    assert sub_job["inference_config"]["deployment_class"] == "EVALUATION"
    assert "image_tag" not in sub_job and "submitted_by" not in sub_job


def test_a_record_with_run_fields_round_trips_through_the_service(client):
    # The service's record with what a real one adds to each sub-job; the body it makes is accepted.
    job_id = client.create_job_from_body(
        {"hardware": "H200", "sub_job_configs": [{"job_type": "sampling", "model_name": "Qwen/Qwen3-0.6B"}]}
    )["job_id"]
    record = client.get_job(job_id)
    record["sub_jobs"] = [
        {**sub, **RUN_FIELDS, "sub_job_id": sub["sub_job_id"]} for sub in record["sub_jobs"]
    ]
    body = create_job_body_from_job(record, experiment_name="EXP")
    again = client.get_job(client.create_job_from_body(body)["job_id"])
    assert not {"image_tag", "submitted_by", "owner_role", "state_changed_at"} & set(again["sub_jobs"][0])


TRAINING_SUB_JOB: dict[str, Any] = {
    "job_type": "training",
    "model_name": "Qwen/Qwen3-0.6B",
    "training_config": {"optimizer": {"name": "AdamW", "lr": 1e-3}, "n_gpus": 1},
}


def test_external_weights_the_record_names_are_kept():
    source = {"external_stage_path": "@MY_DB.MY_SCHEMA.MODEL_IMPORT/run7"}
    record = {"hardware": "H200", "sub_jobs": [{**TRAINING_SUB_JOB, "source_checkpoint_info": source}]}
    [config] = create_job_body_from_job(record)["sub_job_configs"]
    assert config["source_checkpoint_info"] == source


def test_external_weights_the_record_does_not_name_leave_no_placeholder(client, caplog):
    # A sub-job started from external weights whose record says so but not which weights: the body
    # carries no source at all (a `{"external_stage_path": null}` would be refused on create), and
    # the log says the weights are to be named again.
    created = client.create_job_from_body({"hardware": "H200", "sub_job_configs": [TRAINING_SUB_JOB]})
    job_id = created["job_id"]
    record = client.get_job(job_id)
    [sub_job] = record["sub_jobs"]
    record["sub_jobs"] = [{**sub_job, "source_checkpoint_info": {"external_stage_path": None}}]
    with caplog.at_level("WARNING", logger="ct_core.control"):
        body = create_job_body_from_job(record)
    [config] = body["sub_job_configs"]
    assert config["source_checkpoint_info"] is None
    assert sub_job["sub_job_id"] in caplog.text and "external_stage_path" in caplog.text
    again = client.get_job(client.create_job_from_body(body)["job_id"])
    assert again["sub_jobs"][0].get("source_checkpoint_info") is None
