"""Fixtures of the capacity plugin's tests: the shared ct_local fixtures and a `ct` subprocess runner.

The repository's tests/conftest.py enables ct_local's pytest plugin when the whole suite runs; this
file enables it too when only this folder is collected (pytest refuses `pytest_plugins` in a
conftest below the root, so it is registered here by hand when missing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CT_SCRIPT = str(Path(sys.executable).with_name("ct"))
SHARED_FIXTURES = "ct_local.pytest_plugin"


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(SHARED_FIXTURES):
        config.pluginmanager.import_plugin(SHARED_FIXTURES)


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


@pytest.fixture
def run_ct(ct_home: Path) -> Callable[..., CtRun]:
    """Run the installed `ct` console script with an isolated home; only this plugin loads."""

    def run(*args: str, input: str | None = None, plugins: str = "capacity") -> CtRun:
        env = {**os.environ, "CT_PLUGINS": plugins, "COLUMNS": "120"}
        completed = subprocess.run(
            [CT_SCRIPT, *args], input=input, capture_output=True, text=True, env=env, timeout=120, check=False
        )
        return CtRun(completed)

    return run
