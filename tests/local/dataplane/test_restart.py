"""Restarts keep finished results, chunk-group identities and the training state."""

from __future__ import annotations

import uuid

import httpx
import pytest
from ct_testing import wait_until
from ct_testing.plugin import wait_for_job_status

from ct_core import wire

SETTINGS = {"result_chunk_threshold_bytes": 4096, "result_chunk_max_bytes": 8192 + 1024}
# Upper bound on any wait; only a hang (or a very loaded machine) gets near it.
LIMIT_S = 120.0


@pytest.mark.slow
def test_restart_keeps_results_groups_and_training_state(local_server_factory) -> None:
    import torch

    server = local_server_factory(settings=SETTINGS)
    prefix = server.prefix(schema="S_RESTART")
    ids = torch.tensor([list(b"restarts keep the training state " * 3)] * 2)
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    frame = wire.dumps({"args": (), "kwargs": {"input_ids": ids, "labels": labels}})
    group = str(uuid.uuid4())
    chunks = wire.encode_byte_chunks(
        frame,
        kind="request",
        operation="fwd-bwd",
        max_bytes=8192 + 600,
        chunk_group_id=group,
        force_chunk=True,
    )
    assert len(chunks) >= 2
    body = {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": "Qwen/Qwen3-0.6B",
                "training_config": {"optimizer": {"lr": 0.01}},
            }
        ],
        "idle_timeout_seconds": 0,
    }

    def poll(http: httpx.Client, url: str, rid: str) -> dict:
        def finished() -> dict | None:
            status = http.get(f"{url}/requests/{rid}").raise_for_status().json()
            return None if status["status"] in {"pending", "running"} else status

        status = wait_until(finished, timeout=LIMIT_S, message=f"request {rid} never finished")
        assert status["status"] == "done", status
        return status["result"]

    def post(http: httpx.Client, url: str, chunk: bytes) -> httpx.Response:
        return http.post(f"{url}/forward-backward", content=chunk)

    with server.http() as http:
        job_id = http.post(prefix, json=body).json()["job_id"]
        url = f"{prefix}/{job_id}"
        wait_for_job_status(http, url, {"running"}, limit_s=LIMIT_S)
        rid = [post(http, url, c) for c in chunks][-1].json()["request_id"]
        first = poll(http, url, rid)
        poll(http, url, http.post(f"{url}/step", json={}).json()["request_id"])
        # A second group is left half-uploaded across the restart.
        half_group = wire.encode_byte_chunks(
            frame, kind="request", operation="fwd-bwd", max_bytes=8192 + 600, force_chunk=True
        )
        assert post(http, url, half_group[0]).status_code == 200

    server.restart()
    with server.http() as http:
        # The finished result is still there, and replaying the finished group does not run it again.
        assert poll(http, url, rid) == first
        replay = [post(http, url, c) for c in chunks]
        assert replay[-1].json()["request_id"] == rid
        # The half-uploaded group carries on where it stopped.
        rest = [post(http, url, c) for c in half_group[1:]]
        assert rest[-1].status_code == 200
        after = poll(http, url, rest[-1].json()["request_id"])
        counts = http.get(f"{server.base_url}/_ct/jobs/{job_id}/executions").json()["executions"]
        assert counts == {"forward-backward": 2, "step": 1}
        # The training state survived: the step taken before the restart shows in the loss and count.
        assert after["avg_loss"] < first["avg_loss"]
        step = poll(http, url, http.post(f"{url}/step", json={}).json()["request_id"])
        assert step["global_steps"] == 2
