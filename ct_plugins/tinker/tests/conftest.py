"""Fixtures of the tinker plugin's tests: a real `ct local serve` and the real `tinker` SDK."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

BASE_MODEL = "Qwen/Qwen3-0.6B"


@pytest.fixture
def tinker_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Point the SDK at a server: `tinker_env(base_url, api_key)`; nothing else configures it."""

    def point(base_url: str, api_key: str = "tml-local") -> None:
        monkeypatch.setenv("TINKER_BASE_URL", base_url)
        monkeypatch.setenv("TINKER_API_KEY", api_key)
        monkeypatch.delenv("TINKER_CREDENTIAL_CMD", raising=False)

    return point


@pytest.fixture
def service_client(local_server: Any, tinker_env: Any) -> Iterator[Any]:
    import tinker

    tinker_env(local_server.base_url)
    with tinker.ServiceClient() as client:
        yield client


@pytest.fixture(scope="session")
def next_token_datum() -> Callable[[list[int]], Any]:
    """`next_token_datum(tokens)`: a cross-entropy Datum that predicts each token from those before
    it (the input is every token but the last, the targets every token but the first, weights 1)."""
    import numpy as np
    from tinker import types

    def make(tokens: list[int]) -> Any:
        # The SDK takes numpy arrays where its annotations name its own TensorData.
        inputs: dict[str, Any] = {"target_tokens": np.array(tokens[1:]), "weights": np.ones(len(tokens) - 1)}
        return types.Datum(model_input=types.ModelInput.from_ints(tokens[:-1]), loss_fn_inputs=inputs)

    return make
