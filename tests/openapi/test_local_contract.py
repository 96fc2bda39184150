"""The generated typed functions drive a real ct_local server through ct's client, and what the
server answers fits the schemas the spec names (checked with a JSON Schema 2020-12 validator over
the spec's components)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ct_api.api.account import list_models
from ct_api.api.control_plane import (
    cancel_job,
    create_job,
    get_capacity,
    get_experiment_run,
    get_job,
    list_checkpoints,
    list_jobs,
)
from ct_testing import wait_until
from openapi_schema_validator import OAS31Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from ct_core.client import CortexTrainingClient
from ct_core.errors import APIError

DB, SCHEMA, ENDPOINT = "CT_DB", "PUBLIC", "cortex-training"
BODY = {
    "sub_job_configs": [
        {"job_type": "training", "model_name": "Qwen/Qwen3-1.7B", "training_config": {"n_gpus": 1}},
        {"job_type": "sampling", "model_name": "Qwen/Qwen3-1.7B", "inference_config": {"n_gpus": 1}},
    ],
    "comment": "contract test",
}
# How long the job may take to leave pending on the fast test server before the test gives up.
RUNNING_DEADLINE_S = 60.0


@pytest.fixture(scope="module")
def conforms(spec: dict[str, Any]) -> Any:
    """``conforms(name, value)`` raises unless ``value`` is valid against components/schemas/<name>."""
    registry = Registry().with_resource("urn:ct-spec", DRAFT202012.create_resource(spec))

    def check(name: str, value: Any) -> None:
        schema = {"$ref": f"urn:ct-spec#/components/schemas/{name}"}
        OAS31Validator(schema, registry=registry).validate(value)

    return check


@pytest.fixture
def client(local_server: Any) -> Any:
    # The client forwards `request`/`stream` to its transport: what the generated functions call.
    made = CortexTrainingClient(base_url=local_server.base_url, database=DB, schema=SCHEMA, max_retries=0)
    yield made
    made.close()


def test_control_plane_round_trip_through_generated_functions(client: Any, conforms: Any) -> None:
    created = create_job(client, body=BODY)  # type: ignore[arg-type]
    job_id = created["job_id"]
    assert isinstance(job_id, str) and job_id
    conforms("CreateJobResponse", created)

    record = wait_until(
        lambda: (job := get_job(client, job_id=job_id))["status"] == "running" and job,
        timeout=RUNNING_DEADLINE_S,
        message="the job never ran",
    )
    conforms("JobRecord", record)
    assert record["status"] == "running"
    assert [sub["sub_job_id"] for sub in record["sub_jobs"] or []] == [
        f"{job_id}:training:0",
        f"{job_id}:sampling:0",
    ]

    listed = list_jobs(client, status="running")
    conforms("JobList", listed)
    assert job_id in {job["job_id"] for job in listed["jobs"]}

    conforms("CheckpointList", list_checkpoints(client, job_id=job_id))
    conforms("ExperimentRun", get_experiment_run(client, job_id=job_id))

    assert cancel_job(client, job_id=job_id) is None
    assert cancel_job(client, job_id=job_id) is None, "a repeated cancel is an idempotent success"


def test_capacity_and_models_fit_their_schemas(client: Any, conforms: Any) -> None:
    conforms("Capacity", get_capacity(client, breakdown="job_type,submitted_by"))
    conforms("ModelList", list_models(client))


def test_error_answers_raise_with_a_service_error_body(client: Any, conforms: Any) -> None:
    with pytest.raises(APIError) as missing:
        get_job(client, job_id="no-such-job")
    assert missing.value.status_code == 404
    body = json.loads(missing.value.response.content)
    conforms("ServiceError", body)
    assert str(body["code"]) == "517601"

    # A sub-job id travels percent-encoded; the server reads it back whole and still finds no such job.
    with pytest.raises(APIError) as colon:
        get_job(client, job_id="abc:training:0")
    assert colon.value.status_code == 404
    assert "abc:training:0" in json.loads(colon.value.response.content)["message"]
