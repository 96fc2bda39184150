"""`make demo` (python -m ct_local.demo) runs every step against a fresh local server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_demo_runs_end_to_end(ct_home: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ct_local.demo"],
        capture_output=True,
        text=True,
        env={**os.environ, "CT_PLUGINS": ""},
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for step in ("submit", "wait", "get", "list", "checkpoints", "cancel", "stopping the local server"):
        assert step in result.stderr
    # The training part: the demo itself fails when the loss does not fall or a reload does not
    # restore the saved weights; here the steps are checked to have run.
    for step in ("fwd-bwd", "step --lr", "loss per step:", "save a resumable checkpoint", "after the reload"):
        assert step in result.stderr
    assert "capacity" in result.stderr and "cp_" in result.stdout
    assert "is cancelled" in result.stderr
    assert '"cancelled": true' in result.stdout
