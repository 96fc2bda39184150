"""The deployment SDK methods against a real ct_local server: create, wait, list, describe, drop, errors.

Requests are counted at the server, with ct_local fault rules that let every request through.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ct_model_deployment import ModelDeploymentWaitError, ModelDeploymentWaitTimeout, model_deployments
from ct_model_deployment.errors import (
    MalformedDeploymentRecord,
    ModelDeploymentError,
    ModelDeploymentNotFound,
)

from ct_core.client import CortexTrainingClient
from ct_core.errors import CTConnectionError, ValidationError

DB = "DEP_DB"
SCHEMA = "PUBLIC"
MODEL = "Qwen/Qwen3-0.6B"


#: A fault rule that lets every request through untouched (a delay of 0 s) and so only counts it.
PASS_THROUGH: dict[str, Any] = {"path": "", "action": "delay", "delay_s": 0, "count": None}


def requests_seen(server: Any) -> int:
    """The requests the server's fault rules matched since they were set (rules with no use limit).

    The first rule that matches a request takes it, so with a `PASS_THROUGH` rule last this counts
    every request that reached the server.
    """
    rules = httpx.get(f"{server.base_url}/_ct/faults", timeout=10.0).json()["rules"]
    assert all(rule["count"] is None for rule in rules), "a limited rule would count a request twice"
    return sum(int(rule["hits"]) for rule in rules)


def make_client(server: Any, schema: str = SCHEMA, **kwargs: Any) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=server.base_url,
        database=DB,
        schema=schema,
        poll_interval=0.02,
        poll_max_interval=0.05,
        **kwargs,
    )


@pytest.fixture
def client(dep_server: Any) -> Iterator[CortexTrainingClient]:
    with make_client(dep_server) as made:
        yield made


def test_create_wait_list_describe_drop(
    client: CortexTrainingClient, spec: dict[str, Any], wait_for_status: Any
) -> None:
    deployments = model_deployments(client)
    spec["deployment"]["gpu_type"] = "h200"
    created = deployments.create(spec)
    deployment = created["deployment"]
    assert deployment.startswith("sf-ct-") and created["status"] in {"PENDING", "INITIALIZING", "READY"}
    job_id = deployment.removeprefix("sf-ct-")
    stored = client.get_job(job_id)
    assert stored["idle_timeout_seconds"] == 0 and stored["hardware"] == "H200"
    assert stored["sub_jobs"][0]["inference_config"]["deployment_class"] == "EVALUATION"

    ready = deployments.wait(deployment, timeout=60)
    assert ready["status"] == "READY"
    assert ready["base_url"] == deployments.base_url() == client.rest_prefix + "/inference/v1"
    assert deployments.describe(deployment) == deployments.get(deployment)
    assert job_id not in json.dumps(ready).replace(deployment, "")
    listed = deployments.list_model_deployments()
    assert deployment in [item["deployment"] for item in listed]
    assert [item["deployment"] for item in deployments.list_model_deployments(["ready", "Pending"])].count(
        deployment
    ) == 1
    assert deployment not in [item["deployment"] for item in deployments.list_model_deployments(["DROPPED"])]

    assert deployments.drop(deployment)["dropped"] is True
    wait_for_status(client, job_id, "cancelled")
    assert deployments.drop(deployment) == {"deployment": deployment, "dropped": True, "status": "DROPPED"}
    described = deployments.describe(deployment)
    assert (
        described["status"] == "DROPPED" and "base_url" not in described and "status_reason" not in described
    )
    with pytest.raises(ModelDeploymentWaitError, match="dropped") as caught:
        deployments.wait(deployment, timeout=5)
    assert caught.value.deployment["status"] == "DROPPED"


def test_list_is_oldest_first_and_rejects_unknown_statuses(
    client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    deployments = model_deployments(client)
    first = deployments.create(spec)["deployment"]
    second = deployments.create(spec)["deployment"]
    order = [item["deployment"] for item in deployments.list_model_deployments()]
    assert order.index(first) < order.index(second)
    with pytest.raises(ValidationError, match="unknown deployment status BOGUS"):
        deployments.list_model_deployments(["ready", "bogus"])
    # Ordinary jobs are not deployments and are left out.
    training = client.create_job_from_body(
        {
            "sub_job_configs": [
                {
                    "job_type": "sampling",
                    "model_name": MODEL,
                    "inference_config": {"max_seq_len": 128, "n_gpus": 1},
                }
            ]
        }
    )["job_id"]
    assert f"sf-ct-{training}" not in [item["deployment"] for item in deployments.list_model_deployments()]
    with pytest.raises(ValidationError, match="is not a model deployment"):
        deployments.describe(f"sf-ct-{training}")
    with pytest.raises(ValidationError, match="is not a model deployment"):
        deployments.drop(f"sf-ct-{training}")
    for deployment in (first, second):
        deployments.drop(deployment)


def test_failed_deployment_wait_and_drop(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    deployments = model_deployments(client)
    deployment = deployments.create(spec)["deployment"]
    job_id = deployment.removeprefix("sf-ct-")
    dep_server.force_status(
        job_id, "failed", "sub_job_failed", f"sub-job {job_id}:sampling:0 ran out of memory"
    )
    with pytest.raises(ModelDeploymentWaitError) as caught:
        deployments.wait(deployment, timeout=5)
    text = str(caught.value)
    assert "sub_job_failed" in text and "download-log" in text
    # The wait error carries the failure message too, with the deployment id in it.
    assert f"sub-job {deployment} ran out of memory" in text and job_id not in text.replace(deployment, "")
    assert caught.value.deployment["failure"] == {
        "code": "sub_job_failed",
        "message": f"sub-job {deployment} ran out of memory",
    }
    assert "base_url" not in caught.value.deployment
    assert deployments.drop(deployment) == {"deployment": deployment, "dropped": False, "status": "FAILED"}
    dep_server.force_status(job_id, "terminated", "node_lost", "gone")
    assert deployments.drop(deployment) == {
        "deployment": deployment,
        "dropped": False,
        "status": "TERMINATED",
    }
    assert client.get_job(job_id)["status"] == "terminated"


def test_wait_timeout_keeps_the_deployment(slow_server: Any, spec: dict[str, Any]) -> None:
    with make_client(slow_server) as client:
        deployments = model_deployments(client)
        deployment = deployments.create(spec)["deployment"]
        with pytest.raises(ModelDeploymentWaitTimeout) as caught:
            deployments.wait(deployment, timeout=0.2)
        assert isinstance(caught.value, TimeoutError)
        assert "still running and holding GPUs" in str(caught.value)
        assert caught.value.deployment["status"] == "PENDING"
        assert deployments.describe(deployment)["status"] == "PENDING"
        deployments.drop(deployment)


def test_job_not_found_is_final_at_once(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    deployments = model_deployments(client)
    # Even a job this client has just created gets no grace for deployment lookups: the service's
    # job-not-found answer is final at once.
    deployment = deployments.create(spec)["deployment"]
    job_id = deployment.removeprefix("sf-ct-")
    missing = {"code": "517601", "message": f"Training job {job_id} not found in {SCHEMA}"}
    dep_server.set_faults({"path": f"/{job_id}", "status": 404, "body": missing, "count": None}, PASS_THROUGH)
    try:
        with pytest.raises(ModelDeploymentNotFound) as caught:
            deployments.describe(deployment)
        assert str(caught.value) == f"model deployment {deployment} not found in {DB}.{SCHEMA}"
        assert requests_seen(dep_server) == 1
        assert deployments.drop(deployment) == {
            "deployment": deployment,
            "dropped": True,
            "status": "DROPPED",
        }
        assert requests_seen(dep_server) == 2
    finally:
        dep_server.clear_faults()
    deployments.drop(deployment)


def test_bad_ids_are_refused_before_any_request(dep_server: Any, client: CortexTrainingClient) -> None:
    deployments = model_deployments(client)
    job_id = str(uuid.uuid4())
    dep_server.set_faults(PASS_THROUGH)
    try:
        for call in (deployments.describe, deployments.drop, deployments.wait, deployments.base_url):
            with pytest.raises(ValidationError, match="sf-ct-<UUID>"):
                call(job_id)
        assert requests_seen(dep_server) == 0
    finally:
        dep_server.clear_faults()


def test_http_errors_are_reworded(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    deployments = model_deployments(client)
    deployment = deployments.create(spec)["deployment"]
    job_id = deployment.removeprefix("sf-ct-")
    dep_server.set_faults(
        {
            "path": f"/{job_id}$",
            "method": "GET",
            "status": 403,
            "body": {"code": "390186", "message": f"Role is not authorized for job {job_id}"},
        }
    )
    try:
        with pytest.raises(ModelDeploymentError) as caught:
            deployments.describe(deployment)
    finally:
        dep_server.clear_faults()
    text = str(caught.value)
    assert text.startswith(f"model deployment {deployment} request failed with HTTP 403 (390186): ")
    assert f"Role is not authorized for job {deployment}" in text
    assert (
        "(snowflake request id: " in text
        and "http" not in text
        and job_id not in text.replace(deployment, "")
    )
    dep_server.set_faults(
        {
            "path": f"/schemas/{SCHEMA}/cortex-training$",
            "method": "POST",
            "status": 400,
            "body": {"code": "517650", "message": "Unsupported model for a model deployment: X"},
        }
    )
    try:
        with pytest.raises(
            ModelDeploymentError, match=r"^model deployment request failed with HTTP 400 \(517650\)"
        ):
            deployments.create(spec)
    finally:
        dep_server.clear_faults()
    deployments.drop(deployment)


def test_checkpoint_source_reads_the_model_from_the_source_job(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    training = client.create_job_from_body(
        {
            "sub_job_configs": [
                {
                    "job_type": "training",
                    "model_name": "Qwen/Qwen3-1.7B",
                    "training_config": {
                        "optimizer": {"name": "AdamW", "lr": 1e-4},
                        "max_seq_len": 128,
                        "train_batch_size": 1,
                        "n_gpus": 1,
                    },
                }
            ]
        }
    )["job_id"]
    checkpoint = dep_server.add_checkpoint(
        training, checkpoint_type="weights-only", files={"config.json": "{}"}
    )
    spec["source"] = {"type": "checkpoint", "job_id": training, "checkpoint_id": checkpoint["checkpoint_id"]}
    deployments = model_deployments(client)
    deployment = deployments.create(spec)["deployment"]
    stored = client.get_job(deployment.removeprefix("sf-ct-"))["sub_jobs"][0]
    assert stored["model_name"] == "Qwen/Qwen3-1.7B"
    deployments.drop(deployment)


def test_spec_from_a_file(client: CortexTrainingClient, spec: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    deployments = model_deployments(client)
    assert deployments.normalize_spec(path) == spec
    path.write_text("{nope")
    with pytest.raises(ValidationError, match="not valid JSON"):
        deployments.create(path)


def test_reachable_from_the_client_and_logs_name_the_deployment(
    client: CortexTrainingClient, spec: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    deployments = client.model_deployments
    assert deployments.base_url() == client.rest_prefix + "/inference/v1"
    deployment = deployments.create_model_deployment(spec)["deployment"]
    job_id = deployment.removeprefix("sf-ct-")
    with caplog.at_level(logging.DEBUG, logger="ct_core.transport"):
        deployments.describe_model_deployment(deployment)
        deployments.drop_model_deployment(deployment)
    lines = [
        record.getMessage() for record in caplog.records if "snowflake request_id=" in record.getMessage()
    ]
    assert len(lines) >= 3
    assert all(job_id not in line.replace(deployment, "") for line in lines)
    assert any(deployment in line for line in lines)


def test_drop_sends_no_cancel_while_dropping_and_raises_other_404s(
    lingering_cancel_server: Any, spec: dict[str, Any]
) -> None:
    # The job must still be cancelling when drop reads it, so this server never ends a cancel.
    server = lingering_cancel_server
    # No waits between retries: the faulted drop below is retried at once.
    with make_client(server, sleep=lambda _seconds: None) as client:
        deployments = model_deployments(client)
        deployment = deployments.create(spec)["deployment"]
        job_id = deployment.removeprefix("sf-ct-")
        server.force_status(job_id, "cancelling", "cancelled_by_client", "")
        # Count the POSTs (a cancel) that reach the server during the drop.
        server.set_faults({**PASS_THROUGH, "method": "POST"})
        try:
            assert deployments.drop(deployment) == {
                "deployment": deployment,
                "dropped": True,
                "status": "DROPPING",
            }
            assert requests_seen(server) == 0
        finally:
            server.clear_faults()
        # Only the job-not-found code means "already gone"; any other 404 may hide a running deployment.
        server.set_faults(
            {
                "path": f"/{job_id}$",
                "method": "GET",
                "status": 404,
                "count": None,
                "body": {"code": "390400", "message": f"route for {job_id} is not available"},
            }
        )
        try:
            with pytest.raises(ModelDeploymentError) as caught:
                deployments.drop(deployment)
        finally:
            server.clear_faults()
    assert not isinstance(caught.value, ModelDeploymentNotFound)
    assert str(caught.value).startswith(
        f"model deployment {deployment} request failed with HTTP 404 (390400)"
    )


def test_drop_of_a_deployment_that_failed_after_it_was_read(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    deployments = model_deployments(client)
    deployment = deployments.wait(deployments.create(spec)["deployment"], timeout=60)["deployment"]
    job_id = deployment.removeprefix("sf-ct-")
    ready_record = client.get_job(job_id)
    dep_server.force_status(job_id, "failed", "sub_job_failed", "boom")
    # The drop's first read still sees it running; the cancel then gets the server's 409 for a
    # failed job, and drop answers for the status the job really has.
    dep_server.set_faults(
        {"path": f"/{job_id}$", "method": "GET", "status": 200, "count": 1, "body": ready_record}
    )
    try:
        answer = deployments.drop(deployment)
    finally:
        dep_server.clear_faults()
    assert answer == {"deployment": deployment, "dropped": False, "status": "FAILED"}


def test_download_errors_name_the_deployment(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any], tmp_path: Path
) -> None:
    deployments = model_deployments(client)
    deployment = deployments.create(spec)["deployment"]
    job_id = deployment.removeprefix("sf-ct-")
    dep_server.set_faults(
        {
            "path": f"/{job_id}/experiment-run$",
            "method": "GET",
            "status": 403,
            "count": None,
            "body": {"code": "390186", "message": f"no access to the run of job {job_id}"},
        }
    )
    try:
        for call in (
            lambda: deployments.download_logs(deployment, tmp_path, log_type="stdout"),
            lambda: deployments.download_metrics(deployment, tmp_path),
        ):
            with pytest.raises(ModelDeploymentError) as caught:
                call()
            text = str(caught.value)
            assert text.startswith(f"model deployment {deployment} request failed with HTTP 403 (390186): ")
            assert f"no access to the run of job {deployment}" in text
            assert job_id not in text.replace(deployment, "") and "http" not in text
    finally:
        dep_server.clear_faults()
    deployments.drop(deployment)


def test_connection_errors_hide_the_url_and_the_job(dep_server: Any) -> None:
    # Nothing listens on port 9: every attempt fails to connect.
    with CortexTrainingClient(
        base_url="http://127.0.0.1:9", database=DB, schema=SCHEMA, sleep=lambda _seconds: None
    ) as client:
        deployment = f"sf-ct-{uuid.uuid4()}"
        with pytest.raises(CTConnectionError) as caught:
            model_deployments(client).describe(deployment)
    text = str(caught.value)
    assert text.startswith(f"model deployment {deployment} request failed: could not connect")
    assert "127.0.0.1:9" not in text and deployment.removeprefix("sf-ct-") not in text.replace(deployment, "")


def test_retry_notes_name_the_deployment(
    dep_server: Any, spec: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with make_client(dep_server, sleep=lambda _seconds: None) as client:
        deployments = model_deployments(client)
        deployment = deployments.create(spec)["deployment"]
        job_id = deployment.removeprefix("sf-ct-")
        dep_server.set_faults({"path": f"/{job_id}$", "method": "GET", "status": 503, "count": 1})
        try:
            with caplog.at_level(logging.DEBUG, logger="ct_core.retry"):
                deployments.describe(deployment)
        finally:
            dep_server.clear_faults()
        notes = [record.getMessage() for record in caplog.records if record.name == "ct_core.retry"]
        assert notes and all(job_id not in note.replace(deployment, "") for note in notes)
        deployments.drop(deployment)


def _malformed_deployment(client: CortexTrainingClient, spec: dict[str, Any]) -> str:
    """Create a job that claims to be a deployment but whose GPU count contradicts its replicas."""
    from ct_model_deployment.spec import check_spec, create_body

    body = create_body(check_spec(spec), MODEL)
    body["sub_job_configs"][0]["inference_config"]["n_gpus"] = 3  # 1 replica of 1 GPU cannot hold 3
    return "sf-ct-" + client.create_job_from_body(body)["job_id"]


def test_a_malformed_record_is_left_out_of_the_list_with_a_warning(
    dep_server: Any, spec: dict[str, Any]
) -> None:
    from ct_model_deployment.errors import MalformedDeploymentWarning

    with make_client(dep_server, schema="MALFORMED_LIST") as client:
        deployments = model_deployments(client)
        healthy = deployments.create(spec)["deployment"]
        broken = _malformed_deployment(client, spec)
        with pytest.warns(MalformedDeploymentWarning, match=f"{broken} .*n_gpus 3") as caught:
            listed = deployments.list_model_deployments()
        assert [item["deployment"] for item in listed] == [healthy]
        assert len(caught) == 1 and broken.removeprefix("sf-ct-") not in str(caught[0].message).replace(
            broken, ""
        )
        # A caller that wants the problems itself gets them instead of a warning.
        seen: list[dict[str, Any]] = []
        again = deployments.list_model_deployments(on_malformed=seen.append)
        assert [item["deployment"] for item in again] == [healthy]
        assert [problem["deployment"] for problem in seen] == [broken] and "n_gpus 3" in seen[0]["error"]
        # A status filter applies to the malformed ones too: their status is known, only their shape is not.
        dep_server.force_status(broken.removeprefix("sf-ct-"), "failed", "crashed")
        failed: list[dict[str, Any]] = []
        assert deployments.list_model_deployments(["failed"], on_malformed=failed.append) == []
        assert [(problem["deployment"], problem["status"]) for problem in failed] == [(broken, "FAILED")]
        elsewhere: list[dict[str, Any]] = []
        deployments.list_model_deployments(
            ["ready", "pending", "initializing"], on_malformed=elsewhere.append
        )
        assert elsewhere == []
        # Reading the broken one alone still fails, naming it.
        with pytest.raises(MalformedDeploymentRecord, match=broken):
            deployments.describe(broken)
        deployments.drop(healthy)
