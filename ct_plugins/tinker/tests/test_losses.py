"""Losses: cross-entropy is computed through the data plane; importance_sampling and ppo cannot be
computed exactly there and are refused in the SDK's error shape, naming why."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

BASE_MODEL = "Qwen/Qwen3-0.6B"


def rl_datum(tokenizer: Any, text: str) -> Any:
    from tinker import types

    tokens = tokenizer.encode(text)
    n = len(tokens) - 1
    return types.Datum(
        model_input=types.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": np.array(tokens[1:]),
            "logprobs": np.full(n, -2.0, dtype=np.float32),
            "advantages": np.linspace(-1.0, 1.0, n).astype(np.float32),
        },
    )


@pytest.fixture
def training(service_client: Any) -> Any:
    return service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()


@pytest.mark.parametrize("loss_fn", ["importance_sampling", "ppo"])
def test_policy_losses_are_refused_with_the_reason(training: Any, loss_fn: str) -> None:
    import tinker

    batch = [rl_datum(training.get_tokenizer(), "reward the model.")]
    with pytest.raises(
        tinker.RequestFailedError, match=f"loss function '{loss_fn}' is not available"
    ) as info:
        training.forward_backward(batch, loss_fn).result()
    assert "cross-entropy mean" in str(info.value)
    assert info.value.category == tinker.types.RequestErrorCategory.User


def test_negative_cross_entropy_weights_are_refused(training: Any) -> None:
    import tinker
    from tinker import types

    tokens = training.get_tokenizer().encode("abcdef")
    weights = np.ones(len(tokens) - 1, dtype=np.float32)
    weights[1] = -0.5
    datum = types.Datum(
        model_input=types.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": np.array(tokens[1:]), "weights": weights},
    )
    with pytest.raises(tinker.RequestFailedError, match="negative weights are not supported"):
        training.forward_backward([datum], "cross_entropy").result()


def test_cross_entropy_outputs_match_a_direct_computation(training: Any) -> None:
    """The SDK's loss:sum is sum(-logprob * weight) over every datum and token, and the
    elementwise losses are -logprob * weight, from the same weights the step trains."""
    from tinker import types

    tokenizer = training.get_tokenizer()
    batch = []
    for text in ("first text", "a second, longer text"):
        tokens = tokenizer.encode(text)
        weights = np.linspace(0.0, 2.0, len(tokens) - 1).astype(np.float32)
        batch.append(
            types.Datum(
                model_input=types.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={"target_tokens": np.array(tokens[1:]), "weights": weights},
            )
        )
    result = training.forward_backward(batch, "cross_entropy").result()
    total = 0.0
    for out, datum in zip(result.loss_fn_outputs, batch, strict=True):
        logprobs = out["logprobs"].to_numpy()
        weights = datum.loss_fn_inputs["weights"].to_numpy()
        assert logprobs.shape == weights.shape and (logprobs < 0).all()
        np.testing.assert_allclose(out["elementwise_loss"].to_numpy(), -logprobs * weights, rtol=1e-6)
        total += float(-(logprobs * weights).sum())
    assert result.metrics["loss:sum"] == pytest.approx(total, rel=1e-5)


def test_a_custom_loss_trains_through_forward_and_a_linear_surrogate(training: Any) -> None:
    """forward_backward_custom: the SDK runs forward, differentiates the loss on the client and sends
    the gradient as cross-entropy weights; a loss whose gradient weights are non-negative trains."""
    from tinker import types

    tokens = training.get_tokenizer().encode("custom losses train too.")
    datum = types.Datum(
        model_input=types.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": np.array(tokens[1:]), "weights": np.ones(len(tokens) - 1)},
    )

    def focal_like(data: list[Any], logprobs: list[Any]) -> tuple[Any, dict[str, float]]:
        # -sum(logprob * (1 + p)) with p detached: gradient weights 1 + p, all positive.
        total = sum(-(lp * (1.0 + lp.detach().exp())).sum() for lp in logprobs)
        return total, {"custom": float(total.detach())}

    values = []
    for _ in range(4):
        out = training.forward_backward_custom([datum], focal_like).result()
        training.optim_step(types.AdamParams(learning_rate=2e-2)).result()
        values.append(out.metrics["custom"])
    assert values[-1] < values[0], values
