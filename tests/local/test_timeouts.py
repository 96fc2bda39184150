"""Idle and pending timeouts of created jobs, scaled down with the timeout_scale setting."""

from __future__ import annotations

import time

# 300 s timeouts fire after 0.3 s.
SCALE = {"timeout_scale": 0.001}


def test_pending_timeout_fails_the_job(local_server_factory, wait_for) -> None:
    server = local_server_factory(settings={**SCALE, "capacity": {"H200": {"max_total_gpus": 2}}})
    body = {
        "sub_job_configs": [
            {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 8}}
        ],
        "pending_timeout_seconds": 300,
    }
    with server.http() as client:
        job_id = client.post(server.prefix(), json=body).json()["job_id"]
        record = wait_for(client, f"{server.prefix()}/{job_id}", {"failed"})
    assert record["reason"] == "pending_timeout"
    assert "300 seconds" in record["reason_details"]


def test_idle_timeout_terminates_a_running_job(local_server_factory, wait_for) -> None:
    server = local_server_factory(settings=SCALE)
    body = {
        "sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}],
        "idle_timeout_seconds": 300,
    }
    with server.http() as client:
        job_id = client.post(server.prefix(), json=body).json()["job_id"]
        record = wait_for(client, f"{server.prefix()}/{job_id}", {"terminated"})
        assert record["reason"] == "idle_timeout"
        # A reclaimed job cannot be cancelled any more.
        assert client.post(f"{server.prefix()}/{job_id}:cancel").status_code == 409


def test_idle_timeout_zero_disables_reclamation(local_server_factory, wait_for) -> None:
    server = local_server_factory(settings=SCALE)
    never = {
        "sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}],
        "idle_timeout_seconds": 0,
    }
    short = {
        "sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}],
        "idle_timeout_seconds": 300,
    }
    with server.http() as client:
        kept = client.post(server.prefix(), json=never).json()["job_id"]
        reclaimed = client.post(server.prefix(), json=short).json()["job_id"]
        wait_for(client, f"{server.prefix()}/{reclaimed}", {"terminated"})
        # The short job was reclaimed well after both started running; the disabled one still runs.
        time.sleep(0.05)
        assert client.get(f"{server.prefix()}/{kept}").json()["status"] == "running"
