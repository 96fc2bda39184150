"""A dataset build or a run that ends badly is reported in words: the service's message first, then
its code in parentheses, never a Python repr of the error object (`{'code': ...}`).

The build fails on a real local server (a line of the uploaded file is not JSON) and is waited on
through the real `ct datasets build --wait`; a run fails on it too (every job it creates is
refused) and is waited on through `ct runs start --wait`. The local service words a run's error as
text; the error object the managed service sends is checked against the wording function itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ct_runs.cli import ended_line
from ct_runs.datasets import require_leak_free
from ct_runs.errors import RunsRefusal
from ct_runs.spec import check_dataset
from ct_testing.plugin import run_ct

DATABASE = "RUNS_DB"


def test_a_failed_build_leads_with_the_services_message(server: Any, ct_home: Path, tmp_path: Path) -> None:
    rows = tmp_path / "broken.jsonl"
    rows.write_text('{"text": "fine words here"}\nnot json at all\n', encoding="utf-8")
    result = run_ct(
        "--base-url", server.base_url, "--database", DATABASE,
        "datasets", "build", str(rows), "--wait", "--timeout", "120",
        plugins="runs",
    )  # fmt: skip
    assert result.returncode == 1, result
    assert "{'" not in result.stderr and '{"' not in result.stderr, result.stderr
    [line] = [line for line in result.stderr.splitlines() if " ended failed" in line]
    # The service's message comes right after the status, its code last.
    said = line.split(" ended failed: ", 1)[1]
    assert said.startswith("line 2") and said.endswith("(invalid_argument)"), line


def test_a_failed_run_leads_with_why(server: Any, ct_home: Path, tmp_path: Path, kit: Any) -> None:
    corpus = kit.write_corpus(tmp_path / "corpus.jsonl", kit.corpus_lines(rows=40))
    connection = ["--base-url", server.base_url, "--database", DATABASE]
    built = run_ct(*connection, "datasets", "build", str(corpus), "--wait", plugins="runs")
    assert built.returncode == 0, built
    dataset_id = json.loads(built.stdout)["dataset_id"]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(kit.small_spec(dataset_id)), encoding="utf-8")
    # Every job the run creates is refused, so the run gives up after its attempts without progress.
    server.set_faults(
        {"path": "/cortex-training/?$", "method": "POST", "action": "respond", "status": 404, "count": None}
    )
    try:
        result = run_ct(*connection, "runs", "start", str(spec), "--wait", "--timeout", "300", plugins="runs")
    finally:
        server.clear_faults()
    assert result.returncode == 1, result
    assert "{'" not in result.stderr, result.stderr
    [line] = [line for line in result.stderr.splitlines() if " ended failed" in line]
    assert line.split(" ended failed: ", 1)[1].startswith("the run's jobs failed"), line


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            {"status": "failed", "error": {"code": "internal", "message": "the trainer ran out of memory"}},
            "run run_1 ended failed: the trainer ran out of memory (internal)",
        ),
        (
            {"status": "failed", "error": "segment lost three times"},
            "run run_1 ended failed: segment lost three times",
        ),
        ({"status": "cancelled", "error": None}, "run run_1 ended cancelled"),
    ],
)
def test_a_runs_ending_is_worded_without_a_repr(record: dict[str, Any], expected: str) -> None:
    assert ended_line("run", "run_1", record) == expected


#: A failed build's error as the service records it.
BUILD_ERROR = {"code": "invalid_argument", "message": "line 2: not valid JSON"}


def test_a_run_refused_for_a_failed_build_quotes_the_builds_error_in_words() -> None:
    failed = {"dataset_id": "ds_x", "status": "failed", "violations": [], "error": BUILD_ERROR}
    for check in (require_leak_free, check_dataset):
        with pytest.raises(RunsRefusal) as caught:
            check(failed)
        assert caught.value.code == "failed_precondition"
        assert "{'" not in caught.value.message, caught.value.message
        assert "line 2: not valid JSON (invalid_argument)" in caught.value.message
