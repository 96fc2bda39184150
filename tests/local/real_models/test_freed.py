"""A sub-job's real model is loaded once and freed when its job ends, cancelled or finished.

The server keeps an account of the real models it holds (``/healthz`` ``loaded_models``: each
model with the bytes of its weights on the device); an entry leaves it only when the model object
itself is gone, so the account going back to nothing is the memory given back.
"""

from __future__ import annotations

import uuid
from typing import Any

from ct_testing import wait_until

from ct_local.model.registry import parameter_count

#: Upper bound on a job ending and its workers letting go; only a hang gets near it.
FREE_LIMIT_S = 180.0
MODEL = "freed-llama"


def _sub_jobs() -> list[dict[str, Any]]:
    return [
        {
            "job_type": "training",
            "model_name": MODEL,
            "training_config": {"n_gpus": 1, "optimizer": {"name": "AdamW", "lr": 1e-2}},
        },
        {"job_type": "sampling", "model_name": MODEL, "inference_config": {"n_gpus": 1, "max_seq_len": 64}},
    ]


def _loaded(server: Any) -> dict[str, Any]:
    with server.http() as http:
        health = http.get("/healthz")
    assert health.status_code == 200, health.text
    return dict(health.json()["loaded_models"])


def _load_both(driver: Any, tokenizer: Any) -> None:
    """Run one call on each sub-job, so the training and the sampling model are loaded."""
    driver.fwd_bwd([tokenizer("hello world")["input_ids"]])
    driver.result(driver.post_frame("generate", {"prompts": ["hello"], "sampling_params": {"max_tokens": 2}}))


def _wait_freed(server: Any) -> dict[str, Any]:
    return wait_until(
        lambda: (lambda loaded: loaded if loaded["count"] == 0 else None)(_loaded(server)),
        timeout=FREE_LIMIT_S,
        interval=0.1,
        message="the ended job's models were never freed",
    )


def test_a_sub_jobs_model_is_freed_on_cancel_and_on_finish(
    local_server_factory, model_folders, driver_class, tokenizer
):
    folder = model_folders["llama"]
    server = local_server_factory(extra_args=["--model", f"{MODEL}={folder}", "--dtype", "float32"])
    weights = parameter_count(folder) * 4  # float32
    with server.http() as http:
        assert _loaded(server) == {"count": 0, "bytes": 0, "models": []}
        for end in ("cancel", "finish"):
            driver = driver_class(http, server.prefix(schema="S_" + uuid.uuid4().hex[:10].upper()))
            driver.start(*_sub_jobs())
            _load_both(driver, tokenizer)
            loaded = _loaded(server)
            # One model per sub-job, each counted with its weights' bytes.
            assert loaded["count"] == 2, loaded
            assert sorted(m["model_name"] for m in loaded["models"]) == [MODEL, MODEL]
            assert {m["bytes"] for m in loaded["models"]} == {weights}
            assert loaded["bytes"] == 2 * weights
            if end == "cancel":
                answer = http.post(f"{driver.url}:cancel")
                assert answer.status_code == 200, answer.text
            else:
                server.force_status(driver.job_id, "terminated", "idle_timeout")
            assert _wait_freed(server)["bytes"] == 0
