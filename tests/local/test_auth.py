"""Auth and ownership: tokens, roles, and the refusals the service answers with."""

from __future__ import annotations

import httpx
import pytest

BODY = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}


@pytest.fixture
def secured(local_server_factory):
    return local_server_factory(
        tokens=["tok-a=ROLE_A", "tok-b=ROLE_B", "tok-c"],
        settings={"roles_without_create": ["ROLE_B"], "hidden_schemas": ["SECRET_DB.HIDDEN"]},
    )


def test_requests_without_a_valid_token_are_401(secured) -> None:
    url = secured.prefix()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic tok-a"}):
        response = httpx.get(url, headers=headers)
        assert response.status_code == 401
        assert response.json()["code"] == 401
        assert response.headers["x-snowflake-request-id"]
    assert httpx.get(f"{secured.base_url}/api/v2/cortex-training/models").status_code == 401
    # The health check needs no token.
    assert httpx.get(f"{secured.base_url}/healthz").status_code == 200


def test_both_authorization_forms_are_accepted(secured) -> None:
    url = secured.prefix()
    assert httpx.get(url, headers={"Authorization": "Bearer tok-a"}).status_code == 200
    assert httpx.get(url, headers={"Authorization": 'Snowflake Token="tok-a"'}).status_code == 200


def test_jobs_belong_to_the_creating_role(secured) -> None:
    url = secured.prefix()
    with secured.http("tok-a") as a, secured.http("tok-c") as c:
        job_id = a.post(url, json=BODY).raise_for_status().json()["job_id"]
        record = a.get(f"{url}/{job_id}").json()
        assert record["owner_role"] == "ROLE_A"
        for response in (
            c.get(f"{url}/{job_id}"),
            c.post(f"{url}/{job_id}:cancel"),
            c.get(f"{url}/{job_id}/checkpoints"),
            c.get(f"{url}/{job_id}/experiment-run"),
            c.post(f"{url}/{job_id}/step", json={}),
        ):
            assert response.status_code == 404
            assert response.json() == {
                "message": f"Training job {job_id} not found in PUBLIC",
                "code": "517601",
            }
        assert c.get(url).json() == {"jobs": []}
        assert [j["job_id"] for j in a.get(url).json()["jobs"]] == [job_id]
        # A token without a role gets a stable derived one.
        other = c.post(url, json=BODY).json()["job_id"]
        assert c.get(f"{url}/{other}").json()["owner_role"].startswith("ROLE_")


def test_identity_statement_follows_the_token(secured) -> None:
    with secured.http("tok-a") as a:
        row = a.post("/api/v2/statements", json={"statement": "SELECT CURRENT_USER(), CURRENT_ROLE()"}).json()
    assert row["data"][0][1] == "ROLE_A"
    assert row["data"][0][0].startswith("USER_")


def test_statement_status_answers_the_statement_again_to_its_role_only(secured) -> None:
    from ct_core.connect.snowflake import pat_statements_transport

    statement = {"statement": "SELECT CURRENT_USER(), CURRENT_ROLE()"}
    with secured.http("tok-a") as a, secured.http("tok-c") as c:
        ran = a.post("/api/v2/statements", json=statement).raise_for_status().json()
        handle = ran["statementHandle"]
        again = a.get(f"/api/v2/statements/{handle}")
        assert again.status_code == 200
        assert again.json() == ran
        assert a.get(f"/api/v2/statements/{handle}", params={"partition": 0}).json() == ran
        # One partition only; a partition that is not a number is refused before anything is read.
        beyond = a.get(f"/api/v2/statements/{handle}", params={"partition": 1})
        assert beyond.status_code == 422 and "one partition" in beyond.json()["message"]
        assert a.get(f"/api/v2/statements/{handle}", params={"partition": "x"}).status_code == 400
        # Another role's statement and a handle nobody was given answer alike.
        for response in (c.get(f"/api/v2/statements/{handle}"), a.get("/api/v2/statements/no-such-handle")):
            assert response.status_code == 404
            assert "not found" in response.json()["message"]
    assert httpx.get(f"{secured.base_url}/api/v2/statements/{handle}").status_code == 401
    # The SDK's own operation reaches the route.
    transport = pat_statements_transport(secured.base_url, "tok-a")
    try:
        response = transport.request("getStatementStatus", params={"statement_handle": handle})
        assert response.json()["data"] == ran["data"]
    finally:
        transport.close()


def test_role_without_use_cortex_training_is_403(secured) -> None:
    with secured.http("tok-b") as b:
        response = b.post(secured.prefix(), json={"broken": True})  # refused before the body is read
        assert response.status_code == 403
        body = response.json()
        assert body["code"] == "003001"
        assert "Your primary role ROLE_B must have USE CORTEX TRAINING granted on ACCOUNT" in body["message"]
        # Reading is still allowed.
        assert b.get(secured.prefix()).status_code == 200


def test_inaccessible_schema_is_400(secured) -> None:
    with secured.http("tok-a") as a:
        response = a.get(secured.prefix(database="secret_db", schema="hidden"))
    assert response.status_code == 400
    assert response.json() == {
        "message": "Schema SECRET_DB.HIDDEN is not found or not authorized",
        "code": "517602",
    }
