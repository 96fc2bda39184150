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


def plain(entries: list[dict[str, Any]], deployment: str) -> list[dict[str, Any]]:
    """The entries without their notices (a running deployment's may say chunks are still on their
    way), after checking that every notice names the deployment and never its backing job."""
    job_id = deployment.removeprefix("sf-ct-")
    for entry in entries:
        for notice in entry.get("warnings", []):
            assert job_id not in notice.replace(deployment, ""), notice
    return [{key: value for key, value in entry.items() if key != "warnings"} for entry in entries]


def visible(folder: Path) -> list[str]:
    """The names a user sees in a folder (the hidden files beside them are ct's resume notes)."""
    return sorted(path.name for path in folder.iterdir() if not path.name.startswith("."))


def add_console_chunk(server: Any, job_id: str, index: int, text: str) -> None:
    """One more console chunk after those `stage` wrote, as an upload later in the job would add."""
    from ct_local.http.artifacts import run_root

    prefix = server.prefix(database=DB)
    run = httpx.get(f"{prefix}/{job_id}/experiment-run", timeout=30).raise_for_status().json()
    root = run_root(Path(server.state_dir), run["experiment_name"], run["experiment_run_name"])
    chunk = root / "_stdout" / f"{job_id}:sampling:0" / f"console.20260101-00000{index}.c{index}.gz"
    chunk.write_bytes(gzip.compress(text.encode()))


#: Fault rules that let every artifact GET through and count them, one rule per kind of file.
COUNTED_GETS = [
    {"path": rf"^/_artifacts/[^/]+/[^/]+/.*/{name}", "method": "GET", "action": "delay", "count": None}
    for name in (r"console\.", r"gpu\.", r"execution\.jsonl$")
]


def gets_seen(server: Any) -> dict[str, int]:
    answer = httpx.get(f"{server.base_url}/_ct/faults", headers=server.admin_headers, timeout=10.0)
    hits = [int(rule["hits"]) for rule in answer.raise_for_status().json()["rules"]]
    return dict(zip(("console", "gpu", "execution"), hits, strict=True))


def test_resume_fetches_only_what_is_new(quiet_server: Any, spec: dict[str, Any], tmp_path: Path) -> None:
    with CortexTrainingClient(base_url=quiet_server.base_url, database=DB, schema="PUBLIC") as client:
        deployments = model_deployments(client)
        deployment = deployments.create(spec)["deployment"]
        job_id = deployment.removeprefix("sf-ct-")
        stage(quiet_server, job_id, "first\n")
        out = tmp_path / "out"
        deployments.download_logs(deployment, out, log_type="stdout")
        deployments.download_logs(deployment, out)
        deployments.download_metrics(deployment, out)
        add_console_chunk(quiet_server, job_id, 2, "third\n")

        quiet_server.set_faults(*COUNTED_GETS)
        try:
            console = deployments.download_logs(deployment, out, log_type="stdout", resume=True)
            execution = deployments.download_logs(deployment, out, resume=True)
            metrics = deployments.download_metrics(deployment, out, resume=True)
            seen = gets_seen(quiet_server)
        finally:
            quiet_server.clear_faults()
        # Only the new console chunk was fetched; the unchanged execution log and metrics not at all.
        assert seen == {"console": 1, "gpu": 0, "execution": 0}
        assert (out / "stdout.log").read_text() == "first\nmore\nthird\n"
        assert plain(console, deployment) == [
            {"filename": "stdout.log", "saved_path": str(out / "stdout.log"), "chunk_count": 3}
        ]
        assert plain(execution, deployment) == [
            {"filename": "execution.jsonl", "saved_path": str(out / "execution.jsonl"), "unchanged": True}
        ]
        assert plain(metrics, deployment) == [
            {"filename": "gpu.jsonl", "saved_path": str(out / "gpu.jsonl"), "chunk_count": 1}
        ]
        assert visible(out) == ["execution.jsonl", "gpu.jsonl", "stdout.log"]
        for path in out.iterdir():
            assert path.is_file() and stat.S_IMODE(path.stat().st_mode) == 0o600, path
        deployments.drop(deployment)


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
        assert plain(execution, deployment) == [
            {"filename": "execution.jsonl", "saved_path": str(out / "execution.jsonl"), "unchanged": False}
        ]
        console = deployments.download_logs(deployment, out, log_type="stdout")
        assert plain(console, deployment) == [
            {"filename": "stdout.log", "saved_path": str(out / "stdout.log"), "chunk_count": 2}
        ]
        assert (out / "stdout.log").read_text() == "first\nmore\n"
        metrics = deployments.download_metrics(deployment, out)
        assert [entry["filename"] for entry in metrics] == ["gpu.jsonl"] and metrics[0]["chunk_count"] == 1
        assert visible(out) == ["execution.jsonl", "gpu.jsonl", "stdout.log"]
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


def test_cli_resume(run_ct: Any, quiet_server: Any, spec: dict[str, Any], tmp_path: Path) -> None:
    with CortexTrainingClient(base_url=quiet_server.base_url, database=DB, schema="PUBLIC") as client:
        deployment = model_deployments(client).create(spec)["deployment"]
    job_id = deployment.removeprefix("sf-ct-")
    stage(quiet_server, job_id, "cli\n")
    args = ("--base-url", quiet_server.base_url, "--database", DB, "model-deployment")
    folder = ("--output-dir", str(tmp_path))
    first = run_ct(*args, "logs", deployment, "--log-type", "stdout", *folder)
    assert first.returncode == 0, first
    add_console_chunk(quiet_server, job_id, 2, "later\n")
    again = run_ct(*args, "logs", deployment, "--log-type", "stdout", "--resume", *folder)
    assert again.returncode == 0, again
    assert again.json["files"][0]["chunk_count"] == 3
    assert (tmp_path / "stdout.log").read_text() == "cli\nmore\nlater\n"
    # A notice that suggests fetching again speaks of the option the command has.
    assert "resume=True" not in again.stdout + again.stderr
    metrics = run_ct(*args, "metrics", deployment, "--resume", *folder)
    assert metrics.returncode == 0, metrics
    assert metrics.json["files"][0]["chunk_count"] == 1
    execution = run_ct(*args, "logs", deployment, "--resume", *folder)
    assert execution.returncode == 0, execution
    assert [entry["filename"] for entry in execution.json["files"]] == ["execution.jsonl"]


def test_a_download_killed_mid_resume_loses_nothing(
    quiet_server: Any, spec: dict[str, Any], tmp_path: Path
) -> None:
    with CortexTrainingClient(base_url=quiet_server.base_url, database=DB, schema="PUBLIC") as client:
        deployments = model_deployments(client)
        deployment = deployments.create(spec)["deployment"]
        job_id = deployment.removeprefix("sf-ct-")
        stage(quiet_server, job_id, "kept\n")
        out = tmp_path / "out"
        deployments.download_logs(deployment, out, log_type="stdout")
        # Where a resume that was killed (SIGKILL: no clean-up ran) left the file and its manifest.
        left = out / ".ct-deployment-download" / f"{job_id}:sampling:0"
        left.mkdir(parents=True)
        for name in ("stdout.log", ".stdout.log.manifest.json"):
            (out / name).rename(left / name)
        add_console_chunk(quiet_server, job_id, 2, "new\n")
        quiet_server.set_faults(*COUNTED_GETS)
        try:
            deployments.download_logs(deployment, out, log_type="stdout", resume=True)
            seen = gets_seen(quiet_server)
        finally:
            quiet_server.clear_faults()
        assert seen["console"] == 1
        assert (out / "stdout.log").read_text() == "kept\nmore\nnew\n"
        assert not (out / ".ct-deployment-download").exists()
        deployments.drop(deployment)
