"""The LoRA workflow through the SDK against a local server: the same LoRA adapter on both sub-jobs,
train it, sync only the adapter, and generate with it."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import torch

from ct_core import wire
from ct_core.client import CortexTrainingClient
from ct_core.config.typed import SubJobConfig

MODEL = "Qwen/Qwen3-0.6B"
# The adapter shape of the contract's LoRA example, smaller: r 4 over the attention projections.
LORA_CONFIG = {
    "peft_type": "Lora",
    "r": 4,
    "lora_alpha": 8,
    "lora_dropout": 0.0,
    "bias": "none",
    "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
}
TEXT = b"xyzxyzxyzxyzxyzxyz"
PROMPT = list(b"xyzxy")
GREEDY = {"max_tokens": 6, "temperature": 0, "ignore_eos": True}


@pytest.fixture
def client(local_server: Any) -> Any:
    schema = "S_" + uuid.uuid4().hex[:10].upper()
    with CortexTrainingClient(base_url=local_server.base_url, database="DB", schema=schema) as sdk:
        yield sdk


def _frame() -> bytes:
    ids = torch.tensor([list(TEXT)], dtype=torch.long)
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    return wire.dumps({"args": (), "kwargs": {"input_ids": ids, "labels": labels}})


def _generate(client: Any, job_id: str) -> list[int]:
    result = client.poll_request(job_id, client.generate(job_id, prompts=[PROMPT], sampling_params=GREEDY))
    return list(result["results"][0]["token_ids"])


def test_create_train_sync_generate_with_lora(client: Any) -> None:
    training = SubJobConfig.training_job(
        model_name=MODEL,
        optimizer={"name": "AdamW", "lr": 2e-2},
        max_seq_len=64,
        train_batch_size=1,
        n_gpus=1,
        extra_training={"peft_config": dict(LORA_CONFIG)},
    )
    sampling = SubJobConfig.sampling_job(
        model_name=MODEL, max_seq_len=64, n_gpus=1, extra_sampling={"peft_config": dict(LORA_CONFIG)}
    )
    job_id = client.create_job(sub_jobs=[training, sampling])
    client.wait_for_job(job_id)
    training_id, sampling_id = f"{job_id}:training:0", f"{job_id}:sampling:0"
    # The lora plugin normalized the adapter identically on both sides.
    record = client.get_job(job_id)
    configs = {s["sub_job_id"]: s for s in record["sub_jobs"]}
    assert (
        configs[training_id]["training_config"]["peft_config"]
        == configs[sampling_id]["inference_config"]["peft_config"]
    )

    before = _generate(client, job_id)
    losses = []
    for _ in range(12):
        losses.append(client.poll_request(job_id, client.forward_backward(job_id, _frame()))["avg_loss"])
        client.poll_request(job_id, client.step(job_id, learning_rate=2e-2))
    assert losses[-1] < losses[0]

    request_id = client.weight_sync(
        job_id, source_sub_job_id=training_id, target_sub_job_ids=[sampling_id], weight_format="lora"
    )
    synced = client.poll_request(job_id, request_id)
    assert synced["weight_format"] == "lora"
    after = _generate(client, job_id)
    assert after != before
    assert set(after) <= set(b"xyz")
