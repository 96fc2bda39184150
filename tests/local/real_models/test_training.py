"""Training sub-jobs on real Hugging Face models: full and LoRA, saves that plain transformers
loads, and the vocabulary check of the real model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ARCHITECTURES = ("qwen3", "llama")

TEXT = "the quick brown fox jumps over the lazy dog"
STEPS = 6
LR = 1e-2


def _training(architecture: str, **config: Any) -> dict[str, Any]:
    return {
        "job_type": "training",
        "model_name": f"tiny-{architecture}",
        "training_config": {"n_gpus": 1, "optimizer": {"name": "AdamW", "lr": LR}, **config},
    }


def _ids(tokenizer: Any) -> list[list[int]]:
    return [tokenizer(TEXT)["input_ids"]]


def _train(driver: Any, tokenizer: Any) -> tuple[float, float]:
    ids = _ids(tokenizer)
    first = driver.fwd_bwd(ids)
    driver.step()
    last = first
    for _ in range(STEPS - 1):
        last = driver.fwd_bwd(ids)
        driver.step()
    return first, last


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_full_fine_tuning_lowers_the_loss(driver, tokenizer, architecture):
    driver.start(_training(architecture))
    first, last = _train(driver, tokenizer)
    assert last < first


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_lora_on_all_linear_layers_lowers_the_loss(driver, tokenizer, architecture):
    peft = {"peft_type": "Lora", "r": 4, "lora_alpha": 8, "target_modules": "all-linear"}
    driver.start(_training(architecture, peft_config=peft))
    first, last = _train(driver, tokenizer)
    assert last < first


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_weights_only_checkpoint_loads_in_plain_transformers_with_the_same_logits(
    driver, tokenizer, architecture
):
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    peft = {"peft_type": "Lora", "r": 4, "lora_alpha": 8, "target_modules": "all-linear"}
    driver.start(_training(architecture, peft_config=peft))
    _train(driver, tokenizer)
    saved = driver.save("weights-only")
    folder = Path(saved["checkpoint_path"])
    model = AutoModelForCausalLM.from_pretrained(str(folder)).float().eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    # The tokenizer and its chat template travel with the weights.
    rendered = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert rendered == "<|start|>user\nhi<|end|>\n"
    ids = _ids(tokenizer)
    served = driver.forward(ids)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor(ids)).logits
    mine = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, torch.tensor(ids)[:, 1:, None])[..., 0]
    np.testing.assert_allclose(np.asarray(served), mine.numpy(), atol=1e-4)


def test_resumable_checkpoint_restores_weights_and_optimizer(driver, tokenizer):
    driver.start(_training("llama"))
    _train(driver, tokenizer)
    saved = driver.save("resumable")
    folder = Path(saved["checkpoint_path"])
    assert (folder / "optimizer.safetensors").is_file()
    assert (folder / "tokenizer.json").is_file()
    ids = _ids(tokenizer)
    before = driver.fwd_bwd(ids)
    driver.step()
    response = driver.http.post(
        f"{driver.url}/load",
        json={"source_job_id": driver.job_id, "checkpoint_id": _checkpoint_id(driver, folder)},
    )
    loaded = driver.result(response)
    assert loaded["loaded_optimizer_states"] is True
    assert driver.fwd_bwd(ids) == pytest.approx(before, abs=1e-6)


def _checkpoint_id(driver: Any, folder: Path) -> str:
    listed = driver.http.get(f"{driver.url}/checkpoints").json()["checkpoints"]
    assert len(listed) == 1, listed
    return str(listed[0]["checkpoint_id"])


def test_token_ids_outside_the_real_vocabulary_are_refused(driver, tokenizer):
    import torch

    driver.start(_training("qwen3"))
    vocab = len(tokenizer)
    assert vocab > 260  # above the tiny model's vocabulary, so the real size is what is checked
    inside = torch.tensor([[vocab - 1, 1, 2]])
    labels = torch.tensor([[1, 2, -100]])
    ok = driver.post_frame(
        "forward-backward", {"args": (), "kwargs": {"input_ids": inside, "labels": labels}}
    )
    assert driver.result(ok)["avg_loss"] > 0
    outside = torch.tensor([[vocab, 1, 2]])
    refused = driver.post_frame(
        "forward-backward", {"args": (), "kwargs": {"input_ids": outside, "labels": labels}}
    )
    assert refused.status_code == 422, refused.text
    assert f"[0, {vocab})" in refused.text
