"""Create, get, lifecycle and read-only job routes of the local server, over real HTTP."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import httpx


def test_job_walks_the_lifecycle_to_running(client, prefix, create, wait_for, training, sampling) -> None:
    job_id = create(client, prefix, training, sampling, hardware="B200", comment="hello")
    first = client.get(f"{prefix}/{job_id}").json()
    assert first["status"] in {"pending", "placing", "initializing", "running"}
    record = wait_for(client, f"{prefix}/{job_id}", {"running"})
    assert record["job_id"] == job_id
    assert record["hardware"] == "B200"
    assert record["comment"] == "hello"
    assert record["reason"] == ""
    assert record["owner_role"] == "LOCAL_ROLE"
    assert record["submitted_by"] == "LOCAL_USER"
    assert record["created_at"].endswith("Z") and record["state_changed_at"].endswith("Z")
    assert [s["sub_job_id"] for s in record["sub_jobs"]] == [f"{job_id}:training:0", f"{job_id}:sampling:0"]
    assert all(s["status"] == "running" for s in record["sub_jobs"])
    assert record["sub_jobs"][0]["training_config"] == {"n_gpus": 1}
    # Timeouts are echoed only when they were set.
    assert "idle_timeout_seconds" not in record
    assert "pending_timeout_seconds" not in record


def test_defaults_and_echoed_timeouts(client, prefix, create, training) -> None:
    job_id = create(client, prefix, training, idle_timeout_seconds=0, pending_timeout_seconds=300)
    record = client.get(f"{prefix}/{job_id}").json()
    assert record["hardware"] == "H200"
    assert record["comment"] is None
    assert record["idle_timeout_seconds"] == 0
    assert record["pending_timeout_seconds"] == 300


def test_job_type_is_normalized_and_indexed_per_type(client, prefix, create, sampling) -> None:
    job_id = create(client, prefix, {**sampling, "job_type": " JOB_TYPE_SAMPLING "}, sampling)
    subs = client.get(f"{prefix}/{job_id}").json()["sub_jobs"]
    assert [s["job_type"] for s in subs] == ["sampling", "sampling"]
    assert [s["sub_job_id"] for s in subs] == [f"{job_id}:sampling:0", f"{job_id}:sampling:1"]


def test_trailing_slash_create_and_list(client, prefix, training) -> None:
    response = client.post(prefix + "/", json={"sub_job_configs": [training]})
    assert response.status_code == 200
    listed = client.get(prefix + "/").json()["jobs"]
    assert [j["job_id"] for j in listed] == [response.json()["job_id"]]


def test_unknown_job_is_404_517601(client, prefix, schema) -> None:
    missing = str(uuid.uuid4())
    for response in (
        client.get(f"{prefix}/{missing}"),
        client.post(f"{prefix}/{missing}:cancel"),
        client.get(f"{prefix}/{missing}/experiment-run"),
        client.get(f"{prefix}/{missing}/checkpoints"),
    ):
        assert response.status_code == 404
        assert response.json() == {
            "message": f"Training job {missing} not found in {schema}",
            "code": "517601",
        }


def test_job_is_scoped_to_its_database_and_schema(local_server, client, prefix, create, training) -> None:
    job_id = create(client, prefix, training)
    other = local_server.prefix(schema="SOMEWHERE_ELSE")
    assert client.get(f"{other}/{job_id}").status_code == 404
    # Unquoted identifiers are case-insensitive: the same schema in lower case finds the job.
    lower = prefix.replace("/schemas/S_", "/schemas/s_").replace(
        "/databases/CT_TEST_DB", "/databases/ct_test_db"
    )
    assert client.get(f"{lower}/{job_id}").status_code == 200


def test_experiment_run(client, prefix, create, training, schema) -> None:
    default = create(client, prefix, training)
    run = client.get(f"{prefix}/{default}/experiment-run").json()
    assert run["experiment_name"] == f"CT_TEST_DB.{schema}.CT_EXPERIMENT"
    assert run["experiment_run_name"]
    named = create(client, prefix, training, experiment_name="MY_EXP")
    assert (
        client.get(f"{prefix}/{named}/experiment-run").json()["experiment_name"]
        == f"CT_TEST_DB.{schema}.MY_EXP"
    )


def test_every_response_has_a_fresh_request_id(client, prefix) -> None:
    ids = set()
    for response in (
        client.get("/healthz"),
        client.get(prefix),
        client.get(f"{prefix}/nope"),
        client.post(prefix, content=b"not json"),
        client.get("/no/such/route"),
    ):
        request_id = response.headers["x-snowflake-request-id"]
        assert uuid.UUID(request_id)
        ids.add(request_id)
    assert len(ids) == 5


def test_percent_encoded_colons_in_path_segments(local_server, client, prefix, create, training) -> None:
    job_id = create(client, prefix, training)
    local_server.add_checkpoint(job_id, checkpoint_id="cp:with:colons", global_steps=3)
    encoded = quote("cp:with:colons", safe="")
    assert "%3A" in encoded
    listed = client.get(f"{prefix}/{job_id}/checkpoints").json()["checkpoints"]
    assert [c["checkpoint_id"] for c in listed] == ["cp:with:colons"]
    exported = client.post(f"{prefix}/{job_id}/checkpoints/{encoded}:export")
    assert exported.status_code == 200
    assert exported.json()["checkpoint_id"] == "cp:with:colons"
    assert client.delete(f"{prefix}/{job_id}/checkpoints/{encoded}").status_code == 204
    # A sub-job id (colons percent-encoded) in the request-status path reaches the data plane, which
    # answers that no such request exists.
    sub_job = quote(f"{job_id}:training:0", safe="")
    missing = client.get(f"{prefix}/{job_id}/requests/{sub_job}")
    assert missing.status_code == 404
    assert f"Request {job_id}:training:0 not found" in missing.json()["message"]
    # The job id itself percent-encoded, followed by a literal :cancel.
    assert client.post(f"{prefix}/{quote(job_id, safe='')}:cancel").status_code == 200


def test_models_and_healthz(client) -> None:
    models = client.get("/api/v2/cortex-training/models").json()["models"]
    assert {"name": "Qwen/Qwen3-1.7B", "weights": "tiny"} in models
    # Without real models the tiny model runs in float32 on the CPU.
    health = client.get("/healthz").json()
    # Embedded services (the runs service, when its plugin is loaded) report where they stand.
    assert set(health.pop("services", {}).values()) <= {"starting", "up"}, health
    # Weight copies synced to samplers, held per sampling sub-job (other tests' jobs may hold some).
    held = health.pop("synced_weights")
    assert held["count"] == len(held["sub_jobs"]) and held["bytes"] >= 0, held
    assert health == {"status": "ok", "device": "cpu", "dtype": "float32"}


def test_statements_answer_identity(client) -> None:
    response = client.post(
        "/api/v2/statements",
        json={"statement": "SELECT CURRENT_USER(), CURRENT_ROLE()", "database": "DB", "schema": "PUBLIC"},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["data"] == [["LOCAL_USER", "LOCAL_ROLE"]]
    assert [c["name"] for c in body["resultSetMetaData"]["rowType"]] == ["CURRENT_USER()", "CURRENT_ROLE()"]
    three = client.post(
        "/api/v2/statements",
        json={"statement": "select current_user(), current_account_name(), current_role();"},
    ).json()
    assert three["data"] == [["LOCAL_USER", "LOCAL", "LOCAL_ROLE"]]
    refused = client.post("/api/v2/statements", json={"statement": "DROP TABLE x"})
    assert refused.status_code == 422
    assert refused.json()["code"] == "001003"


def test_show_and_create_database_statements(client, prefix, create, training, schema) -> None:
    create(client, prefix, training)
    dbs = client.post("/api/v2/statements", json={"statement": "SHOW DATABASES"}).json()
    assert ["CT_TEST_DB"] in [[row[1]] for row in dbs["data"]]
    schemas = client.post(
        "/api/v2/statements", json={"statement": "SHOW SCHEMAS IN DATABASE CT_TEST_DB"}
    ).json()
    assert schema in [row[1] for row in schemas["data"]]
    created = client.post("/api/v2/statements", json={"statement": "CREATE DATABASE IF NOT EXISTS NEWDB"})
    assert created.status_code == 200


def test_data_plane_routes_need_a_running_job(client, prefix, create, training) -> None:
    # A job too large for the account never leaves pending (data-plane calls need a running job).
    job_id = create(client, prefix, {**training, "training_config": {"n_gpus": 1000}})
    for action in ("forward-backward", "step", "save", "load", "generate", "generate-stream"):
        response = client.post(f"{prefix}/{job_id}/{action}", content=b"{}")
        assert response.status_code == 409, action
        assert response.json()["message"] == (
            f"Training job {job_id} is pending; data-plane calls need a running job"
        )
    assert client.get(f"{prefix}/{job_id}/requests/r1").status_code == 404
    # The job is resolved first: an unknown job is the usual 404.
    assert client.post(f"{prefix}/{uuid.uuid4()}/step", json={}).status_code == 404


def test_unknown_route_and_wrong_method(client, prefix) -> None:
    response = client.get("/api/v2/databases/a/b")
    assert response.status_code == 404
    assert "message" in response.json()
    assert client.delete(prefix).status_code == 405


def test_no_redirects_ever(local_server) -> None:
    # The client never follows redirects, so the server must not send any.
    with httpx.Client(base_url=local_server.base_url, follow_redirects=False) as http:
        for url in ("/api/v2/databases/D/schemas/S/cortex-training/", "/healthz"):
            assert http.get(url).status_code < 300
