"""Fault injection: scripted statuses, dropped connections and delays, at start-up and at runtime."""

from __future__ import annotations

import json

import httpx
import pytest


@pytest.fixture(scope="module")
def shared(module_local_server_factory):
    return module_local_server_factory()


@pytest.fixture
def server(shared):
    # Each test starts and ends with no rules, so they cannot leak between tests.
    shared.clear_faults()
    yield shared
    shared.clear_faults()


def test_respond_rule_answers_the_next_n_matches(server) -> None:
    server.set_faults(
        {
            "path": "/capacity$",
            "status": 503,
            "body": {"message": "busy", "code": "503"},
            "headers": {"Retry-After": "0"},
            "count": 2,
        }
    )
    url = f"{server.prefix()}/capacity"
    first, second, third = (httpx.get(url) for _ in range(3))
    assert (first.status_code, second.status_code, third.status_code) == (503, 503, 200)
    assert first.json() == {"message": "busy", "code": "503"}
    assert first.headers["retry-after"] == "0"
    assert first.headers["x-snowflake-request-id"]
    # Other paths are untouched.
    assert httpx.get(server.prefix()).status_code == 200


def test_method_and_skip(server) -> None:
    server.set_faults({"path": "/healthz", "method": "GET", "status": 500, "skip": 1, "count": 1})
    statuses = [httpx.get(f"{server.base_url}/healthz").status_code for _ in range(3)]
    assert statuses == [200, 500, 200]


def test_unlimited_rule_until_cleared(server) -> None:
    server.set_faults({"path": "/models$", "status": 429, "count": None, "body": "slow down"})
    for _ in range(3):
        response = httpx.get(f"{server.base_url}/api/v2/cortex-training/models")
        assert response.status_code == 429
        assert response.text == "slow down"
    listed = httpx.get(f"{server.base_url}/_ct/faults").json()["rules"]
    assert listed[0]["hits"] == 3
    server.clear_faults()
    assert httpx.get(f"{server.base_url}/api/v2/cortex-training/models").status_code == 200


def test_drop_closes_the_connection(server) -> None:
    server.set_faults({"path": "/capacity$", "action": "drop"})
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{server.prefix()}/capacity")
    assert httpx.get(f"{server.prefix()}/capacity").status_code == 200
    # The server survives and keeps serving on fresh connections.
    assert httpx.get(f"{server.base_url}/healthz").status_code == 200


def test_delay_then_normal_answer(server) -> None:
    server.set_faults({"path": "/models$", "action": "delay", "delay_s": 0.5})
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(f"{server.base_url}/api/v2/cortex-training/models", timeout=0.05)
    # Once used up, the rule no longer applies and the request is answered at once.
    assert httpx.get(f"{server.base_url}/api/v2/cortex-training/models", timeout=10).status_code == 200


def test_admin_routes_are_never_faulted(server) -> None:
    server.set_faults({"path": ".*", "status": 500, "count": None})
    assert httpx.get(f"{server.base_url}/healthz").status_code == 500
    assert httpx.get(f"{server.base_url}/_ct/faults").status_code == 200
    server.clear_faults()
    assert httpx.get(f"{server.base_url}/healthz").status_code == 200


def test_invalid_rules_are_refused(server) -> None:
    for rule in (
        {"path": "x", "action": "explode"},
        {"path": "x", "colour": "red"},
        {"path": "x", "count": -1},
    ):
        response = httpx.post(f"{server.base_url}/_ct/faults", json=rule)
        assert response.status_code == 422
        assert response.json()["detail"][0]["msg"]


def test_rules_from_startup_flags_and_settings(local_server_factory) -> None:
    flagged = local_server_factory(
        settings={"faults": [{"path": "/models$", "status": 502}]},
        extra_args=["--fault", json.dumps({"path": "/capacity$", "status": 504})],
    )
    assert httpx.get(f"{flagged.base_url}/api/v2/cortex-training/models").status_code == 502
    assert httpx.get(f"{flagged.prefix()}/capacity").status_code == 504
    assert httpx.get(f"{flagged.prefix()}/capacity").status_code == 200
