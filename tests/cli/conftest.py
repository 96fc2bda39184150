"""Fixtures for the end-to-end CLI tests: run the real `ct` console script against ct_local.

Every test gets an isolated HOME and config dirs (`ct_home`, from ct_local's pytest plugin), so
no login state or environment variable of the developer leaks in, and plugins are limited to the
ones a test asks for (`CT_PLUGINS` is empty unless the test sets it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import CtResult
from ct_testing.plugin import run_ct as _run_ct

DATABASE = "CT_CLI_DB"
#: Width the help golden file is rendered at (rich wraps to $COLUMNS).
HELP_COLUMNS = "100"

CtRunner = Callable[..., CtResult]


def run_ct(
    *args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 120
) -> CtResult:
    """The installed `ct`, no plugins unless ``env`` sets CT_PLUGINS, at the golden file's width."""
    return _run_ct(*args, input=input, env=env, columns=HELP_COLUMNS, timeout=timeout)


#: What rich reads to colour, size or animate its output whatever the stream is. From the caller's
#: shell (a CI job that forces colours, say) they would reach every `ct` these tests start: help
#: pages would carry escape codes and `ct --help` would hand its page to cyclopts.
FORCED_STYLING = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


@pytest.fixture(autouse=True)
def plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output as on a plain pipe, in-process and in every child, whatever the caller's shell sets."""
    for name in FORCED_STYLING:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ct(ct_home: Path) -> CtRunner:
    """Run `ct ARGS...` as a subprocess in the isolated home; returns a CtResult."""
    return run_ct


@pytest.fixture
def server_args(local_server: Any) -> list[str]:
    """Global options pointing `ct` at the session's local server."""
    return ["--base-url", local_server.base_url, "--database", DATABASE]


@pytest.fixture
def job_body() -> dict[str, Any]:
    """A create-job body with a training and a sampling sub-job on the local server's tiny model."""
    return {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": "Qwen/Qwen3-0.6B",
                "training_config": {
                    "optimizer": {"name": "AdamW", "lr": 0.0001},
                    "max_seq_len": 512,
                    "train_batch_size": 2,
                    "n_gpus": 1,
                },
            },
            {
                "job_type": "sampling",
                "model_name": "Qwen/Qwen3-0.6B",
                "inference_config": {"max_seq_len": 512, "n_gpus": 1},
            },
        ],
        "experiment_name": "cli-tests",
        "hardware": "H200",
    }


@pytest.fixture
def job_file(tmp_path: Path, job_body: dict[str, Any]) -> Path:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job_body), encoding="utf-8")
    return path


@pytest.fixture
def submitted_job(ct: CtRunner, server_args: list[str], job_file: Path) -> str:
    """A job created (and left running) on the session server; returns its id."""
    result = ct(*server_args, "submit", str(job_file), "--wait")
    assert result.returncode == 0, result
    return str(result.json["job_id"])
