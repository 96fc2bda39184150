"""The generated typed functions drive a real ct_local server, and what the server answers fits the
schemas the spec names (checked with a JSON Schema 2020-12 validator over the spec's components)."""

from __future__ import annotations

import json
import time
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
from ct_api.client import Client
from ct_api.models import CreateJobRequest, CreateJobResponse, JobRecord
from openapi_schema_validator import OAS31Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

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
def client(local_server: Any) -> Client:
    return Client(base_url=local_server.base_url, raise_on_unexpected_status=True)


def _json(content: bytes) -> Any:
    return json.loads(content)


def test_control_plane_round_trip_through_generated_functions(client: Client, conforms: Any) -> None:
    created = create_job.sync_detailed(
        DB, SCHEMA, ENDPOINT, client=client, body=CreateJobRequest.from_dict(BODY)
    )
    assert created.status_code == 200
    assert isinstance(created.parsed, CreateJobResponse)
    job_id = created.parsed.job_id
    assert isinstance(job_id, str) and job_id
    conforms("CreateJobResponse", _json(created.content))
    assert created.headers.get("x-snowflake-request-id")

    deadline = time.monotonic() + RUNNING_DEADLINE_S
    while True:
        fetched = get_job.sync_detailed(DB, SCHEMA, ENDPOINT, job_id, client=client)
        assert fetched.status_code == 200
        assert isinstance(fetched.parsed, JobRecord)
        if fetched.parsed.status == "running" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    record = _json(fetched.content)
    conforms("JobRecord", record)
    assert fetched.parsed.status == "running"
    assert [sub.sub_job_id for sub in fetched.parsed.sub_jobs] == [
        f"{job_id}:training:0",
        f"{job_id}:sampling:0",
    ]

    listed = list_jobs.sync_detailed(DB, SCHEMA, ENDPOINT, client=client, status="running")
    conforms("JobList", _json(listed.content))
    assert job_id in {job.job_id for job in listed.parsed.jobs}

    checkpoints = list_checkpoints.sync_detailed(DB, SCHEMA, ENDPOINT, job_id, client=client)
    assert checkpoints.status_code == 200
    conforms("CheckpointList", _json(checkpoints.content))

    run = get_experiment_run.sync_detailed(DB, SCHEMA, ENDPOINT, job_id, client=client)
    assert run.status_code == 200
    conforms("ExperimentRun", _json(run.content))

    cancelled = cancel_job.sync_detailed(DB, SCHEMA, ENDPOINT, job_id, client=client)
    assert cancelled.status_code in (200, 204)
    again = cancel_job.sync_detailed(DB, SCHEMA, ENDPOINT, job_id, client=client)
    assert again.status_code in (200, 204), "a repeated cancel is an idempotent success"


def test_capacity_and_models_fit_their_schemas(client: Client, conforms: Any) -> None:
    capacity = get_capacity.sync_detailed(
        DB, SCHEMA, ENDPOINT, client=client, breakdown="job_type,submitted_by"
    )
    assert capacity.status_code == 200
    conforms("Capacity", _json(capacity.content))
    models = list_models.sync_detailed(client=client)
    assert models.status_code == 200
    conforms("ModelList", _json(models.content))


def test_error_answers_are_returned_unparsed_with_a_service_error_body(client: Client, conforms: Any) -> None:
    missing = get_job.sync_detailed(DB, SCHEMA, ENDPOINT, "no-such-job", client=client)
    assert missing.status_code == 404
    assert missing.parsed is None
    body = _json(missing.content)
    conforms("ServiceError", body)
    assert str(body["code"]) == "517601"

    # A sub-job id travels percent-encoded; the server reads it back whole and still finds no such job.
    colon = get_job.sync_detailed(DB, SCHEMA, ENDPOINT, "abc:training:0", client=client)
    assert colon.status_code == 404
    assert "abc:training:0" in _json(colon.content)["message"]
