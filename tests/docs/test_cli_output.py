"""docs/cli.md says what `ct` prints on stdout: one JSON document, except for the commands it lists.

These tests hold both halves to the code: ordinary commands run against a local server print exactly
one JSON document, the listed exceptions really print something else, and every command module that
writes stdout other than through `output.emit` is one the page lists.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import CT_SCRIPT

ROOT = Path(__file__).resolve().parents[2]
CLI_PAGE = ROOT / "docs" / "cli.md"

#: The modules that write stdout other than as one JSON document, and the commands of the page's
#: list they are.
NON_JSON_WRITERS = {
    "ct_cli/commands/completion.py": "ct completion SHELL",
    "ct_cli/commands/catalog.py": "ct catalog list",
    "ct_cli/commands/logs.py": "ct logs JOB_ID",
    "ct_cli/commands/generate.py": "ct generate --stream",
    "ct_cli/commands/tui.py": "ct tui",
    "ct_plugins/runs/ct_runs/cli.py": "ct runs logs --follow",
    "ct_plugins/model-deployment/ct_model_deployment/cli.py": "ct model-deployment chat --stream",
    "ct_plugins/capacity/ct_capacity/table.py": "ct capacity --table",
}
#: Modules whose rich console draws progress on stderr, never on stdout.
STDERR_CONSOLES = {"ct_cli/commands/_waiting.py", "ct_cli/commands/download_checkpoint.py"}
#: Writing stdout without `output.emit`: plain text lines, a rich console, a raw stream write.
_RAW_WRITE = re.compile(r"output\.emit_text\(|Console\(file=|\bout\.write\(|sys\.stdout\.write\(")


def _ct(local_server: Any, *args: str) -> subprocess.CompletedProcess[str]:
    """`ct` with every installed plugin (the `ct_home` fixture has cleared CT_PLUGINS)."""
    return subprocess.run(
        [CT_SCRIPT, "--base-url", local_server.base_url, "--database", "CT_DOCS_DB", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
        timeout=120,
        check=False,
    )


def _exceptions_section() -> str:
    text = CLI_PAGE.read_text(encoding="utf-8")
    start = text.index("stdout carries exactly one JSON document per command")
    end = text.index("\n* ", start)
    return text[start:end]


def test_the_page_lists_every_command_that_prints_otherwise() -> None:
    section = _exceptions_section()
    listed = {
        f"`{name}`"
        for name in (*NON_JSON_WRITERS.values(), "ct --version", "ct local serve", "ct runs serve")
    }
    missing = [name for name in sorted(listed) if name not in section]
    assert not missing, (
        f"docs/cli.md does not list {missing} among the commands that print no single JSON document"
    )


def test_only_the_listed_commands_write_stdout_other_than_as_json() -> None:
    sources = [*ROOT.glob("ct_cli/commands/*.py"), *ROOT.glob("ct_plugins/*/ct_*/**/*.py")]
    writers = {
        path.relative_to(ROOT).as_posix()
        for path in sources
        if "tests" not in path.parts and _RAW_WRITE.search(path.read_text(encoding="utf-8"))
    }
    unlisted = sorted(writers - set(NON_JSON_WRITERS) - STDERR_CONSOLES)
    assert not unlisted, (
        f"{unlisted} write stdout other than through output.emit: list the command in docs/cli.md's output "
        "conventions and in NON_JSON_WRITERS, or print one JSON document"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["list"],
        ["models"],
        ["plugins"],
        ["capacity"],
        ["catalog", "list"],
        ["lora", "config", "--r", "8", "--alpha", "16", "--target", "q_proj"],
        ["router-replay", "plan", "--experts", "8", "--seq-len", "64", "--moe-layers", "2", "--top-k", "2"],
        ["runs", "list"],
        ["model-deployment", "list"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_an_ordinary_command_prints_one_json_document(
    args: list[str], local_server: Any, ct_home: Path
) -> None:
    result = _ct(local_server, *args)
    assert result.returncode == 0, result
    assert result.stdout.endswith("\n"), result
    json.loads(result.stdout)  # one document: anything after it is "Extra data"


@pytest.mark.parametrize(
    "args", [["--version"], ["completion", "bash"], ["capacity", "--table"]], ids=" ".join
)
def test_a_listed_exception_prints_no_json_document(
    args: list[str], local_server: Any, ct_home: Path
) -> None:
    result = _ct(local_server, *args)
    assert result.returncode == 0, result
    assert result.stdout.strip(), result
    with pytest.raises(json.JSONDecodeError):
        json.loads(result.stdout)
