"""`ct tinker serve` in front of a second `ct local serve`: the same SDK loop, translated into
Cortex Training jobs and data-plane requests of that server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from ct_testing import wait_until

BASE_MODEL = "Qwen/Qwen3-0.6B"
SERVICE_KEY = "tml-standalone-test-key"
#: Only bounds a hang: the command imports the SDK and starlette before it listens.
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0


@pytest.fixture
def front(local_server: Any, tmp_path: Path) -> Iterator[str]:
    ready = tmp_path / "ready.json"
    ct = Path(sys.executable).with_name("ct")
    command = [
        str(ct),
        "--base-url",
        local_server.base_url,
        "--database",
        "TINKER_FRONT_DB",
        "--schema",
        "PUBLIC",
        "tinker",
        "serve",
        "--port",
        "0",
        "--state-dir",
        str(tmp_path / "state"),
        "--ready-file",
        str(ready),
        "--byte-tokenizer",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CT_", "CORTEX_TRAINING_", "TINKER_"))}
    env["CT_TINKER_SERVICE_KEY"] = SERVICE_KEY
    log = (tmp_path / "front.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:

        def started() -> bool:
            if process.poll() is not None:
                raise AssertionError((tmp_path / "front.log").read_text())
            return ready.exists()

        wait_until(started, timeout=START_TIMEOUT_S, message="ct tinker serve did not start")
        yield json.loads(ready.read_text())["base_url"]
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_sdk_loop_through_ct_tinker_serve(
    front: str, local_server: Any, tinker_env: Any, next_token_datum: Any
) -> None:
    import tinker
    from tinker import types

    refused = httpx.post(
        f"{front}/api/v1/create_session", json={}, headers={"X-API-Key": "tml-wrong"}, timeout=30
    )
    assert refused.status_code == 401

    tinker_env(front, SERVICE_KEY)
    with tinker.ServiceClient() as service:
        training = service.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
        tokenizer = training.get_tokenizer()
        tokens = tokenizer.encode("through the front, into Cortex Training.")
        datum = next_token_datum(tokens)
        losses = []
        for _ in range(5):
            fb = training.forward_backward([datum], "cross_entropy")
            step = training.optim_step(types.AdamParams(learning_rate=2e-2))
            result = fb.result()
            step.result()
            losses.append(result.metrics["loss:sum"])
        assert losses[-1] < losses[0] * 0.95, losses
        # The Cortex Training contract has no policy loss: refused, saying so.
        policy = types.Datum(
            model_input=datum.model_input,
            loss_fn_inputs={
                "target_tokens": np.array(tokens[1:]),
                "logprobs": np.full(len(tokens) - 1, -2.0, dtype=np.float32),
                "advantages": np.ones(len(tokens) - 1, dtype=np.float32),
            },
        )
        with pytest.raises(tinker.RequestFailedError, match="not available through ct tinker serve") as info:
            training.forward_backward([policy], "importance_sampling").result()
        assert "cross-entropy mean" in str(info.value)
        # The job's optimizer is fixed when it is created: other Adam settings are refused by name.
        with pytest.raises(tinker.BadRequestError, match="eps=1e-08 is not supported"):
            training.optim_step(types.AdamParams(learning_rate=2e-2, eps=1e-8)).result()
        training.optim_step(types.AdamParams(learning_rate=2e-2, eps=1e-12, beta1=0.9, beta2=0.95)).result()
        sampler = training.save_weights_and_get_sampling_client().result()
        sampled = sampler.sample(
            types.ModelInput.from_ints(tokens[:4]),
            num_samples=1,
            sampling_params=types.SamplingParams(max_tokens=4),
        ).result()
        assert len(sampled.sequences[0].tokens) > 0
        model_id = training.model_id

    # The training client is a job of the server behind the front, in the front's database.
    from ct_core import CortexTrainingClient

    behind = CortexTrainingClient(base_url=local_server.base_url, database="TINKER_FRONT_DB", schema="PUBLIC")
    try:
        job = behind.get_job(model_id)
    finally:
        behind.close()
    assert sorted(s["sub_job_id"] for s in job["sub_jobs"]) == [
        f"{model_id}:sampling:0",
        f"{model_id}:training:0",
    ]
