"""Registering real Hugging Face models with ``ct local serve``: folders, a models folder, the
offline Hugging Face cache, and how the models route, ``ct models`` and ``/healthz`` show them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ct_testing.plugin import create_job, run_ct

#: Upper bound for a server that should refuse to start; only a hang reaches it.
START_LIMIT_S = 120.0


def _serve_until_exit(state_dir: Path, *args: str) -> tuple[int, str]:
    """Run ``ct local serve ARGS`` that is expected to stop by itself; its exit code and output."""
    command = [sys.executable, "-m", "ct_local", "serve", "--port", "0", "--state-dir", str(state_dir), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=START_LIMIT_S, check=False)
    return done.returncode, done.stdout + done.stderr


def _listed(server: Any) -> dict[str, dict[str, Any]]:
    with server.http() as http:
        answer = http.get("/api/v2/cortex-training/models")
    assert answer.status_code == 200, answer.text
    return {entry["name"]: entry for entry in answer.json()["models"]}


def _hub_cache(root: Path, repo_id: str, source: Path) -> Path:
    """Lay ``source`` out as the Hugging Face cache holds a downloaded snapshot of ``repo_id``."""
    repo = root / ("models--" + repo_id.replace("/", "--"))
    revision = "0123456789abcdef0123456789abcdef01234567"
    snapshot = repo / "snapshots" / revision
    shutil.copytree(source, snapshot)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    return snapshot


def test_models_route_says_which_model_has_real_weights_and_from_where(real_server, model_folders):
    listed = _listed(real_server)
    for name, folder in model_folders.items():
        entry = listed[f"tiny-{name}"]
        assert entry["weights"] == "huggingface"
        assert entry["path"] == str(folder.resolve())
        assert entry["architecture"] in {"Qwen3ForCausalLM", "LlamaForCausalLM"}
    # A plain --model NAME is not given here, so only the registered folders are served.
    assert set(listed) == {f"tiny-{name}" for name in model_folders}


def test_healthz_reports_the_device_and_dtype(real_server):
    with real_server.http() as http:
        health = http.get("/healthz").json()
    assert health["status"] == "ok"
    assert health["device"] == "cpu"
    assert health["dtype"] == "float32"


def test_a_plain_name_stays_the_tiny_model_beside_real_ones(local_server_factory, model_folders, tmp_path):
    models_dir = tmp_path / "models"
    shutil.copytree(model_folders["llama"], models_dir / "my-llama")
    (models_dir / "not-a-model").mkdir()
    server = local_server_factory(
        extra_args=["--model", "plain-name", "--models-dir", str(models_dir), "--dtype", "float32"]
    )
    listed = _listed(server)
    assert set(listed) == {"plain-name", "my-llama"}
    assert listed["plain-name"]["weights"] == "tiny"
    assert "path" not in listed["plain-name"]
    assert listed["my-llama"]["weights"] == "huggingface"
    assert listed["my-llama"]["path"] == str((models_dir / "my-llama").resolve())


def test_a_hub_name_is_found_in_the_offline_cache(local_server_factory, model_folders, tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    snapshot = _hub_cache(cache, "Org/Tiny-Qwen", model_folders["qwen3"])
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    server = local_server_factory(extra_args=["--model", "Org/Tiny-Qwen=Org/Tiny-Qwen"])
    entry = _listed(server)["Org/Tiny-Qwen"]
    assert entry["weights"] == "huggingface"
    assert entry["path"] == str(snapshot.resolve())
    assert entry["origin"] == "huggingface cache"


def test_ct_models_shows_the_weights(real_server, ct_home):
    result = run_ct("--base-url", real_server.base_url, "--database", "DB", "models")
    assert result.returncode == 0, result.stderr
    shown = {entry["name"]: entry for entry in json.loads(result.stdout)["models"]}
    assert {entry["weights"] for entry in shown.values()} == {"huggingface"}


def test_a_registered_model_is_accepted_by_job_create(real_server):
    with real_server.http() as http:
        prefix = real_server.prefix(schema="S_REGISTERED")
        job_id = create_job(http, prefix, [{"job_type": "training", "model_name": "tiny-llama"}])
    assert job_id


def test_a_folder_that_is_not_a_model_is_refused_at_start(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, output = _serve_until_exit(tmp_path / "state", "--model", f"broken={empty}")
    assert code == 2
    assert "config.json" in output


def test_a_hub_name_missing_from_the_cache_is_refused_without_downloading(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    code, output = _serve_until_exit(tmp_path / "state", "--model", "x=Org/Not-Cached")
    assert code == 2
    assert "Org/Not-Cached" in output and "cache" in output
