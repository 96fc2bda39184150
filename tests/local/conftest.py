"""Helpers for the local server's HTTP tests: a unique schema per test and status polling."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from ct_testing.plugin import create_job, wait_for_job_status

# Upper bound on waiting for a lifecycle transition; only a hang should ever reach it.
WAIT_LIMIT_S = 30.0

TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-1.7B", "training_config": {"n_gpus": 1}}
SAMPLING = {"job_type": "sampling", "model_name": "Qwen/Qwen3-1.7B", "inference_config": {"n_gpus": 1}}


def _wait_for(client: httpx.Client, url: str, statuses: set[str]) -> dict[str, Any]:
    return wait_for_job_status(client, url, statuses, limit_s=WAIT_LIMIT_S)


def _create(client: httpx.Client, prefix: str, *sub_jobs: dict[str, Any], **fields: Any) -> str:
    return create_job(client, prefix, sub_jobs or (TRAINING,), **fields)


@pytest.fixture
def schema() -> str:
    """A schema name no other test uses, so tests sharing the session server do not see each other."""
    return "S_" + uuid.uuid4().hex[:10].upper()


@pytest.fixture
def client(local_server) -> Iterator[httpx.Client]:
    with local_server.http() as http:
        yield http


@pytest.fixture
def prefix(local_server, schema: str) -> str:
    return local_server.prefix(schema=schema)


@pytest.fixture(name="wait_for")
def wait_for_fixture():
    """``wait_for(client, url, {"running"})`` -> the job record once it reaches one of the statuses."""
    return _wait_for


@pytest.fixture(name="create")
def create_fixture():
    """``create(client, prefix, *sub_jobs, **body_fields)`` -> job id (asserts a 200 answer)."""
    return _create


@pytest.fixture
def training() -> dict[str, Any]:
    return dict(TRAINING)


@pytest.fixture
def sampling() -> dict[str, Any]:
    return dict(SAMPLING)
