"""Fixtures of the model-deployment plugin's tests: ct_local servers, specs, a `ct` runner.

The shared fixtures (servers, an isolated home) come from the ct_testing pytest plugin, which
pytest loads on its own.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import CtResult, ct_runner

DB = "DEP_DB"
SCHEMA = "PUBLIC"
MODEL = "Qwen/Qwen3-0.6B"
BASE_SPEC: dict[str, Any] = {
    "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
    "source": {"type": "base_model", "model": MODEL},
    "inference": {"max_seq_len": 256},
}


@pytest.fixture
def spec() -> dict[str, Any]:
    """A fresh copy of a valid one-GPU base-model spec."""
    return copy.deepcopy(BASE_SPEC)


@pytest.fixture
def run_ct(ct_home: Path) -> Callable[..., CtResult]:
    """Run the installed `ct` console script with an isolated home; only this plugin loads."""
    return ct_runner("model-deployment", timeout=180)


def _wait_for_status(client: Any, job_id: str, wanted: str) -> dict[str, Any]:
    for _ in range(1500):
        job = client.get_job(job_id)
        if job["status"] == wanted:
            return job
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} never reached {wanted}")


@pytest.fixture
def wait_for_status() -> Callable[[Any, str, str], dict[str, Any]]:
    """Poll the server's own lifecycle until a job reaches a status (no timing assertions)."""
    return _wait_for_status


@pytest.fixture(scope="module")
def dep_server(module_local_server_factory: Any) -> Iterator[Any]:
    """A fast server shared by a module: deployments become READY within a fraction of a second."""
    yield module_local_server_factory()


@pytest.fixture(scope="module")
def slow_server(module_local_server_factory: Any) -> Iterator[Any]:
    """A server whose jobs stay PENDING for an hour: for waits that time out or are interrupted.

    A job moved on by hand (force_status) stays placing or initializing just as long.
    """
    hour = 3600
    yield module_local_server_factory(
        settings={"pending_delay_s": hour, "placing_delay_s": hour, "initializing_delay_s": hour}
    )


@pytest.fixture(scope="module")
def lingering_cancel_server(module_local_server_factory: Any) -> Iterator[Any]:
    """A fast server whose cancelling jobs stay cancelling for an hour.

    A test that forces a job to cancelling then reads that status for sure: the lifecycle cannot
    finish the cancel first, however loaded the machine is.
    """
    yield module_local_server_factory(settings={"cancelling_delay_s": 3600})


def _greedy_answer(model: Any, messages: list[dict[str, str]], max_new: int) -> str:
    """What the tiny ``model`` answers ``messages`` greedily, computed plainly: the chat template's
    prompt, then the whole sequence through the model for every token, until the template's end of
    turn or end of sequence. An independent reference for what a deployment serves."""
    import torch

    from ct_core import chat_template

    ids = chat_template.prompt_ids(messages)
    out: list[int] = []
    model.eval()
    with torch.no_grad():
        for _ in range(max_new):
            token = int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
            if token in chat_template.STOP_IDS:
                break
            ids.append(token)
            out.append(token)
    return bytes(t for t in out if t < chat_template.BYTE_TOKENS).decode("utf-8", errors="replace")


@pytest.fixture
def greedy_answer() -> Callable[[Any, list[dict[str, str]], int], str]:
    """``greedy_answer(model, messages, max_new)``: the reference greedy answer of a tiny model."""
    return _greedy_answer
