"""The help of `ct runs` and of its commands people type most, pinned by golden files.

Refresh them after an intended change to a help text with:

    CT_UPDATE_GOLDEN=1 .venv/bin/pytest ct_plugins/runs/tests/test_help_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ct_testing.plugin import run_ct

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "cli" / "golden"
#: Read at import: the `ct_home` fixture clears every CT_* variable before the test body runs.
UPDATE_GOLDEN = bool(os.environ.get("CT_UPDATE_GOLDEN"))
PAGES = {
    "runs-help.txt": ["runs", "--help"],
    "runs-start-help.txt": ["runs", "start", "--help"],
    "runs-logs-help.txt": ["runs", "logs", "--help"],
    "runs-deploy-help.txt": ["runs", "deploy", "--help"],
    "runs-chat-help.txt": ["runs", "chat", "--help"],
    "datasets-build-help.txt": ["datasets", "build", "--help"],
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_help_matches_the_golden_file(name: str, ct_home: Path) -> None:
    result = run_ct(*PAGES[name], plugins="runs")
    assert result.returncode == 0 and result.stderr == "", result
    text = "\n".join(line.rstrip() for line in result.stdout.splitlines()) + "\n"
    golden = GOLDEN / name
    if UPDATE_GOLDEN:
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8"), (
        f"ct {' '.join(PAGES[name])} changed; if intended, refresh with: "
        "CT_UPDATE_GOLDEN=1 .venv/bin/pytest ct_plugins/runs/tests/test_help_golden.py"
    )
