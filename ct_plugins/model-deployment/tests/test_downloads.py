"""Deployment logs and metrics: flat files in the output dir, mode 0600, replaced."""

from __future__ import annotations

import gzip
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest
from ct_model_deployment import model_deployments

from ct_core.client import CortexTrainingClient
from ct_core.errors import ValidationError

DB = "DEP_DB"


@pytest.fixture(scope="module")
def quiet_server(module_local_server_factory: Any) -> Any:
    """A server whose own artifact uploader never runs during a test: the chunks these tests stage
    are then the only ones, however long the machine takes between staging and downloading."""
    return module_local_server_factory(settings={"artifact_upload_interval_s": 3600})


def stage(server: Any, job_id: str, text: str) -> None:
    """Put console chunks, a metrics chunk and an execution log in the job's run folder."""
    from ct_local.http.artifacts import run_root

    prefix = server.prefix(database=DB)
    run = httpx.get(f"{prefix}/{job_id}/experiment-run", timeout=30).raise_for_status().json()
    root = run_root(Path(server.state_dir), run["experiment_name"], run["experiment_run_name"])
    sub = f"{job_id}:sampling:0"
    for index, line in enumerate([text, "more\n"]):
        chunk = root / "_stdout" / sub / f"console.20260101-00000{index}.c{index}.gz"
        chunk.parent.mkdir(parents=True, exist_ok=True)
        chunk.write_bytes(gzip.compress(line.encode()))
    metrics = root / "_metrics" / sub / "gpu.20260101-000000.m.gz"
    metrics.parent.mkdir(parents=True, exist_ok=True)
    metrics.write_bytes(gzip.compress(b'{"kind": "system"}\n'))
    (root / "_logs" / sub).mkdir(parents=True, exist_ok=True)
    (root / "_logs" / sub / "execution.jsonl").write_text(f'{{"message": "{text.strip()}"}}\n')


def test_logs_and_metrics_land_flat_and_private(
    quiet_server: Any, spec: dict[str, Any], tmp_path: Path
) -> None:
    with CortexTrainingClient(base_url=quiet_server.base_url, database=DB, schema="PUBLIC") as client:
        deployments = model_deployments(client)
        deployment = deployments.create(spec)["deployment"]
        job_id = deployment.removeprefix("sf-ct-")
        stage(quiet_server, job_id, "first\n")
        out = tmp_path / "out"

        execution = deployments.download_logs(deployment, out)
        assert execution == [{"filename": "execution.jsonl", "saved_path": str(out / "execution.jsonl")}]
        console = deployments.download_logs(deployment, out, log_type="stdout")
        assert console == [
            {"filename": "stdout.log", "saved_path": str(out / "stdout.log"), "chunk_count": 2}
        ]
        assert (out / "stdout.log").read_text() == "first\nmore\n"
        metrics = deployments.download_metrics(deployment, out)
        assert [entry["filename"] for entry in metrics] == ["gpu.jsonl"] and metrics[0]["chunk_count"] == 1
        assert sorted(path.name for path in out.iterdir()) == ["execution.jsonl", "gpu.jsonl", "stdout.log"]
        for path in out.iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600

        # A later download into the same folder replaces the earlier file.
        stage(quiet_server, job_id, "second\n")
        deployments.download_logs(deployment, out, log_type="stdout")
        assert (out / "stdout.log").read_text() == "second\nmore\n"
        with pytest.raises(ValidationError, match="log_type"):
            deployments.download_logs(deployment, out, log_type="stderr")
        deployments.drop(deployment)


def test_cli_logs_and_metrics(run_ct: Any, quiet_server: Any, spec: dict[str, Any], tmp_path: Path) -> None:
    with CortexTrainingClient(base_url=quiet_server.base_url, database=DB, schema="PUBLIC") as client:
        deployment = model_deployments(client).create(spec)["deployment"]
    stage(quiet_server, deployment.removeprefix("sf-ct-"), "cli\n")
    args = ("--base-url", quiet_server.base_url, "--database", DB, "model-deployment")
    logs = run_ct(*args, "logs", deployment, "--log-type", "stdout", "--output-dir", str(tmp_path))
    assert logs.returncode == 0, logs
    assert logs.json["files"][0]["filename"] == "stdout.log"
    metrics = run_ct(*args, "metrics", deployment, "--output-dir", str(tmp_path))
    assert metrics.returncode == 0, metrics
    assert metrics.json["files"][0]["filename"] == "gpu.jsonl"
    missing = run_ct(
        *args, "logs", "sf-ct-00000000-0000-4000-8000-000000000000", "--output-dir", str(tmp_path)
    )
    assert missing.returncode == 1 and "not found in DEP_DB.PUBLIC" in missing.stderr
