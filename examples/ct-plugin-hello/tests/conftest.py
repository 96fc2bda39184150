"""Fixtures for ct-plugin-hello's tests: ct's shared local-server fixtures and a `ct` runner.

`ct_testing.plugin` provides `local_server` (a real Cortex Training server on loopback, no
auth), `local_server_factory` and `ct_home`; pytest loads it on its own once the ct-testing
distribution is installed (a pytest11 entry point).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def run_ct(ct_home: Any) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `ct` (as `python -m ct_cli`, so the interpreter running the tests) with only this plugin."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CT_PLUGINS": "hello", "COLUMNS": "120"}
        return subprocess.run(
            [sys.executable, "-m", "ct_cli", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    return run
