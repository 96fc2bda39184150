"""`ct catalog` end to end through the real `ct` entry point, and into `ct submit`."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ct_cli import output
from ct_cli.commands import catalog as catalog_cmd
from ct_core.catalog import load_catalog

SHIPPED = Path(__file__).resolve().parents[2] / "model-catalog"
JOBS = [(job.model_name, job) for model in load_catalog(SHIPPED) for job in model.jobs]


def _job_args(job: Any) -> list[str]:
    return [
        "catalog",
        "job",
        job.model_name,
        "--context",
        job.context_label,
        "--hardware",
        job.hardware,
        "--mode",
        job.mode,
        "--kind",
        job.kind,
    ]


def test_list_prints_json_when_piped(ct: Callable[..., Any]) -> None:
    result = ct("catalog", "list", "--workflow", "rl")
    assert result.code == 0, result.stderr
    names = [row["name"] for row in result.json()["models"]]
    assert "Qwen/Qwen3.6-35B-A3B" in names and "openai/gpt-oss-120b" not in names
    row = next(r for r in result.json()["models"] if r["name"] == "Qwen/Qwen3.6-35B-A3B")
    assert row["architecture"] == "moe" and row["max_context"] == 262144 and row["hardware"] == ["H200"]


def test_list_draws_a_table_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    with output.using(output.Streams(stdout=out, stderr=io.StringIO())):
        catalog_cmd.app(["list", "--catalog", str(SHIPPED)], result_action="return_value")
    text = out.getvalue()
    assert "Qwen/Qwen3-8B" in text and "35B (3B active)" in text
    assert not text.lstrip().startswith("{")
    out = Tty()
    with output.using(output.Streams(stdout=out, stderr=io.StringIO())):
        catalog_cmd.app(["list", "--json", "--catalog", str(SHIPPED)], result_action="return_value")
    assert len(json.loads(out.getvalue())["models"]) == 10


def test_show(ct: Callable[..., Any]) -> None:
    result = ct("catalog", "show", "Qwen3.6-35B-A3B")
    assert result.code == 0, result.stderr
    shown = result.json()
    assert shown["name"] == "Qwen/Qwen3.6-35B-A3B" and shown["training_provider"] == "prime_rl"
    assert {job["file"] for job in shown["jobs"]} >= {"256k-H200-training+sampling-lora.json"}


def test_unknown_model_is_one_error_line(ct: Callable[..., Any]) -> None:
    result = ct("catalog", "show", "Llama/Llama-4")
    assert result.code == 1 and result.stdout == ""
    assert result.stderr.startswith("error: model 'Llama/Llama-4' is not in the catalog")


def test_ambiguous_job_lists_the_candidates(ct: Callable[..., Any]) -> None:
    result = ct("catalog", "job", "Qwen/Qwen3-8B", "--context", "8k")
    assert result.code == 1
    assert "5 job files of Qwen/Qwen3-8B match" in result.stderr
    assert "8k-H200-training+sampling-lora.json" in result.stderr


def test_job_prints_the_file_body(ct: Callable[..., Any]) -> None:
    args = ["catalog", "job", "Qwen/Qwen3-8B", "--context", "8k", "--hardware", "H200"]
    result = ct(*args, "--mode", "lora", "--kind", "training+sampling")
    assert result.code == 0, result.stderr
    path = SHIPPED / "models/Qwen--Qwen3-8B/8k-H200-training+sampling-lora.json"
    assert result.json() == json.loads(path.read_text())
    located = ct(*args, "--mode", "lora", "--kind", "training+sampling", "--path")
    assert Path(located.json()["path"]) == path


@pytest.mark.parametrize(("model", "job"), JOBS, ids=[f"{m}:{j.name}" for m, j in JOBS])
def test_job_pipes_into_submit_dry_run(ct: Callable[..., Any], model: str, job: Any) -> None:
    printed = ct(*_job_args(job))
    assert printed.code == 0, printed.stderr
    checked = ct("submit", "--dry-run", "-", stdin=printed.stdout)
    assert checked.code == 0, checked.stderr
    assert checked.json() == json.loads(job.path.read_text())


def test_validate_command(ct: Callable[..., Any], catalog_copy: Path, edit_json: Any) -> None:
    ok = ct("catalog", "validate")
    assert ok.code == 0, ok.stderr
    assert ok.json() == {"valid": True, "problems": [], "models": 10, "job_files": len(JOBS)}
    edit_json(catalog_copy / "models/Qwen--Qwen3-8B/model.json", lambda d: d.update(max_context=8192))
    bad = ct("catalog", "validate", str(catalog_copy))
    assert bad.code == 1
    report = bad.json()
    assert report["valid"] is False
    assert {p["field"] for p in report["problems"]} == {
        "sub_job_configs[0].training_config.max_seq_len",
        "sub_job_configs[0].inference_config.max_seq_len",
        "sub_job_configs[1].inference_config.max_seq_len",
    }
    assert "model-catalog/models/Qwen--Qwen3-8B/32k-H200-training-lora.json: sub_job_configs[0]" in bad.stderr
    assert bad.stderr.rstrip().endswith("error: model catalog invalid: 7 problem(s)")


def test_job_submits_and_runs_on_the_local_server(
    ct: Callable[..., Any], request: pytest.FixtureRequest
) -> None:
    """`ct catalog job ... | ct submit --wait -` creates a job on ct_local and waits until it runs."""
    try:
        request.getfixturevalue("ct_home")
        server = request.getfixturevalue("local_server")
    except pytest.FixtureLookupError:
        pytest.skip("ct_local's pytest plugin (local_server, ct_home fixtures) is not enabled yet")
    printed = ct(
        "catalog",
        "job",
        "Qwen/Qwen3-0.6B",
        "--context",
        "8k",
        "--mode",
        "lora",
        "--kind",
        "training+sampling",
    )
    assert printed.code == 0, printed.stderr
    connection = ["--base-url", server.base_url, "--database", "CATALOG_DB", "--schema", "PUBLIC"]
    created = ct(*connection, "submit", "--wait", "-", stdin=printed.stdout)
    assert created.code == 0, created.stderr
    record = created.json()
    assert str(record.get("status", "")).lower().removeprefix("job_state_") == "running"
    job_id = record.get("job_id") or record.get("id")
    assert job_id
    fetched = ct(*connection, "get", "--raw", str(job_id))
    assert fetched.code == 0, fetched.stderr
    assert "Qwen/Qwen3-0.6B" in fetched.stdout
