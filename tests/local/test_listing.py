"""Per-schema and account-level job lists: filters, paging newest first, page tokens."""

from __future__ import annotations

import httpx
import pytest


def test_schema_list_filters(local_server_factory, wait_for, training) -> None:
    # Jobs stay placing on this server, so the placing row is stable; the others are forced.
    server = local_server_factory(settings={"placing_delay_s": 3600})
    prefix = server.prefix()
    with server.http() as client:
        running, failed, placing = (
            client.post(prefix, json={"sub_job_configs": [training]}).json()["job_id"] for _ in range(3)
        )
        wait_for(client, f"{prefix}/{placing}", {"placing"})
        server.force_status(running, "running")
        server.force_status(failed, "failed", reason="boom")

        def ids(status: str | None) -> list[str]:
            params = {"status": status} if status is not None else {}
            return [j["job_id"] for j in client.get(prefix, params=params).json()["jobs"]]

        assert ids(None) == [running, failed, placing]
        assert ids("running") == [running]
        assert ids("RUNNING") == [running]
        assert ids("failed") == [failed]
        # The per-schema list: pending includes placing; active, comma lists and done match nothing.
        assert ids("pending") == [placing]
        assert ids("placing") == [placing]
        assert ids("active") == []
        assert ids("running,failed") == []
        assert ids("done") == []
        entry = client.get(prefix).json()["jobs"][0]
        assert entry["status"] == "running" and entry["sub_jobs"]


@pytest.fixture(scope="module")
def account(module_local_server_factory):
    # One server for the module; each test lists as its own role, so their jobs never mix.
    tokens = {f"tok-{name}": f"ROLE_{name.upper()}" for name in ("a", "b", "c", "d", "e")}
    return module_local_server_factory(tokens=tokens)


def _make_jobs(server, token: str, database: str, schema: str, count: int) -> list[str]:
    with server.http(token) as client:
        url = server.prefix(database=database, schema=schema)
        body = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}
        return [client.post(url, json=body).raise_for_status().json()["job_id"] for _ in range(count)]


def _walk(client: httpx.Client, **params) -> tuple[list[dict], int]:
    jobs: list[dict] = []
    pages = 0
    token = None
    while True:
        query = {**params, **({"page_token": token} if token else {})}
        response = client.get("/api/v2/cortex-training", params=query)
        assert response.status_code == 200, response.text
        body = response.json()
        pages += 1
        jobs.extend(body["jobs"])
        token = body.get("next_page_token")
        if not token:
            return jobs, pages


def test_account_list_pages_newest_first(account) -> None:
    first = _make_jobs(account, "tok-a", "DB1", "S1", 3)
    second = _make_jobs(account, "tok-a", "DB2", "S2", 2)
    _make_jobs(account, "tok-b", "DB1", "S1", 2)  # another role's jobs are never listed
    with account.http("tok-a") as client:
        jobs, pages = _walk(client, limit=2)
        assert [j["job_id"] for j in jobs] == list(reversed(first + second))
        assert pages == 3
        assert {(j["database_name"], j["schema_name"]) for j in jobs} == {("DB1", "S1"), ("DB2", "S2")}
        assert all(j["status"].isupper() for j in jobs)
        only_db2, _ = _walk(client, database="db2")
        assert [j["job_id"] for j in only_db2] == list(reversed(second))
        quoted, _ = _walk(client, database='"db2"')
        assert quoted == []
        in_schema, _ = _walk(client, database="DB1", schema="S1")
        assert [j["job_id"] for j in in_schema] == list(reversed(first))


def test_account_list_filters(account) -> None:
    jobs = _make_jobs(account, "tok-c", "DB", "S", 3)
    account.force_status(jobs[0], "failed", token="tok-c")
    with account.http("tok-c") as client:
        terminal, _ = _walk(client, status="terminal")
        assert [j["job_id"] for j in terminal] == [jobs[0]]
        active, _ = _walk(client, status="Active")
        assert [j["job_id"] for j in active] == [jobs[2], jobs[1]]
        both, _ = _walk(client, status="failed, running")
        assert {j["job_id"] for j in both} >= {jobs[0]}
        user = client.get(
            "/api/v2/statements", params={}
        ).status_code  # GET is the account list of "statements"
        assert user == 200
        me = client.post("/api/v2/statements", json={"statement": "SELECT CURRENT_USER()"}).json()["data"][0][
            0
        ]
        mine, _ = _walk(client, submitted_by=me.lower())
        assert len(mine) == 3
        nobody, _ = _walk(client, submitted_by="NOBODY")
        assert nobody == []
        future, _ = _walk(client, created_after="2999-01-01")
        assert future == []
        past, _ = _walk(client, created_before="2000-01-01T00:00:00Z")
        assert past == []
        window, _ = _walk(client, created_after="2000-01-01", created_before="2999-01-01T00:00:00+00:00")
        assert len(window) == 3


@pytest.mark.parametrize(
    "params",
    [
        {"schema": "S"},
        {"status": "done"},
        {"status": "bogus"},
        {"limit": "0"},
        {"limit": "1001"},
        {"limit": "ten"},
        {"created_after": "yesterday"},
        {"created_after": "2026-01-02", "created_before": "2026-01-01"},
    ],
)
def test_account_list_bad_filters_are_400(account, params) -> None:
    with account.http("tok-e") as client:
        response = client.get("/api/v2/cortex-training", params=params)
    assert response.status_code == 400
    assert response.json()["code"] == "517602"


def test_page_tokens(account) -> None:
    _make_jobs(account, "tok-d", "DB", "S", 3)
    with account.http("tok-d") as client:
        token = client.get("/api/v2/cortex-training", params={"limit": 1}).json()["next_page_token"]
        # The token works with the same filters (the page size may change) ...
        assert (
            client.get("/api/v2/cortex-training", params={"limit": 5, "page_token": token}).status_code == 200
        )
        # ... but not with different filters, nor tampered with.
        other = client.get("/api/v2/cortex-training", params={"page_token": token, "database": "DB"})
        assert other.status_code == 400
        assert other.json()["message"] != "Invalid page_token"
        forged = token[:-1] + ("0" if token[-1] != "0" else "1")
        tampered = client.get("/api/v2/cortex-training", params={"page_token": forged})
        assert tampered.json() == {"message": "Invalid page_token", "code": "517602"}
        assert client.get("/api/v2/cortex-training", params={"page_token": "garbage"}).status_code == 400
        # After the sealing key rotates, old tokens are refused.
        httpx.post(
            f"{account.base_url}/_ct/page-token-key:rotate", headers=account.admin_headers
        ).raise_for_status()
        rotated = client.get("/api/v2/cortex-training", params={"page_token": token})
        assert rotated.status_code == 400
        assert rotated.json()["message"] == "Invalid page_token"


def test_account_list_can_be_disabled(local_server_factory) -> None:
    server = local_server_factory(settings={"account_list_enabled": False})
    response = httpx.get(f"{server.base_url}/api/v2/cortex-training")
    assert response.status_code == 404
    assert response.json() == {"message": "Account-level job listing is not enabled for this account"}
