"""Tests of ct-plugin-hello. Run them with the plugin installed (`pip install -e .`), from this folder.

The hook tests register the module on a fresh plugin manager; the command-line tests run the real
`ct` and so also prove that the entry point is installed and found.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ct_hello
import pytest

from ct_core.client import CortexTrainingClient
from ct_core.plugins import new_plugin_manager, run_sub_job_validators

DATABASE = "HELLO_DB"


def job_body(training_gpus: int) -> dict[str, Any]:
    """A create-job body with one training and one sampling sub-job."""
    return {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": "Qwen/Qwen3-0.6B",
                "training_config": {
                    "optimizer": {"name": "AdamW", "lr": 1e-4},
                    "max_seq_len": 256,
                    "train_batch_size": 2,
                    "n_gpus": training_gpus,
                },
            },
            {
                "job_type": "sampling",
                "model_name": "Qwen/Qwen3-0.6B",
                "inference_config": {"max_seq_len": 256, "n_gpus": 1},
            },
        ]
    }


@pytest.fixture
def write_body(tmp_path: Path) -> Callable[[int], str]:
    def write(training_gpus: int) -> str:
        path = tmp_path / f"job-{training_gpus}.json"
        path.write_text(json.dumps(job_body(training_gpus)), encoding="utf-8")
        return str(path)

    return write


def _problems(sub_job: dict[str, Any]) -> list[str]:
    pm = new_plugin_manager()
    pm.register(ct_hello, name="hello")
    return run_sub_job_validators(sub_job, "sub_job_configs[0]", pm)


def test_validator_allows_the_cap_and_refuses_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ct_hello.MAX_GPUS_ENV, raising=False)
    assert _problems({"job_type": "training", "training_config": {"n_gpus": 8}}) == []
    assert _problems({"job_type": "sampling", "inference_config": {"n_gpus": 9}}) == [
        "sub_job_configs[0].inference_config.n_gpus: ct-hello allows at most 8 GPUs per sub-job, got 9"
    ]
    monkeypatch.setenv(ct_hello.MAX_GPUS_ENV, "2")
    assert _problems({"job_type": "training", "training_config": {"n_gpus": 3}}) == [
        "sub_job_configs[0].training_config.n_gpus: ct-hello allows at most 2 GPUs per sub-job, got 3"
    ]
    # Any spelling of the type the core accepts finds the right config block.
    assert _problems({"job_type": "JOB_TYPE_TRAINING", "training_config": {"n_gpus": 3}}) == [
        "sub_job_configs[0].training_config.n_gpus: ct-hello allows at most 2 GPUs per sub-job, got 3"
    ]
    # Shapes the core checks report are left to them.
    assert _problems({"job_type": "training", "training_config": "oops"}) == []


def test_the_command_group_is_listed_and_runs(run_ct: Any) -> None:
    listing = run_ct("--help")
    assert listing.returncode == 0, listing.stderr
    assert "Example plugin commands: greet, policy." in listing.stdout
    greet = run_ct("hello", "greet", "--name", "ct")
    assert greet.returncode == 0, greet.stderr
    assert json.loads(greet.stdout) == {"greeting": "hello, ct"}
    assert json.loads(run_ct("hello", "policy").stdout)["max_gpus_per_sub_job"] == 8


def test_submit_dry_run_runs_the_validator(run_ct: Any, write_body: Any) -> None:
    refused = run_ct("submit", write_body(16), "--dry-run")
    assert refused.returncode == 1
    assert "sub_job_configs[0].training_config.n_gpus: ct-hello allows at most 8 GPUs" in refused.stderr
    accepted = run_ct("submit", write_body(4), "--dry-run")
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["sub_job_configs"][0]["training_config"]["n_gpus"] == 4


def test_jobs_command_against_the_local_server(run_ct: Any, local_server: Any) -> None:
    with CortexTrainingClient(base_url=local_server.base_url, database=DATABASE, schema="PUBLIC") as client:
        client.create_job_from_body(job_body(2))
    result = run_ct("--base-url", local_server.base_url, "--database", DATABASE, "hello", "jobs")
    assert result.returncode == 0, result.stderr
    counted = json.loads(result.stdout)
    assert counted["jobs"] >= 1 and sum(counted["by_status"].values()) == counted["jobs"]
