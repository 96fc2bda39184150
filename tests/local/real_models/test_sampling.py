"""Sampling on real Hugging Face models: the model's tokenizer for text prompts and results, its
end token as the stop, and weight sync from a training sub-job."""

from __future__ import annotations

from typing import Any

import pytest

REPLY = "hello world"
LR = 2e-2
STEPS = 40


def _sub_jobs(architecture: str) -> list[dict[str, Any]]:
    model = f"tiny-{architecture}"
    return [
        {
            "job_type": "training",
            "model_name": model,
            "training_config": {"n_gpus": 1, "optimizer": {"name": "AdamW", "lr": LR}},
        },
        {"job_type": "sampling", "model_name": model, "inference_config": {"n_gpus": 1, "max_seq_len": 64}},
    ]


def _generate(driver: Any, prompt: Any, **params: Any) -> dict[str, Any]:
    logical = {"prompts": [prompt], "sampling_params": {"temperature": 0, **params}}
    return dict(driver.result(driver.post_frame("generate", logical))["results"][0])


@pytest.mark.parametrize("architecture", ["qwen3", "llama"])
def test_a_trained_reply_is_sampled_with_the_chat_template_and_stops_at_the_end_token(
    driver, tokenizer, architecture
):
    messages = [{"role": "user", "content": "hi"}]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    # Teach the model the whole exchange, ending with its end token.
    ids = tokenizer(prompt + REPLY + "<|end|>")["input_ids"]
    driver.start(*_sub_jobs(architecture))
    for _ in range(STEPS):
        driver.fwd_bwd([ids])
        driver.step()
    sync = driver.http.post(
        f"{driver.url}/operation",
        json={
            "operation_type": "weight-sync",
            "payload": {"weight_format": "hf"},
            "sub_job_type": "training",
        },
    )
    driver.result(sync)
    result = _generate(driver, prompt, max_tokens=20)
    assert result["text"] == REPLY
    assert result["finish_reason"] == "stop"
    assert result["token_ids"][-1] == tokenizer.convert_tokens_to_ids("<|end|>")
    # Token-id prompts above the tiny model's 260 ids are this model's own.
    by_ids = _generate(driver, tokenizer(prompt)["input_ids"], max_tokens=20)
    assert by_ids["token_ids"] == result["token_ids"]
    # ignore_eos runs past the end token to max_tokens.
    longer = _generate(driver, prompt, max_tokens=len(result["token_ids"]) + 3, ignore_eos=True)
    assert longer["finish_reason"] == "length"
