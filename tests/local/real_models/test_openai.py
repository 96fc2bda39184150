"""The OpenAI-compatible endpoint of a deployment of a real model: the model's chat template in,
its end token as the stop, through the real ``openai`` package."""

from __future__ import annotations

from typing import Any

from ct_testing.plugin import create_job, wait_for_job_status
from openai import OpenAI

REPLY = "hello world"
LR = 2e-2
STEPS = 40
#: Upper bound on the deployment reaching running; only a hang gets near it.
DEPLOY_LIMIT_S = 180.0


def test_a_deployment_of_a_trained_real_model_answers_through_its_chat_template(
    real_server, driver, tokenizer
):
    model = "tiny-qwen3"
    messages = [{"role": "user", "content": "hi"}]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    ids = tokenizer(prompt + REPLY + "<|end|>")["input_ids"]
    config = {"n_gpus": 1, "optimizer": {"name": "AdamW", "lr": LR}}
    driver.start({"job_type": "training", "model_name": model, "training_config": config})
    for _ in range(STEPS):
        driver.fwd_bwd([ids])
        driver.step()
    driver.save("weights-only")
    checkpoint_id = driver.http.get(f"{driver.url}/checkpoints").json()["checkpoints"][0]["checkpoint_id"]
    deployment = {
        "job_type": "sampling",
        "model_name": model,
        "inference_config": {"n_gpus": 1, "max_seq_len": 128, "deployment_class": "EVALUATION"},
        "source_checkpoint_info": {"source_job_id": driver.job_id, "checkpoint_id": checkpoint_id},
    }
    job_id = create_job(driver.http, driver.prefix, [deployment])
    wait_for_job_status(driver.http, f"{driver.prefix}/{job_id}", {"running"}, limit_s=DEPLOY_LIMIT_S)
    client = OpenAI(base_url=f"{driver.prefix}/inference/v1", api_key="unused")
    answer = client.chat.completions.create(
        model=f"sf-ct-{job_id}", messages=messages, temperature=0, max_completion_tokens=20
    )
    choice = answer.choices[0]
    assert choice.message.content == REPLY
    assert choice.finish_reason == "stop"
    # The prompt is the template's rendering, token for token.
    assert answer.usage.prompt_tokens == len(tokenizer(prompt)["input_ids"])
    streamed: list[Any] = list(
        client.chat.completions.create(
            model=f"sf-ct-{job_id}", messages=messages, temperature=0, max_completion_tokens=20, stream=True
        )
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)
    assert text == REPLY
    assert [c.choices[0].finish_reason for c in streamed if c.choices][-1] == "stop"
