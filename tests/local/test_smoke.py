"""The shared fixtures start a real server that answers /healthz and creates jobs."""

from __future__ import annotations

import httpx


def test_session_server_answers_healthz(local_server) -> None:
    response = httpx.get(f"{local_server.base_url}/healthz")
    assert response.status_code == 200
    assert response.headers["x-snowflake-request-id"]


def test_ct_home_isolates_environment(ct_home, monkeypatch) -> None:
    import os

    assert os.environ["HOME"] == str(ct_home)
    assert not any(k.startswith("CORTEX_TRAINING_") for k in os.environ)
