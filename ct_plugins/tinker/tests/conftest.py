"""Fixtures of the tinker plugin's tests: a real `ct local serve` and the real `tinker` SDK."""

from __future__ import annotations

from collections.abc import Iterator
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
