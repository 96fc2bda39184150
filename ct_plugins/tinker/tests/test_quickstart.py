"""The SDK's quick-start loop, unchanged, over a real `ct local serve`."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
import pytest

BASE_MODEL = "Qwen/Qwen3-0.6B"

TEXTS = ["ct trains a tiny model.", "the loss falls step by step."]
STEPS = 6
LEARNING_RATE = 2e-2


def datums(tokenizer: Any) -> list[Any]:
    from tinker import types

    out = []
    for text in TEXTS:
        tokens = tokenizer.encode(text)
        inputs, targets = tokens[:-1], tokens[1:]
        weights = np.ones(len(targets), dtype=np.float32)
        weights[0] = 0.0
        out.append(
            types.Datum(
                model_input=types.ModelInput.from_ints(inputs),
                loss_fn_inputs={"target_tokens": np.array(targets), "weights": weights},
            )
        )
    return out


def per_token_loss(result: Any, batch: list[Any]) -> float:
    logprobs = np.concatenate([out["logprobs"].to_numpy() for out in result.loss_fn_outputs])
    weights = np.concatenate([d.loss_fn_inputs["weights"].to_numpy() for d in batch])
    return float(-np.dot(logprobs, weights) / weights.sum())


def test_quickstart_sync(service_client: Any, local_server: Any) -> None:
    import tinker
    from tinker import types

    # A RestClient built from credentials is shared per (base URL, key): name both.
    rest = tinker.RestClient(base_url=local_server.base_url, api_key="tml-local")
    capabilities = rest.get_server_capabilities().result()
    assert BASE_MODEL in [m.model_name for m in capabilities.supported_models]
    training = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=8).result()
    tokenizer = training.get_tokenizer()
    assert tokenizer.decode(tokenizer.encode("hello")) == "hello"
    batch = datums(tokenizer)
    losses = []
    for _ in range(STEPS):
        fb = training.forward_backward(batch, "cross_entropy")
        step = training.optim_step(types.AdamParams(learning_rate=LEARNING_RATE))
        result = fb.result()
        step.result()
        loss = per_token_loss(result, batch)
        assert math.isclose(
            result.metrics["loss:sum"],
            loss * sum(d.loss_fn_inputs["weights"].to_numpy().sum() for d in batch),
            rel_tol=1e-4,
        )
        losses.append(loss)
    assert losses[-1] < losses[0] - 0.25, losses

    sampler = training.save_weights_and_get_sampling_client().result()
    prompt = types.ModelInput.from_ints(tokenizer.encode("ct trains"))
    sampled = sampler.sample(
        prompt, num_samples=2, sampling_params=types.SamplingParams(max_tokens=8, temperature=1.0, seed=3)
    ).result()
    assert len(sampled.sequences) == 2
    for seq in sampled.sequences:
        assert 0 < len(seq.tokens) <= 8
        assert seq.logprobs is not None and len(seq.logprobs) == len(seq.tokens)
        assert all(lp <= 0 for lp in seq.logprobs)

    full = tokenizer.encode(TEXTS[0])
    logprobs = sampler.compute_logprobs(types.ModelInput.from_ints(full)).result()
    assert logprobs[0] is None and len(logprobs) == len(full)
    # The sampler holds the trained weights: its scores are the training client's forward ones.
    forward = training.forward([batch[0]], "cross_entropy").result()
    trained = forward.loss_fn_outputs[0]["logprobs"].to_numpy()
    np.testing.assert_allclose(np.array(logprobs[1:], dtype=np.float64), trained, rtol=1e-3, atol=1e-3)


def test_quickstart_async(service_client: Any) -> None:
    asyncio.run(_quickstart_async(service_client))


async def _quickstart_async(service_client: Any) -> None:
    from tinker import types

    training = await service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4)
    tokenizer = training.get_tokenizer()
    batch = datums(tokenizer)
    losses = []
    for _ in range(STEPS):
        fb = training.forward_backward(batch, "cross_entropy")
        step = training.optim_step(types.AdamParams(learning_rate=LEARNING_RATE))
        result = await fb
        await step
        losses.append(per_token_loss(result, batch))
    assert losses[-1] < losses[0] - 0.25, losses
    sampler = await training.save_weights_and_get_sampling_client()
    sampled = await sampler.sample(
        types.ModelInput.from_ints(tokenizer.encode("ct")),
        num_samples=1,
        sampling_params=types.SamplingParams(max_tokens=4, seed=1),
    )
    assert len(sampled.sequences[0].tokens) > 0


def test_unsupported_loss_is_refused_in_the_sdk_error_shape(service_client: Any) -> None:
    import tinker

    training = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    batch = datums(training.get_tokenizer())
    with pytest.raises(tinker.RequestFailedError, match="not available through ct's Tinker API"):
        training.forward_backward(batch, "dro").result()


def test_the_sdk_is_told_to_use_its_rust_http_transport(local_server: Any) -> None:
    """The client configuration the SDK fetches on start turns its pyqwest transport on: every
    future the loop reads is a request, and httpx's pure-Python HTTP/1.1 costs the SDK's process
    more CPU per request than the server spends answering it (bench/tinker_loop.py)."""
    import httpx

    answer = httpx.post(
        f"{local_server.base_url}/api/v1/client/config",
        json={"sdk_version": "0.38.0"},
        headers={"X-API-Key": "tml-local"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    config = answer.json()
    assert config["use_pyqwest_transport"] is True
    assert config["pjwt_auth_enabled"] is False
