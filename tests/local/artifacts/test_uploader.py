"""The local server's uploader: training rows go out unless the sub-job opted out."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ct_local.app import create_app
from ct_local.http.artifacts import (
    ArtifactUploader,
    record_training_call,
    run_root,
    saves_training_metrics,
    staging_path,
)
from ct_local.settings import ServerSettings
from ct_local.storage.training_rows import TrainingRows


class _Jobs:
    """The two store reads the uploader makes, over a fixed list of running jobs."""

    def __init__(self, jobs: list[Any]) -> None:
        self.jobs = jobs

    def jobs_with_status(self, statuses: Any) -> list[Any]:
        return [job for job in self.jobs if job.status in statuses]

    def get_job(self, job_id: str) -> Any:
        return next((job for job in self.jobs if job.job_id == job_id), None)


def _job(job_id: str, training_config: dict[str, Any]) -> Any:
    sub = {"sub_job_id": f"{job_id}:training:0", "job_type": "training", "training_config": training_config}
    return SimpleNamespace(
        job_id=job_id,
        status="running",
        experiment_name="DB.S.EXP",
        experiment_run_name=f"RUN_{job_id}",
        sub_jobs=[sub],
    )


def test_training_rows_are_uploaded_unless_the_sub_job_opted_out(tmp_path: Path) -> None:
    keeps, opts_out = _job("keeps", {"n_gpus": 1}), _job("optsout", {"save_training_metrics": False})
    row = {"kind": "training", "record_version": 2, "op": "step", "step": 1, "metrics": {}}
    for job in (keeps, opts_out):
        staged = staging_path(tmp_path, job.job_id, job.sub_jobs[0]["sub_job_id"])
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_text(json.dumps(row) + "\n")
    state = SimpleNamespace(
        store=_Jobs([keeps, opts_out]),
        settings=SimpleNamespace(state_dir=tmp_path),
        training_rows=TrainingRows(),
    )
    ArtifactUploader(state, interval_s=60).upload_once()

    def training_chunks(job: Any) -> list[Path]:
        folder = run_root(tmp_path, job.experiment_name, job.experiment_run_name) / "_metrics"
        return sorted(folder.glob("*/training.*.gz"))

    [chunk] = training_chunks(keeps)
    assert json.loads(gzip.decompress(chunk.read_bytes())) == row
    assert training_chunks(opts_out) == []
    # System rows are still sampled for the sub-job that opted out of training rows.
    metrics = run_root(tmp_path, opts_out.experiment_name, opts_out.experiment_run_name) / "_metrics"
    assert list(metrics.glob("*/gpu.*.gz"))


def test_only_an_explicit_false_opts_out() -> None:
    assert saves_training_metrics({"training_config": {}})
    assert saves_training_metrics({"job_type": "sampling"})
    assert saves_training_metrics({"training_config": {"save_training_metrics": True}})
    assert not saves_training_metrics({"training_config": {"save_training_metrics": False}})


def test_training_row_counters_belong_to_one_app(tmp_path: Path) -> None:
    """Two apps in one process (as in the tests) count the same sub-job's rows apart, each under
    its own seq_epoch: nothing of one app's counting lives in a module global."""
    sub_job_id = "job1:training:0"
    request = SimpleNamespace(job_id="job1", sub_job_id=sub_job_id, kind="step", request_id="r1")
    staged = []
    for name in ("first", "second"):
        settings = ServerSettings(state_dir=tmp_path / name)
        _app, state = create_app(settings)
        try:
            record_training_call(state, request, {"global_steps": 1, "loss": 0.5})
            record_training_call(state, request, {"global_steps": 2, "loss": 0.25})
            path = staging_path(settings.state_dir, "job1", sub_job_id)
            staged.append([json.loads(line) for line in path.read_text().splitlines()])
        finally:
            state.store.close()
    first, second = staged
    assert [row["seq"] for row in first] == [row["seq"] for row in second] == [0, 1]
    assert [row["step"] for row in first] == [1, 2]
    assert first[0]["seq_epoch"] != second[0]["seq_epoch"]
    assert {row["seq_epoch"] for row in first} == {first[0]["seq_epoch"]}
