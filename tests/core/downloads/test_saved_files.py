"""Files a logs or metrics download writes: readable by their owner only, named by absolute paths.

A checkpoint download already does both. The console, the metrics and the execution logs are no
different: whatever folder the caller names (a relative one included), every `saved_path` in the
answer is absolute, and every file it names has mode 0600, a console rebuilt over an older, wider
copy included.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import run_ct

DOWNLOADS: dict[str, tuple[str, Callable[..., list[dict[str, Any]]]]] = {
    "stdout": ("stdout.log", lambda c, *a, **k: c.download_stdout_logs(*a, **k)),
    "metrics": ("gpu.jsonl", lambda c, *a, **k: c.download_metrics(*a, **k)),
    "training metrics": ("training.jsonl", lambda c, *a, **k: c.download_training_metrics(*a, **k)),
    "execution logs": ("execution.jsonl", lambda c, *a, **k: c.download_execution_logs(*a, **k)),
}


def _stage_everything(run_job: Any) -> None:
    run_job.stage("_stdout", "console.20260101-000000.a.gz", "hello\n")
    run_job.stage("_metrics", "gpu.20260101-000000.a.gz", json.dumps({"kind": "system"}) + "\n")
    row = {"op": "fwd_bwd", "step": 1, "call": 1, "metrics": {"avg_loss": 1.5}}
    run_job.stage("_metrics", "training.20260101-000000.a.gz", json.dumps(row) + "\n")
    execution = run_job.root / "_logs" / run_job.sub / "execution.jsonl"
    execution.parent.mkdir(parents=True, exist_ok=True)
    execution.write_text('{"message": "x"}\n')


@pytest.mark.parametrize("kind", list(DOWNLOADS))
def test_a_download_into_a_relative_folder_saves_private_files_named_absolutely(
    run_job: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    _stage_everything(run_job)
    monkeypatch.chdir(tmp_path)
    filename, download = DOWNLOADS[kind]
    [entry] = [e for e in download(run_job.client, run_job.job_id, "out") if e["saved_path"]]
    saved = Path(entry["saved_path"])
    assert saved.is_absolute(), entry
    assert saved == (tmp_path / "out" / run_job.sub / filename).resolve()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_a_console_rebuilt_over_an_older_wider_copy_becomes_private(run_job: Any, tmp_path: Path) -> None:
    run_job.stage("_stdout", "console.20260101-000000.a.gz", "hello\n")
    older = tmp_path / run_job.sub / "stdout.log"
    older.parent.mkdir(parents=True)
    older.write_text("from an older download\n")
    older.chmod(0o644)
    [entry] = run_job.client.download_stdout_logs(run_job.job_id, tmp_path)
    assert Path(entry["saved_path"]).read_text() == "hello\n"
    assert stat.S_IMODE(older.stat().st_mode) == 0o600


def test_ct_download_log_stdout_prints_an_absolute_path_to_a_private_file(
    run_job: Any, artifacts_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ct_home: Path
) -> None:
    run_job.stage("_stdout", "console.20260101-000000.a.gz", "hello\n")
    monkeypatch.chdir(tmp_path)
    args = ["--base-url", artifacts_server.base_url, "--database", run_job.client.database]
    args += ["--schema", run_job.client.schema]
    result = run_ct(*args, "download-log", run_job.job_id, "--log-type", "stdout", "--output-dir", "out")
    assert result.returncode == 0, result
    [entry] = result.json["logs"]
    saved = Path(entry["saved_path"])
    assert saved == (tmp_path / "out" / run_job.sub / "stdout.log").resolve()
    assert saved.read_text() == "hello\n" and stat.S_IMODE(saved.stat().st_mode) == 0o600
