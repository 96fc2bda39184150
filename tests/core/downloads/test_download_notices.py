"""The notices of a logs or metrics download made while chunks may still be arriving.

While a job runs, and for two minutes after it ended, its newest chunks may not be uploaded yet: the
download says so in each sub-job's `warnings`, the training-metrics download included. The legacy
spellings of ended states (`done`, `canceled`) count as ended, like `cancelled` and `terminated`.

The server's own uploader is slowed to once an hour (`run_job`), so a run holds only the chunks a
test stages in its folder; the SDK lists and fetches them over the server's real artifact routes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

LATE = "may still be uploading"


def _training_chunk(run_job: Any) -> None:
    row = {"op": "fwd_bwd", "step": 1, "call": 1, "metrics": {"avg_loss": 1.5}}
    run_job.stage("_metrics", "training.20260101-000000.a.gz", json.dumps(row) + "\n")


def test_training_metrics_of_a_running_job_warn_that_rows_may_still_be_uploading(
    run_job: Any, tmp_path: Path
) -> None:
    _training_chunk(run_job)
    [entry] = run_job.client.download_training_metrics(run_job.job_id, tmp_path)
    assert entry["sub_job_id"] == run_job.sub
    assert Path(entry["saved_path"]).read_text().count("\n") == 1
    assert any(LATE in warning for warning in entry.get("warnings", [])), entry


@pytest.mark.parametrize("status", ["done", "canceled"])
def test_legacy_ended_states_count_as_ended_in_the_notices(
    run_job: Any, artifacts_server: Any, tmp_path: Path, status: str
) -> None:
    client, job_id = run_job.client, run_job.job_id
    run_job.stage("_stdout", "console.20260101-000000.a.gz", "hello\n")
    artifacts_server.force_status(job_id, status)
    # Ended a moment ago: its last console chunks may still arrive.
    [console] = client.download_stdout_logs(job_id, tmp_path / "stdout")
    assert any(LATE in warning for warning in console.get("warnings", [])), console
    # An ended sub-job with a console and no metrics gets the ended job's notice at once.
    [metrics] = client.download_metrics(job_id, tmp_path / "metrics")
    assert metrics["sub_job_id"] == run_job.sub and metrics["saved_path"] is None
    assert any("no GPU metrics were saved" in warning for warning in metrics["warnings"]), metrics
