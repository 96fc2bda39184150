"""The capacity route names the real device when the server runs on one.

`ct_local.control.capacity.device_description` is the one place that describes it: nothing for
the CPU (and MPS), so the answer is the GPU accounting alone, as it always was; for a CUDA device,
its name and memory as torch reports them. The CUDA test runs wherever torch sees a GPU and is
skipped only where it sees none.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ct_core.control.shaping import CAPACITY_INT_KEYS
from ct_local.control import capacity

#: The documented keys of a capacity answer (without a breakdown), as the SDK reads them.
CAPACITY_KEYS = {"has_reservation", *CAPACITY_INT_KEYS}


def _capacity(server: Any) -> dict[str, Any]:
    answer = httpx.get(f"{server.prefix()}/capacity", timeout=30.0)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_a_device_that_is_not_a_gpu_is_described_as_nothing(device: str) -> None:
    assert capacity.device_description(device) is None


def test_on_the_cpu_the_answer_is_the_accounting_alone(local_server_factory: Any) -> None:
    server = local_server_factory(extra_args=["--device", "cpu"])
    assert set(_capacity(server)) == CAPACITY_KEYS


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.skipif(not _cuda_available(), reason="torch sees no CUDA device on this machine")
def test_on_a_cuda_device_the_answer_names_the_gpu(local_server_factory: Any) -> None:
    import torch

    expected = {
        "device": "cuda:0",
        "name": torch.cuda.get_device_name(0),
        "memory_bytes": int(torch.cuda.get_device_properties(0).total_memory),
        "count": torch.cuda.device_count(),
    }
    assert capacity.device_description("cuda:0") == expected
    server = local_server_factory(extra_args=["--device", "cuda"])
    answer = _capacity(server)
    assert answer["device"] == expected
    assert set(answer) == {*CAPACITY_KEYS, "device"}
