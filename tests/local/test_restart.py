"""Durability and process behaviour: restarts keep every job, signals stop the server cleanly."""

from __future__ import annotations

import signal
import sqlite3

import httpx

BODY = {
    "sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}],
    "idle_timeout_seconds": 0,
}


def test_restart_keeps_jobs_statuses_and_checkpoints(local_server_factory, wait_for) -> None:
    server = local_server_factory(tokens={"tok": "ROLE_A"})
    url = server.prefix()
    with server.http("tok") as client:
        running = client.post(url, json=BODY).json()["job_id"]
        wait_for(client, f"{url}/{running}", {"running"})
        cancelled = client.post(url, json=BODY).json()["job_id"]
        client.post(f"{url}/{cancelled}:cancel").raise_for_status()
        wait_for(client, f"{url}/{cancelled}", {"cancelled"})
        server.add_checkpoint(running, checkpoint_id="cp_1", global_steps=7, avg_loss=0.5)
        before = {j["job_id"]: j for j in client.get(url).json()["jobs"]}
    base_url = server.base_url
    assert server.stop() == 0
    assert (server.state_dir / "state.sqlite3").exists()
    server.start()
    assert server.base_url == base_url
    with server.http("tok") as client:
        after = {j["job_id"]: j for j in client.get(url).json()["jobs"]}
        assert after == before
        assert after[running]["status"] == "running"
        assert after[cancelled]["status"] == "cancelled"
        assert client.get(f"{url}/{running}/checkpoints").json()["checkpoints"][0]["global_steps"] == 7


def test_restart_resumes_a_lifecycle_in_progress(local_server_factory, wait_for) -> None:
    slow = {"placing_delay_s": 3600}
    server = local_server_factory(settings=slow)
    with server.http() as client:
        job_id = client.post(server.prefix(), json=BODY).json()["job_id"]
        wait_for(client, f"{server.prefix()}/{job_id}", {"placing"})
    server.stop()
    # The same state dir under faster settings: the job carries on from where it was.
    server.settings = {**server.settings, "placing_delay_s": 0.01}
    server.start()
    with server.http() as client:
        wait_for(client, f"{server.prefix()}/{job_id}", {"running"})


def test_state_is_sqlite_in_wal_mode(local_server) -> None:
    with sqlite3.connect(local_server.state_dir / "state.sqlite3") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_sigint_and_sigterm_exit_zero(local_server_factory) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        server = local_server_factory()
        assert httpx.get(f"{server.base_url}/healthz").status_code == 200
        assert server.stop(sig) == 0
