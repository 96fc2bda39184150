"""A real model's training state survives a killed server exactly (the state snapshot)."""

from __future__ import annotations

import signal
import uuid

import numpy as np
from ct_testing.plugin import wait_for_job_status

#: Upper bound on the restarted job running again; only a hang gets near it.
RESTART_LIMIT_S = 180.0


def test_a_killed_server_carries_on_from_the_last_step(
    local_server_factory, model_folders, tokenizer, driver_class
):
    server = local_server_factory(extra_args=["--model", f"tiny-llama={model_folders['llama']}"])
    ids = [tokenizer("the quick brown fox jumps over the lazy dog")["input_ids"]]
    prefix = server.prefix(schema="S_" + uuid.uuid4().hex[:10].upper())
    config = {"n_gpus": 1, "optimizer": {"name": "AdamW", "lr": 1e-2}}
    with server.http() as http:
        driver = driver_class(http, prefix).start(
            {"job_type": "training", "model_name": "tiny-llama", "training_config": config}
        )
        for _ in range(3):
            driver.fwd_bwd(ids)
            driver.step()
        before = np.asarray(driver.forward(ids))
        job_id = driver.job_id
    server.stop(signal.SIGKILL)
    server.start()
    with server.http() as http:
        driver = driver_class(http, prefix, job_id)
        wait_for_job_status(http, driver.url, {"running"}, limit_s=RESTART_LIMIT_S)
        after = np.asarray(driver.forward(ids))
    np.testing.assert_array_equal(after, before)
