"""The reference client cortex-training 0.0.3 drives ct_local's control plane unchanged."""

from __future__ import annotations

import pytest

pytest.importorskip("cortex_training")


def test_reference_client_control_plane(local_server, schema) -> None:
    from cortex_training import CortexTrainingClient

    client = CortexTrainingClient(
        base_url=local_server.base_url, database="CT_TEST_DB", schema=schema, poll_interval=0.02
    )
    body = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-1.7B"}]}
    job_id = client.create_job_from_body(body)["job_id"]
    record = client.wait_for_job(job_id)
    assert record["status"] == "running"
    assert [j["job_id"] for j in client.list_jobs()] == [job_id]
    assert client.list_jobs(status="running")[0]["job_id"] == job_id
    assert client.list_checkpoints(job_id) == []
    assert client.get_experiment_run(job_id)["experiment_name"].endswith("CT_EXPERIMENT")
    capacity = client.get_capacity()
    assert capacity["in_use_gpus"] >= 1
    assert client.cancel_job(job_id) is None
    assert client.get_job(job_id)["status"] in {"cancelling", "cancelled"}
