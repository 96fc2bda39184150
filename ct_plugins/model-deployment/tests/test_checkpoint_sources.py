"""Deployments started from checkpoints on ct_local: what the server accepts and serves.

A checkpoint deployment must name a weights-only checkpoint, serves the model its source job trained
(another model_name is refused), and a LoRA job's checkpoint answers with the trained adapter.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import torch
from ct_model_deployment import model_deployments
from ct_model_deployment.errors import ModelDeploymentError

from ct_core import wire
from ct_core.client import CortexTrainingClient
from ct_core.config.typed import SubJobConfig
from ct_core.errors import APIError

DB = "DEP_DB"
SCHEMA = "PUBLIC"
BASE = "Qwen/Qwen3-0.6B"
# A small adapter over the attention projections, trained hard enough to change greedy answers.
LORA_CONFIG = {
    "peft_type": "Lora",
    "r": 4,
    "lora_alpha": 8,
    "lora_dropout": 0.0,
    "bias": "none",
    "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
}
TRAIN_TEXT = b"<assistant>: xyzxyzxyzxyzxyzxyz"
TRAIN_STEPS = 10
LEARNING_RATE = 2e-2
CHAT_TOKENS = 8


@pytest.fixture
def client(dep_server: Any) -> Iterator[CortexTrainingClient]:
    with CortexTrainingClient(
        base_url=dep_server.base_url, database=DB, schema=SCHEMA, poll_interval=0.02, poll_max_interval=0.05
    ) as made:
        yield made


def training_job(client: CortexTrainingClient, model: str = BASE, **extra: Any) -> str:
    sub_job = SubJobConfig.training_job(
        model_name=model,
        optimizer={"name": "AdamW", "lr": LEARNING_RATE},
        max_seq_len=64,
        train_batch_size=1,
        n_gpus=1,
        **extra,
    )
    return client.create_job(sub_jobs=[sub_job])


def checkpoint_spec(spec: dict[str, Any], job_id: str, checkpoint_id: str) -> dict[str, Any]:
    made = copy.deepcopy(spec)
    made["source"] = {"type": "checkpoint", "job_id": job_id, "checkpoint_id": checkpoint_id}
    return made


def deployment_body(model: str, job_id: str, checkpoint_id: str, **inference: Any) -> dict[str, Any]:
    """A raw create body; the plugin always sends the source job's model, so a mismatch needs one."""
    return {
        "idle_timeout_seconds": 0,
        "hardware": "H200",
        "sub_job_configs": [
            {
                "job_type": "sampling",
                "model_name": model,
                "inference_config": {"max_seq_len": 128, "n_gpus": 1, **inference},
                "source_checkpoint_info": {"source_job_id": job_id, "checkpoint_id": checkpoint_id},
            }
        ],
    }


def greedy_chat(record: dict[str, Any]) -> str:
    body = {
        "model": record["deployment"],
        "messages": [{"role": "user", "content": "xyz"}],
        "max_completion_tokens": CHAT_TOKENS,
        "temperature": 0,
    }
    answer = httpx.post(record["base_url"] + "/chat/completions", json=body, timeout=120)
    answer.raise_for_status()
    return str(answer.json()["choices"][0]["message"]["content"])


def test_a_deployment_serves_its_source_jobs_model_only(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    source = training_job(client, model="Qwen/Qwen3-1.7B")
    checkpoint = dep_server.add_checkpoint(
        source, checkpoint_type="weights-only", files={"config.json": "{}"}
    )["checkpoint_id"]
    evaluation = {
        "deployment_class": "EVALUATION",
        "num_replicas": 1,
        "vllm_config": {"tensor_parallel_size": 1, "max_model_len": 128},
    }
    with pytest.raises(APIError) as caught:
        client.create_job_from_body(deployment_body(BASE, source, checkpoint, **evaluation))
    assert caught.value.status_code == 400
    assert "does not match the model of source job" in str(caught.value) and "Qwen/Qwen3-1.7B" in str(
        caught.value
    )
    # The rule belongs to deployments: an ordinary sampling job is not held to it here.
    plain = client.create_job_from_body(deployment_body(BASE, source, checkpoint))["job_id"]
    client.cancel_job(plain)
    # Through the plugin the model is read from the source job, so the same checkpoint is accepted.
    deployments = model_deployments(client)
    created = deployments.create(checkpoint_spec(spec, source, checkpoint))
    assert created["model"] == "Qwen/Qwen3-1.7B"
    deployments.drop(created["deployment"])


def test_a_resumable_checkpoint_is_refused(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any]
) -> None:
    source = training_job(client)
    checkpoint = dep_server.add_checkpoint(source, checkpoint_type="resumable", files={"config.json": "{}"})
    with pytest.raises(ModelDeploymentError) as caught:
        model_deployments(client).create(checkpoint_spec(spec, source, checkpoint["checkpoint_id"]))
    text = str(caught.value)
    assert text.startswith("model deployment request failed with HTTP 400 (517602): ")
    assert "weights-only" in text


def _frame() -> bytes:
    ids = torch.tensor([list(TRAIN_TEXT)], dtype=torch.long)
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    return wire.dumps({"args": (), "kwargs": {"input_ids": ids, "labels": labels}})


@pytest.mark.slow
def test_a_lora_checkpoint_is_served_with_its_adapter(
    dep_server: Any, client: CortexTrainingClient, spec: dict[str, Any], tmp_path: Path, greedy_answer: Any
) -> None:
    from ct_local.model import tinylm

    job_id = training_job(client, extra_training={"peft_config": dict(LORA_CONFIG)})
    client.wait_for_job(job_id)
    for _ in range(TRAIN_STEPS):
        client.poll_request(job_id, client.forward_backward(job_id, _frame()))
        client.poll_request(job_id, client.step(job_id, learning_rate=LEARNING_RATE))
    saved = client.poll_request(job_id, client.save(job_id, checkpoint_type="weights-only"))
    checkpoint = client.checkpoint_id_from_save_result(saved)
    client.cancel_job(job_id)

    deployments = model_deployments(client)
    adapted = deployments.wait(
        deployments.create(checkpoint_spec(spec, job_id, checkpoint))["deployment"], timeout=60
    )
    base = deployments.wait(deployments.create(spec)["deployment"], timeout=60)
    try:
        served, plain = greedy_chat(adapted), greedy_chat(base)
    finally:
        deployments.drop(adapted["deployment"])
        deployments.drop(base["deployment"])

    # What the saved (merged) weights answer, computed here from the checkpoint as a user downloads it.
    client.download_checkpoint(job_id, checkpoint, tmp_path)
    model = tinylm.build_model(BASE)
    tinylm.load_weights(model, tmp_path)
    assert served == greedy_answer(model, [{"role": "user", "content": "xyz"}], CHAT_TOKENS)
    # The adapter changed what the model says: the base model's deployment answers differently.
    assert served != plain
