"""`python -m ct` and `python -m ct_cli`: the same program as the `ct` console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ct_core import __version__

CtRunner = Any


def _python_m(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CT_PLUGINS": "", "COLUMNS": "100"}
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=120)


@pytest.mark.parametrize("module", ["ct", "ct_cli"])
def test_python_m_runs_the_command_line(module: str, ct: CtRunner, server_args: list[str]) -> None:
    version = _python_m(module, "--version")
    assert version.returncode == 0, version
    assert version.stdout.strip() == __version__
    listed = _python_m(module, *server_args, "list")
    assert listed.returncode == 0, listed
    assert json.loads(listed.stdout) == ct(*server_args, "list").json
    # The same usage errors and exit codes as the console script.
    wrong = _python_m(module, "no-such-command")
    assert wrong.returncode == 2 and wrong.stderr.startswith("error: "), wrong


def test_python_m_ct_help_names_the_program_ct(ct_home: Path) -> None:
    shown = _python_m("ct", "--help")
    assert shown.returncode == 0, shown
    assert shown.stdout.lstrip().startswith("Usage: ct [GLOBAL OPTIONS] COMMAND"), shown.stdout[:200]
