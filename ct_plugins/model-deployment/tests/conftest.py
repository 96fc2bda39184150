"""Fixtures of the model-deployment plugin's tests: ct_local servers, specs, a `ct` runner.

The repository's tests/conftest.py enables ct_local's pytest plugin for a whole-suite run; this file
enables it too when only this folder is collected.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CT_SCRIPT = str(Path(sys.executable).with_name("ct"))
SHARED_FIXTURES = "ct_local.pytest_plugin"
DB = "DEP_DB"
SCHEMA = "PUBLIC"
MODEL = "Qwen/Qwen3-0.6B"
BASE_SPEC: dict[str, Any] = {
    "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
    "source": {"type": "base_model", "model": MODEL},
    "inference": {"max_seq_len": 256},
}


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(SHARED_FIXTURES):
        config.pluginmanager.import_plugin(SHARED_FIXTURES)


@pytest.fixture
def spec() -> dict[str, Any]:
    """A fresh copy of a valid one-GPU base-model spec."""
    return copy.deepcopy(BASE_SPEC)


class CtRun:
    """One finished `ct` process."""

    def __init__(self, completed: subprocess.CompletedProcess[str]) -> None:
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    def __repr__(self) -> str:
        return f"CtRun(rc={self.returncode}, stdout={self.stdout[-1500:]!r}, stderr={self.stderr[-1500:]!r})"


def ct_env() -> dict[str, str]:
    return {**os.environ, "CT_PLUGINS": "model-deployment", "COLUMNS": "120"}


@pytest.fixture
def run_ct(ct_home: Path) -> Callable[..., CtRun]:
    """Run the installed `ct` console script with an isolated home; only this plugin loads."""

    def run(*args: str, input: str | None = None) -> CtRun:
        completed = subprocess.run(
            [CT_SCRIPT, *args],
            input=input,
            capture_output=True,
            text=True,
            env=ct_env(),
            timeout=180,
            check=False,
        )
        return CtRun(completed)

    return run


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
    """A server whose jobs stay PENDING for an hour: for waits that time out or are interrupted."""
    yield module_local_server_factory(settings={"pending_delay_s": 3600})
