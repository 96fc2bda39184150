"""Reading jobs back as deployments (status, shape, metadata) and the wording of deployment errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ct_model_deployment.errors import (
    MalformedDeploymentRecord,
    ModelDeploymentNotFound,
    replace_backing_ids,
    rewrite_api_error,
)
from ct_model_deployment.records import deployment_status, is_deployment, metadata, summary

from ct_core.errors import APIError

JOB = "0f8fad5b-d9cb-469f-a165-70867728950e"
DEP = f"sf-ct-{JOB}"
BASE = "http://h/api/v2/databases/D/schemas/S/cortex-training/inference/v1"
RECORD: dict[str, Any] = {
    "job_id": JOB,
    "status": "running",
    "reason": "",
    "reason_details": "",
    "hardware": "H200",
    "created_at": "2026-01-01T00:00:00Z",
    "sub_jobs": [
        {
            "job_type": "sampling",
            "model_name": "Some/Unknown-Model",
            "sub_job_id": f"{JOB}:sampling:0",
            "inference_config": {
                "deployment_class": "EVALUATION",
                "num_replicas": 3,
                "n_gpus": 6,
                "max_seq_len": 4096,
                "vllm_config": {"tensor_parallel_size": 2, "max_model_len": 4096},
            },
        }
    ],
}


def job(**changes: Any) -> dict[str, Any]:
    record = copy.deepcopy(RECORD)
    record.update(changes)
    return record


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ("pending", "PENDING"),
        ("placing", "INITIALIZING"),
        ("initializing", "INITIALIZING"),
        ("running", "READY"),
        ("failed", "FAILED"),
        ("cancelling", "DROPPING"),
        ("cancelled", "DROPPED"),
        ("done", "DROPPED"),
        ("terminated", "TERMINATED"),
        ("unknown", "UNKNOWN"),
        ("suspended", "SUSPENDED"),
        ("RUNNING", "READY"),
    ],
)
def test_status_table(status: str, shown: str) -> None:
    assert deployment_status(status) == shown


def test_ready_record_reports_what_the_server_stored() -> None:
    record = metadata(job(), base_url=BASE)
    assert record["deployment"] == DEP and record["status"] == "READY"
    assert record["model"] == "Some/Unknown-Model"
    assert (record["min_replicas"], record["gpus_per_replica"], record["max_seq_len"]) == (3, 2, 4096)
    assert record["base_url"] == BASE
    assert record["spec"] == {
        "deployment": {"class": "EVALUATION", "min_replicas": 3, "gpus_per_replica": 2, "gpu_type": "H200"},
        "source": {"type": "base_model", "model": "Some/Unknown-Model"},
        "inference": {"max_seq_len": 4096},
    }
    assert JOB not in str({k: v for k, v in record.items() if k != "deployment"}).replace(DEP, "")
    assert summary(record) == {"deployment": DEP, "status": "READY", "base_url": BASE}


@pytest.mark.parametrize("status", ["failed", "terminated"])
def test_failure_names_code_and_message_with_ids_replaced(status: str) -> None:
    details = f"sub-job {JOB}:sampling:0 of job {JOB} crashed"
    record = metadata(job(status=status, reason="sub_job_failed", reason_details=details), base_url=BASE)
    assert record["failure"] == {"code": "sub_job_failed", "message": f"sub-job {DEP} of job {DEP} crashed"}
    assert "base_url" not in record and "status_reason" not in record
    assert summary(record)["failure"]["code"] == "sub_job_failed"


def test_status_reason_outside_failures() -> None:
    record = metadata(
        job(status="pending", reason="quota_filled", reason_details="needs 8 GPUs; 64 currently active"),
        base_url=BASE,
    )
    assert record["status_reason"] == "quota_filled"
    assert record["status_details"] == "needs 8 GPUs; 64 currently active"
    assert record["base_url"] == BASE and "failure" not in record


@pytest.mark.parametrize("status", ["cancelling", "cancelled"])
def test_cancelled_by_client_is_not_repeated_when_dropping(status: str) -> None:
    record = metadata(
        job(status=status, reason="cancelled_by_client", reason_details="by you"), base_url=BASE
    )
    assert "status_reason" not in record and "status_details" not in record and "base_url" not in record
    other = metadata(job(status=status, reason="idle", reason_details="idle"), base_url=BASE)
    assert other["status_reason"] == "idle"


def test_missing_hardware_is_null_and_checkpoint_source_only_when_echoed() -> None:
    record = metadata(job(hardware=None), base_url=BASE)
    assert record["gpu_type"] is None and record["spec"]["deployment"]["gpu_type"] is None
    echoed = job()
    echoed["sub_jobs"][0]["source_checkpoint_info"] = {"source_job_id": "train", "checkpoint_id": "cp_9"}
    source = metadata(echoed, base_url=BASE)["source"]
    assert source == {"type": "checkpoint", "job_id": "train", "checkpoint_id": "cp_9"}


def test_whole_number_floats_are_accepted() -> None:
    record = job()
    record["sub_jobs"][0]["inference_config"]["n_gpus"] = 6.0
    assert metadata(record, base_url=BASE)["n_gpus"] == 6


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("num_replicas",), 0),
        (("n_gpus",), 5),
        (("n_gpus",), True),
        (("max_seq_len",), 2048),
        (("vllm_config", "tensor_parallel_size"), 1.5),
        (("vllm_config", "max_model_len"), None),
    ],
)
def test_malformed_records_are_rejected(path: tuple[str, ...], value: Any) -> None:
    record = job()
    target = record["sub_jobs"][0]["inference_config"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(MalformedDeploymentRecord, match=DEP):
        metadata(record, base_url=BASE)


def test_only_single_evaluation_sampling_jobs_are_deployments() -> None:
    assert is_deployment(job())
    other = job()
    other["sub_jobs"][0]["inference_config"]["deployment_class"] = None
    assert not is_deployment(other)
    two = job()
    two["sub_jobs"].append(copy.deepcopy(two["sub_jobs"][0]))
    assert not is_deployment(two)
    assert not is_deployment({"job_id": JOB, "sub_jobs": [{"job_type": "training", "training_config": {}}]})


def test_backing_ids_are_replaced() -> None:
    assert replace_backing_ids(f"{JOB}:sampling:0 and {JOB}", JOB, DEP) == f"{DEP} and {DEP}"
    assert replace_backing_ids("", JOB, DEP) == ""
    assert replace_backing_ids(f"already {DEP}", JOB, DEP) == f"already {DEP}"


def api_error(
    status: int, code: str | None, message: str | None, request_id: str | None = "rid-1"
) -> APIError:
    return APIError(
        f"{status} Client Error: for url: http://h/secret/{JOB}",
        status_code=status,
        code=code,
        request_id=request_id,
        server_message=message,
    )


def test_http_errors_name_the_deployment() -> None:
    error = api_error(403, "390001", f"role may not read job {JOB}")
    rewritten = rewrite_api_error(error, deployment_id=DEP, job_id=JOB, database="D", schema="S")
    assert str(rewritten) == (
        f"model deployment {DEP} request failed with HTTP 403 (390001): role may not read job {DEP} "
        "(snowflake request id: rid-1)"
    )
    assert rewritten.status_code == 403 and rewritten.code == "390001" and "http://" not in str(rewritten)


def test_create_errors_have_no_deployment_id() -> None:
    error = api_error(400, "517650", "Unsupported model for a model deployment: X", request_id=None)
    rewritten = rewrite_api_error(error, deployment_id=None, job_id=None, database="D", schema="S")
    assert str(rewritten) == (
        "model deployment request failed with HTTP 400 (517650): Unsupported model for a model deployment: X"
    )


def test_job_not_found_reads_as_deployment_not_found() -> None:
    error = api_error(404, "517601", f"Training job {JOB} not found")
    rewritten = rewrite_api_error(error, deployment_id=DEP, job_id=JOB, database="D", schema="S")
    assert isinstance(rewritten, ModelDeploymentNotFound)
    assert str(rewritten) == f"model deployment {DEP} not found in D.S"
    other = rewrite_api_error(
        api_error(404, "999", "gone"), deployment_id=DEP, job_id=JOB, database="D", schema="S"
    )
    assert not isinstance(other, ModelDeploymentNotFound)


def test_shapes_and_hardware_create_would_refuse_still_read_back() -> None:
    # Reading does not re-check admission rules; only contradictory numbers are refused.
    record = job(hardware="GB300")
    config = record["sub_jobs"][0]["inference_config"]
    config.update(num_replicas=5, n_gpus=15)
    config["vllm_config"]["tensor_parallel_size"] = 3
    read = metadata(record, base_url=BASE)
    assert (read["gpu_type"], read["min_replicas"], read["gpus_per_replica"], read["n_gpus"]) == (
        "GB300",
        5,
        3,
        15,
    )
