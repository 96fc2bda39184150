"""`ct download-checkpoint` end to end: the real console script against ct_local (CLI-08, ART-24)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx


def _job_with_checkpoint(local_server: Any, database: str) -> str:
    prefix = local_server.prefix(database=database)
    body = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}
    job_id = httpx.post(prefix, json=body, timeout=30).raise_for_status().json()["job_id"]
    local_server.add_checkpoint(
        job_id, checkpoint_id="cp_cli", files={"model.safetensors": "w", "config.json": '{"b": 2}'}
    )
    return job_id


def test_download_checkpoint_prints_a_summary_and_progress(ct, server_args, local_server, tmp_path) -> None:
    job_id = _job_with_checkpoint(local_server, server_args[-1])
    folder = Path(local_server.state_dir) / "checkpoints" / job_id / "cp_cli"
    weights = os.urandom(1_500_000)
    (folder / "model.safetensors").write_bytes(weights)
    out = tmp_path / "ckpt"
    result = ct(*server_args, "download-checkpoint", job_id, "cp_cli", "--output-dir", str(out))
    assert result.returncode == 0, result
    summary = result.json
    assert summary["checkpoint_id"] == "cp_cli" and summary["job_id"] == job_id
    assert {f["filename"] for f in summary["files"]} == {"config.json", "model.safetensors"}
    assert (out / "model.safetensors").read_bytes() == weights
    # Progress is on stderr only; stdout is exactly one JSON document.
    assert "files 2/2" in result.stderr
    json.loads(result.stdout)


def test_include_and_missing_checkpoint(ct, server_args, local_server, tmp_path) -> None:
    job_id = _job_with_checkpoint(local_server, server_args[-1])
    out = tmp_path / "only-json"
    result = ct(
        *server_args,
        "--compact",
        "download-checkpoint",
        job_id,
        "cp_cli",
        "--output-dir",
        str(out),
        "--include",
        "*.json",
    )
    assert result.returncode == 0, result
    assert [f["filename"] for f in result.json["files"]] == ["config.json"]
    assert sorted(p.name for p in out.iterdir()) == ["config.json"]

    missing = ct(*server_args, "download-checkpoint", job_id, "cp_nope", "--output-dir", str(out))
    assert missing.returncode == 1
    assert missing.stdout == ""
    assert "error:" in missing.stderr and "cp_nope" in missing.stderr


def _stage_run(local_server: Any, database: str) -> tuple[str, Path]:
    """A job on the session server and its run folder, with two console chunks and one metrics row."""
    import gzip

    from ct_local.artifacts import run_root

    prefix = local_server.prefix(database=database, schema="ARTIFACTS")
    body = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}
    job_id = httpx.post(prefix, json=body, timeout=30).raise_for_status().json()["job_id"]
    run = httpx.get(f"{prefix}/{job_id}/experiment-run", timeout=30).raise_for_status().json()
    root = run_root(Path(local_server.state_dir), run["experiment_name"], run["experiment_run_name"])
    sub = f"{job_id}:training:9"
    for index, text in enumerate(["hello\n", "world\n"]):
        chunk = root / "_stdout" / sub / f"console.20260101-00000{index}.c{index}.gz"
        chunk.parent.mkdir(parents=True, exist_ok=True)
        chunk.write_bytes(gzip.compress(text.encode()))
    metrics = root / "_metrics" / sub / "gpu.20260101-000000.m.gz"
    metrics.parent.mkdir(parents=True, exist_ok=True)
    metrics.write_bytes(gzip.compress(b'{"kind": "system", "record_version": 3}\n'))
    (root / "_logs" / sub).mkdir(parents=True, exist_ok=True)
    (root / "_logs" / sub / "execution.jsonl").write_text('{"message": "x"}\n')
    return job_id, root


def test_download_log_and_metrics(ct, local_server, tmp_path) -> None:
    args = ["--base-url", local_server.base_url, "--database", "CT_CLI_DB", "--schema", "ARTIFACTS"]
    job_id, _ = _stage_run(local_server, "CT_CLI_DB")
    sub = f"{job_id}:training:9"
    # The session server stages the real sub-job's console too: name the staged one.
    stdout_run = ct(
        *args, "download-log", job_id, "--log-type", "stdout", "--output-dir", str(tmp_path), "--sub-job", sub
    )
    assert stdout_run.returncode == 0, stdout_run
    [entry] = stdout_run.json["logs"]
    assert Path(entry["saved_path"]).read_text() == "hello\nworld\n"
    # stderr is not a terminal here: one final line per sub-job, no bar redraws.
    assert f"stdout: [####################] 2/2 {sub}" in stdout_run.stderr
    assert "0/2" not in stdout_run.stderr

    execution = ct(*args, "download-log", job_id, "--output-dir", str(tmp_path), "--sub-job", sub)
    assert execution.returncode == 0, execution
    assert [e["filename"] for e in execution.json["logs"]] == ["execution.jsonl"]

    metrics = ct(
        *args, "download-metrics", job_id, "--output-dir", str(tmp_path), "--resume", "--sub-job", sub
    )
    assert metrics.returncode == 0, metrics
    assert metrics.json["training_metrics"] == []
    assert [e["sub_job_id"] for e in metrics.json["metrics"]] == [sub]
    assert (tmp_path / sub / "gpu.jsonl").read_text() == '{"kind": "system", "record_version": 3}\n'

    missing = ct(*args, "download-log", job_id, "--log-type", "stdout", "--sub-job", f"{job_id}:sampling:0")
    assert missing.returncode == 1 and "error:" in missing.stderr and sub in missing.stderr
