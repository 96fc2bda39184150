"""A dataset build or a run that ends badly is reported in words: the service's message first, then
its code in parentheses, never a Python repr of the error object (`{'code': ...}`).

The build fails on a real local server (a line of the uploaded file is not JSON) and is waited on
through the real `ct datasets build --wait`; a run's ending is worded by the same function, checked
here with the error object the managed service sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_runs.cli import ended_line
from ct_runs.datasets import require_leak_free
from ct_runs.errors import RunsRefusal
from ct_runs.spec import check_dataset
from ct_testing.plugin import run_ct

DATABASE = "RUNS_DB"


@pytest.fixture(scope="module")
def server(module_local_server_factory: Any, kit: Any) -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("CT_PLUGINS", raising=False)
        yield module_local_server_factory(settings=dict(kit.settings))


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
