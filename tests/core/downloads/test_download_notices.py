"""The notices of a logs or metrics download made while chunks may still be arriving.

While a job runs, and for two minutes after it ended, its newest chunks may not be uploaded yet: the
download says so in each sub-job's `warnings`, the training-metrics download included. The legacy
spellings of ended states (`done`, `canceled`) count as ended, like `cancelled` and `terminated`.

The server's own uploader is slowed to once an hour, so a run holds only the chunks a test stages in
its folder; the SDK lists and fetches them over the server's real artifact routes.
"""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ct_core import CortexTrainingClient
from ct_local.http.artifacts import run_root

DB = "CT_NOTICES_DB"
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}
LATE = "may still be uploading"


@pytest.fixture(scope="module")
def server(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(settings={"artifact_upload_interval_s": 3600})


@pytest.fixture
def job(server: Any) -> Iterator[tuple[CortexTrainingClient, str, Path]]:
    """(client, job id, run folder) of a running training job with nothing in its run yet."""
    schema = "S_" + uuid.uuid4().hex[:10].upper()
    with CortexTrainingClient(
        base_url=server.base_url, database=DB, schema=schema, poll_interval=0.02, poll_timeout=60
    ) as client:
        job_id = str(client.create_job_from_body({"sub_job_configs": [TRAINING]})["job_id"])
        client.wait_for_job(job_id)
        run = client.get_experiment_run(job_id)
        yield (
            client,
            job_id,
            run_root(Path(server.state_dir), run["experiment_name"], run["experiment_run_name"]),
        )


def _stage(root: Path, folder: str, sub: str, name: str, text: str) -> None:
    target = root / folder / sub / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(gzip.compress(text.encode()))


def _training_chunk(root: Path, sub: str) -> None:
    row = {"op": "fwd_bwd", "step": 1, "call": 1, "metrics": {"avg_loss": 1.5}}
    _stage(root, "_metrics", sub, "training.20260101-000000.a.gz", json.dumps(row) + "\n")


def test_training_metrics_of_a_running_job_warn_that_rows_may_still_be_uploading(
    job: tuple[CortexTrainingClient, str, Path], tmp_path: Path
) -> None:
    client, job_id, root = job
    sub = f"{job_id}:training:0"
    _training_chunk(root, sub)
    [entry] = client.download_training_metrics(job_id, tmp_path)
    assert entry["sub_job_id"] == sub and Path(entry["saved_path"]).read_text().count("\n") == 1
    assert any(LATE in warning for warning in entry.get("warnings", [])), entry


@pytest.mark.parametrize("status", ["done", "canceled"])
def test_legacy_ended_states_count_as_ended_in_the_notices(
    job: tuple[CortexTrainingClient, str, Path], server: Any, tmp_path: Path, status: str
) -> None:
    client, job_id, root = job
    sub = f"{job_id}:training:0"
    _stage(root, "_stdout", sub, "console.20260101-000000.a.gz", "hello\n")
    server.force_status(job_id, status)
    # Ended a moment ago: its last console chunks may still arrive.
    [console] = client.download_stdout_logs(job_id, tmp_path / "stdout")
    assert any(LATE in warning for warning in console.get("warnings", [])), console
    # An ended sub-job with a console and no metrics gets the ended job's notice at once.
    [metrics] = client.download_metrics(job_id, tmp_path / "metrics")
    assert metrics["sub_job_id"] == sub and metrics["saved_path"] is None
    assert any("no GPU metrics were saved" in warning for warning in metrics["warnings"]), metrics
