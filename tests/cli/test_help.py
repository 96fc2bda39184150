"""`ct --help` and start-up: the help snapshot, lazy imports, --version and shell completion.

Refresh the golden file after an intended change to the help text with:

    CT_UPDATE_GOLDEN=1 .venv/bin/pytest tests/cli/test_help.py -k golden
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ct_core import __version__

CtRunner = Any
GOLDEN_HELP = Path(__file__).with_name("golden") / "help.txt"
#: Modules `ct --help` must never import (DESIGN.md budgets): each costs seconds at start-up.
#: Read at import: the `ct_home` fixture clears every CT_* variable before the test body runs.
UPDATE_GOLDEN = bool(os.environ.get("CT_UPDATE_GOLDEN"))
HEAVY_MODULES = ("torch", "transformers", "snowflake.connector", "starlette", "uvicorn", "peft", "numpy")


def test_help_matches_the_golden_file(ct: CtRunner) -> None:
    result = ct("--help")
    assert result.returncode == 0, result
    assert result.stderr == ""
    text = "\n".join(line.rstrip() for line in result.stdout.splitlines()) + "\n"
    if UPDATE_GOLDEN:
        GOLDEN_HELP.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN_HELP.write_text(text, encoding="utf-8")
    assert text == GOLDEN_HELP.read_text(encoding="utf-8"), (
        "ct --help changed; if intended, refresh with: "
        "CT_UPDATE_GOLDEN=1 .venv/bin/pytest tests/cli/test_help.py -k golden"
    )


def test_help_lists_every_core_command_and_global_option(ct: CtRunner) -> None:
    from ct_cli.app import GLOBAL_VALUE_OPTIONS
    from ct_cli.commands import CORE_COMMANDS

    text = ct("--help").stdout
    for name, _, _ in CORE_COMMANDS:
        assert f" {name} " in text
    for option in (*GLOBAL_VALUE_OPTIONS, "--no-verify-ssl", "--compact", "--version"):
        assert option in text


@pytest.mark.parametrize("argv", [["--help"], ["list", "--help"], ["submit", "--help"], ["--version"]])
def test_startup_imports_no_heavy_module(argv: list[str], ct_home: Path) -> None:
    code = (
        "import sys\n"
        "from ct_cli.main import main\n"
        f"code = main({argv!r})\n"
        f"loaded = [m for m in {HEAVY_MODULES!r} if m in sys.modules]\n"
        "assert code == 0, code\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, "CT_PLUGINS": ""}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr


def test_importtime_of_ct_help_has_no_torch(ct_home: Path) -> None:
    # The same check through the console script's module, as `python -X importtime` reports it.
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ct_cli", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "CT_PLUGINS": ""},
        check=False,
    )
    assert result.returncode == 0
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "ct_cli.main" in imported
    assert not {name for name in imported if name.split(".")[0] in ("torch", "transformers")}
    assert "snowflake.connector" not in imported


def test_version(ct: CtRunner) -> None:
    result = ct("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == __version__


def test_both_console_scripts_are_the_same_cli(ct_home: Path) -> None:
    alias = Path(sys.executable).with_name("cortex-training")
    # A fixed width: the help is wrapped to $COLUMNS, which would otherwise come from the caller.
    env = {**os.environ, "COLUMNS": "100"}
    result = subprocess.run([str(alias), "--help"], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0
    assert "Usage: cortex-training [GLOBAL OPTIONS] COMMAND" in result.stdout


def test_command_help_shows_the_full_docstring(ct: CtRunner) -> None:
    result = ct("submit", "--help")
    assert result.returncode == 0
    assert "before anything is sent" in result.stdout  # from the docstring, not the one-line summary
    assert "--dry-run" in result.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script(ct: CtRunner, shell: str) -> None:
    result = ct("completion", shell)
    assert result.returncode == 0, result
    assert "submit" in result.stdout and "delete-checkpoint" in result.stdout
    assert "--base-url" in result.stdout


def test_completion_install_writes_the_script(ct: CtRunner, tmp_path: Path) -> None:
    target = tmp_path / "ct.bash"
    result = ct("completion", "bash", "--install", "--output", str(target))
    assert result.returncode == 0, result
    assert result.json == {"installed": True, "path": str(target), "shell": "bash"}
    assert "submit" in target.read_text()


def test_first_party_plugins_load_without_their_rules(ct_home: Path) -> None:
    # Loading the plugins happens on every start; their validators' modules (and the SDK's config
    # and retry code behind them) are imported only when a body is validated.
    code = (
        "import sys\n"
        "from ct_cli.main import main\n"
        "assert main(['--help']) == 0\n"
        "plugins = {'ct_lora.plugin', 'ct_dflash2.plugin', 'ct_router_replay.plugin',"
        " 'ct_model_deployment.plugin', 'ct_capacity.plugin'}\n"
        "assert plugins <= set(sys.modules), sorted(plugins - set(sys.modules))\n"
        "eager = {'ct_lora.config', 'ct_dflash2.rules', 'ct_router_replay.rules', 'ct_model_deployment.sdk',"
        " 'ct_core.config.typed', 'ct_core.http.retry'} & set(sys.modules)\n"
        "assert not eager, sorted(eager)\n"
    )
    env = {**os.environ, "CT_PLUGINS": "lora,dflash2,router-replay,model-deployment,capacity"}
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
