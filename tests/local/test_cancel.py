"""Cancel rules: cancellation from any active state, idempotent repeats, conflicts when settled."""

from __future__ import annotations

import pytest


def test_cancel_running_job(client, prefix, create, wait_for, training) -> None:
    job_id = create(client, prefix, training)
    wait_for(client, f"{prefix}/{job_id}", {"running"})
    response = client.post(f"{prefix}/{job_id}:cancel")
    assert response.status_code == 200
    record = client.get(f"{prefix}/{job_id}").json()
    assert record["status"] in {"cancelling", "cancelled"}
    assert record["reason"] == "cancelled_by_client"
    # Repeating the cancel while cancelling or cancelled succeeds.
    assert client.post(f"{prefix}/{job_id}:cancel").status_code == 200
    final = wait_for(client, f"{prefix}/{job_id}", {"cancelled"})
    assert final["reason"] == "cancelled_by_client"
    assert all(s["status"] == "cancelled" for s in final["sub_jobs"])
    assert client.post(f"{prefix}/{job_id}:cancel").status_code == 200


def test_cancel_pending_job(local_server_factory, training) -> None:
    # A job bigger than the account's ceiling stays pending, so the cancel starts from pending.
    server = local_server_factory(settings={"capacity": {"H200": {"max_total_gpus": 1}}})
    big = {**training, "training_config": {"n_gpus": 8}}
    with server.http() as client:
        job_id = client.post(server.prefix(), json={"sub_job_configs": [big]}).json()["job_id"]
        assert client.get(f"{server.prefix()}/{job_id}").json()["status"] == "pending"
        assert client.post(f"{server.prefix()}/{job_id}:cancel").status_code == 200
        assert client.get(f"{server.prefix()}/{job_id}").json()["status"] in {"cancelling", "cancelled"}


@pytest.mark.parametrize("settled", ["failed", "terminated"])
def test_cancel_settled_job_is_a_conflict(local_server, client, prefix, create, training, settled) -> None:
    job_id = create(client, prefix, training)
    local_server.force_status(job_id, settled, reason="test", reason_details="forced by the test")
    response = client.post(f"{prefix}/{job_id}:cancel")
    assert response.status_code == 409
    assert response.json() == {
        "message": f"Training job {job_id} is {settled} and cannot be cancelled",
        "code": 409,
    }
    record = client.get(f"{prefix}/{job_id}").json()
    assert (record["status"], record["reason"], record["reason_details"]) == (
        settled,
        "test",
        "forced by the test",
    )
