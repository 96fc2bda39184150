"""State saved, the server killed and started again on its state dir, the state loaded into a new
training client of a new session, and training goes on from there."""

from __future__ import annotations

import signal
from typing import Any

import numpy as np
import pytest

BASE_MODEL = "Qwen/Qwen3-0.6B"


def batch(tokenizer: Any) -> list[Any]:
    from tinker import types

    tokens = tokenizer.encode("the state survives a restart.")
    return [
        types.Datum(
            model_input=types.ModelInput.from_ints(tokens[:-1]),
            loss_fn_inputs={"target_tokens": np.array(tokens[1:]), "weights": np.ones(len(tokens) - 1)},
        )
    ]


def loss(training: Any, data: list[Any]) -> float:
    return float(training.forward(data, "cross_entropy").result().metrics["loss:sum"])


def train(training: Any, data: list[Any], steps: int) -> None:
    from tinker import types

    for _ in range(steps):
        fb = training.forward_backward(data, "cross_entropy")
        training.optim_step(types.AdamParams(learning_rate=2e-2)).result()
        fb.result()


def test_state_survives_a_killed_server(local_server_factory: Any, tinker_env: Any) -> None:
    import tinker

    server = local_server_factory()
    tinker_env(server.base_url)
    with tinker.ServiceClient() as service:
        training = service.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
        data = batch(training.get_tokenizer())
        first = loss(training, data)
        train(training, data, 3)
        path = training.save_state("after-3").result().path
        saved = loss(training, data)
        assert saved < first

    server.stop(signal.SIGKILL)
    server.start()

    with tinker.ServiceClient() as service:
        resumed = service.create_training_client_from_state_with_optimizer(path).result()
        assert loss(resumed, data) == pytest.approx(saved, rel=1e-4)
        train(resumed, data, 3)
        assert loss(resumed, data) < saved
