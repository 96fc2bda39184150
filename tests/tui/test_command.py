"""`ct tui` as a command: the optional dependency, and connection errors like every other command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ct_testing.plugin import run_ct

from ct_cli.commands.tui import MISSING_TEXTUAL

#: Runs `ct ARGS` in a fresh interpreter where importing textual fails, as when the extra is not installed.
WITHOUT_TEXTUAL = """
import sys

class HideTextual:
    def find_spec(self, name, path=None, target=None):
        if name == "textual" or name.startswith("textual."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, HideTextual())
from ct_cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _without_textual(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CT_PLUGINS": ""}
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_TEXTUAL, *args], capture_output=True, text=True, env=env, check=False
    )


def test_tui_without_textual_says_how_to_install_it_and_exits_2(ct_home: Path) -> None:
    result = _without_textual("--base-url", "http://127.0.0.1:9", "tui")
    assert result.returncode == 2, result
    assert result.stderr.strip() == f"error: {MISSING_TEXTUAL}"
    assert "pip install 'ct[tui]'" in result.stderr


def test_help_of_tui_needs_no_textual(ct_home: Path) -> None:
    result = _without_textual("tui", "--help")
    assert result.returncode == 0, result
    assert "[JOB_ID]" in result.stdout and "--sub-job-id" in result.stdout


def test_tui_without_a_connection_fails_like_every_other_command(ct_home: Path) -> None:
    tui = run_ct("tui")
    listing = run_ct("list")
    assert tui.returncode == listing.returncode == 2, (tui, listing)
    assert tui.stderr == listing.stderr
    assert tui.stderr.startswith("error: ")


def test_the_app_is_not_imported_by_other_commands(ct_home: Path) -> None:
    code = (
        "import sys\n"
        "from ct_cli.main import main\n"
        "assert main(['--help']) == 0\n"
        "assert main(['tui', '--help']) == 0\n"
        "heavy = ('textual', 'ct_cli.tui')\n"
        "loaded = sorted(m for m in sys.modules if m in heavy or m.startswith(('textual.', 'ct_cli.tui.')))\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, "CT_PLUGINS": ""}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
