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
