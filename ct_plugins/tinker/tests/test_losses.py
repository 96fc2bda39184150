"""Losses inside `ct local serve`: cross_entropy, importance_sampling and ppo, each as Tinker
defines it (a sum over every datum and target token), checked against a direct torch computation
on the same weights; custom losses through forward_backward_custom, negative gradient weights
included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

BASE_MODEL = "Qwen/Qwen3-0.6B"
TEXTS = ("reward the model.", "a second, longer rollout to weigh")
LEARNING_RATE = 2e-2
#: Offsets of the sampler's log-probabilities from the learner's: ratios exp(-offset) of about
#: 0.61, 0.9, 1.1 and 1.65, so that ppo's clipping bites on both sides.
OFFSETS = (0.5, 0.1, -0.1, -0.5)


def policy_batch(tokenizer: Any) -> list[Any]:
    from tinker import types

    batch = []
    for text in TEXTS:
        tokens = tokenizer.encode(text)
        n = len(tokens) - 1
        batch.append(
            types.Datum(
                model_input=types.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={
                    "target_tokens": np.array(tokens[1:]),
                    "logprobs": np.zeros(n, dtype=np.float32),  # replaced once the learner's are known
                    "advantages": np.linspace(-1.0, 1.5, n).astype(np.float32),
                },
            )
        )
    return batch


def learner_logprobs(training: Any, batch: list[Any]) -> list[np.ndarray]:
    """Each target's log-probability under the current weights (a forward pass, nothing trained)."""
    from tinker import types

    plain = [
        types.Datum(
            model_input=d.model_input,
            loss_fn_inputs={"target_tokens": d.loss_fn_inputs["target_tokens"]},
        )
        for d in batch
    ]
    result = training.forward(plain, "cross_entropy").result()
    return [out["logprobs"].to_numpy().astype(np.float64) for out in result.loss_fn_outputs]


def with_sampler_logprobs(batch: list[Any], learner: list[np.ndarray]) -> list[Any]:
    from tinker import types

    out = []
    for datum, lp in zip(batch, learner, strict=True):
        offsets = np.resize(np.array(OFFSETS), len(lp))
        inputs = dict(datum.loss_fn_inputs)
        inputs["logprobs"] = (lp + offsets).astype(np.float32)
        out.append(types.Datum(model_input=datum.model_input, loss_fn_inputs=inputs))
    return out


def torch_policy_loss(
    learner: torch.Tensor, sampler: torch.Tensor, advantages: torch.Tensor, loss_fn: str, bounds: tuple
) -> torch.Tensor:
    """Tinker's definition, written out: the ratio times the advantage (ppo: the smaller of it and
    the clipped ratio times the advantage), negated and summed."""
    ratio = torch.exp(learner - sampler)
    objective = ratio * advantages
    if loss_fn == "ppo":
        objective = torch.minimum(objective, torch.clamp(ratio, *bounds) * advantages)
    return -objective.sum()


def as_tensor(datum: Any, name: str) -> torch.Tensor:
    return torch.tensor(datum.loss_fn_inputs[name].to_numpy(), dtype=torch.float64)


def tokens_after_one_step(training: Any, batch: list[Any]) -> list[np.ndarray]:
    from tinker import types

    training.optim_step(types.AdamParams(learning_rate=LEARNING_RATE)).result()
    return learner_logprobs(training, batch)


@pytest.mark.parametrize(
    ("loss_fn", "config", "bounds"),
    [
        ("importance_sampling", None, None),
        ("ppo", None, (0.8, 1.2)),
        ("ppo", {"clip_low_threshold": 0.7, "clip_high_threshold": 1.3}, (0.7, 1.3)),
    ],
)
def test_policy_loss_matches_a_direct_torch_computation(
    service_client: Any, loss_fn: str, config: dict[str, float] | None, bounds: tuple | None
) -> None:
    """The loss and the per-token log-probabilities equal the torch computation on the learner's own
    log-probabilities; its gradient is the torch one: a cross-entropy whose weights are minus the
    torch loss's derivative by each log-probability, on a second client with the same start, lands
    on the same weights after one step."""
    from tinker import types

    policy = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    reference = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    batch = policy_batch(policy.get_tokenizer())
    learner = learner_logprobs(policy, batch)
    np.testing.assert_allclose(learner_logprobs(reference, batch)[0], learner[0], rtol=1e-6)
    batch = with_sampler_logprobs(batch, learner)

    result = policy.forward_backward(batch, loss_fn, config).result()

    expected = 0.0
    surrogate = []
    for datum, lp, out in zip(batch, learner, result.loss_fn_outputs, strict=True):
        np.testing.assert_allclose(out["logprobs"].to_numpy(), lp, rtol=1e-5, atol=1e-6)
        lp_t = torch.tensor(lp, requires_grad=True)
        loss = torch_policy_loss(
            lp_t, as_tensor(datum, "logprobs"), as_tensor(datum, "advantages"), loss_fn, bounds
        )
        loss.backward()
        expected += float(loss.detach())
        assert lp_t.grad is not None
        weights = (-lp_t.grad).numpy().astype(np.float32)
        surrogate.append(
            types.Datum(
                model_input=datum.model_input,
                loss_fn_inputs={"target_tokens": datum.loss_fn_inputs["target_tokens"], "weights": weights},
            )
        )
    assert result.metrics["loss:sum"] == pytest.approx(expected, rel=1e-4, abs=1e-5)
    if loss_fn == "ppo":
        # The clip bites: some weights are zero, the rest are not.
        flat = np.concatenate([d.loss_fn_inputs["weights"].to_numpy() for d in surrogate])
        assert (flat == 0).any() and (flat != 0).any()

    reference.forward_backward(surrogate, "cross_entropy").result()
    after_policy = tokens_after_one_step(policy, batch)
    after_reference = tokens_after_one_step(reference, batch)
    for a, b, before in zip(after_policy, after_reference, learner, strict=True):
        assert not np.allclose(a, before, atol=1e-4)  # the step moved the weights
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_policy_loss_inputs_are_checked(service_client: Any) -> None:
    import tinker
    from tinker import types

    training = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    tokens = training.get_tokenizer().encode("missing advantages")
    datum = types.Datum(
        model_input=types.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": np.array(tokens[1:]),
            "logprobs": np.full(len(tokens) - 1, -2.0, dtype=np.float32),
        },
    )
    with pytest.raises(tinker.RequestFailedError, match=r"needs loss_fn_inputs\.advantages") as info:
        training.forward_backward([datum], "importance_sampling").result()
    assert info.value.category == tinker.types.RequestErrorCategory.User
    with pytest.raises(tinker.RequestFailedError, match="not available through ct's Tinker API"):
        training.forward_backward([datum], "dro").result()


def test_cross_entropy_outputs_match_a_direct_computation(service_client: Any) -> None:
    """The SDK's loss:sum is sum(-logprob * weight) over every datum and token, negative weights
    included, and the elementwise losses are -logprob * weight, from the weights the step trains."""
    from tinker import types

    training = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    tokenizer = training.get_tokenizer()
    batch = []
    for text in ("first text", "a second, longer text"):
        tokens = tokenizer.encode(text)
        weights = np.linspace(-0.5, 2.0, len(tokens) - 1).astype(np.float32)
        batch.append(
            types.Datum(
                model_input=types.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={"target_tokens": np.array(tokens[1:]), "weights": weights},
            )
        )
    learner = learner_logprobs(training, batch)
    result = training.forward_backward(batch, "cross_entropy").result()
    total = 0.0
    for out, datum, lp in zip(result.loss_fn_outputs, batch, learner, strict=True):
        logprobs = out["logprobs"].to_numpy()
        weights = datum.loss_fn_inputs["weights"].to_numpy()
        np.testing.assert_allclose(logprobs, lp, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out["elementwise_loss"].to_numpy(), -logprobs * weights, rtol=1e-6)
        total += float(-(lp * weights).sum())
    assert result.metrics["loss:sum"] == pytest.approx(total, rel=1e-5)


def test_a_custom_loss_is_the_built_in_one_when_it_computes_the_same(service_client: Any) -> None:
    """forward_backward_custom: the SDK runs forward, differentiates the loss on the client and sends
    minus its gradient as cross-entropy weights (negative ones here). The importance-sampling loss
    written as a custom loss trains exactly like the built-in one, from the same start."""
    custom = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    built_in = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    batch = policy_batch(custom.get_tokenizer())
    batch = with_sampler_logprobs(batch, learner_logprobs(custom, batch))

    def importance_sampling(data: list[Any], logprobs: list[Any]) -> tuple[Any, dict[str, float]]:
        total = sum(
            torch_policy_loss(lp.double(), as_tensor(d, "logprobs"), as_tensor(d, "advantages"), "is", ())
            for d, lp in zip(data, logprobs, strict=True)
        )
        return total, {"custom_loss": float(total.detach())}

    out = custom.forward_backward_custom(batch, importance_sampling).result()
    reference = built_in.forward_backward(batch, "importance_sampling").result()
    assert out.metrics["custom_loss"] == pytest.approx(reference.metrics["loss:sum"], rel=1e-4, abs=1e-5)
    after_custom = tokens_after_one_step(custom, batch)
    after_built_in = tokens_after_one_step(built_in, batch)
    for a, b in zip(after_custom, after_built_in, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
