"""The memory check before a real model is loaded: a job that cannot fit is refused at create."""

from __future__ import annotations

import httpx


def _create(server, model: str, job_type: str = "training") -> httpx.Response:
    section = "training_config" if job_type == "training" else "inference_config"
    body = {
        "sub_job_configs": [
            {"job_type": job_type, "model_name": model, section: {"n_gpus": 1, "max_seq_len": 256}}
        ]
    }
    with server.http() as http:
        return http.post(server.prefix(schema="S_MEMORY"), json=body)


def test_a_model_too_big_for_the_declared_memory_is_refused(local_server_factory, model_folders):
    # The tiny test model needs a few MiB to train; 1 MiB cannot hold it.
    small = local_server_factory(
        extra_args=["--model", f"llama={model_folders['llama']}", "--device-memory", "1MiB"]
    )
    for job_type in ("training", "sampling"):
        refused = _create(small, "llama", job_type)
        assert refused.status_code == 400, refused.text
        message = refused.json()["message"]
        assert "llama" in message and "memory" in message and "1.0 MiB" in message
    roomy = local_server_factory(
        extra_args=["--model", f"llama={model_folders['llama']}", "--device-memory", "2GiB"]
    )
    assert _create(roomy, "llama").status_code == 200


def test_the_declared_memory_is_reported(local_server_factory, model_folders):
    server = local_server_factory(
        extra_args=["--model", f"llama={model_folders['llama']}", "--device-memory", "2GiB"]
    )
    with server.http() as http:
        assert http.get("/healthz").json()["memory_bytes"] == 2 * 1024**3
