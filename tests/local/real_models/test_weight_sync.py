"""Weight sync from a real model's training sub-job to its sampler: full weights and the LoRA
adapter alone both make the sampler score exactly what the trainer scores."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

PEFT = {"peft_type": "Lora", "r": 4, "lora_alpha": 8, "target_modules": "all-linear"}


def _sampler_logprobs(driver: Any, ids: list[int]) -> np.ndarray:
    logical = {"prompts": [ids], "sampling_params": {"max_tokens": 1, "temperature": 0, "prompt_logprobs": 0}}
    result = driver.result(driver.post_frame("generate", logical))["results"][0]
    entries = result["prompt_logprobs"][1:]
    return np.array([entry[str(token)]["logprob"] for entry, token in zip(entries, ids[1:], strict=True)])


@pytest.mark.parametrize("weight_format", ["hf", "lora"])
def test_synced_sampler_scores_like_the_trainer(driver, tokenizer, weight_format):
    ids = tokenizer("hello world, this is a tiny model for tests")["input_ids"]
    config = {"n_gpus": 1, "optimizer": {"name": "AdamW", "lr": 1e-2}, "peft_config": PEFT}
    inference: dict[str, Any] = {"n_gpus": 1, "max_seq_len": 64}
    if weight_format == "lora":
        inference["peft_config"] = PEFT
    driver.start(
        {"job_type": "training", "model_name": "tiny-qwen3", "training_config": config},
        {"job_type": "sampling", "model_name": "tiny-qwen3", "inference_config": inference},
    )
    untrained = _sampler_logprobs(driver, ids)
    for _ in range(3):
        driver.fwd_bwd([ids])
        driver.step()
    trained = np.asarray(driver.forward([ids]))[0]
    assert not np.allclose(trained, untrained, atol=1e-3)
    sync = driver.http.post(
        f"{driver.url}/operation",
        json={
            "operation_type": "weight-sync",
            "payload": {"weight_format": weight_format},
            "sub_job_type": "training",
        },
    )
    driver.result(sync)
    np.testing.assert_allclose(_sampler_logprobs(driver, ids), trained, atol=1e-4)
