"""`ct catalog job` for shapes no file holds (other hardware, shorter contexts), and `ct catalog smoke`:
every catalog job file through `ct submit --dry-run`'s checks, and for real on a local server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ct_core.catalog import load_catalog

SHIPPED = Path(__file__).resolve().parents[2] / "model-catalog"
ALL_FILES = sum(len(model.jobs) for model in load_catalog(SHIPPED))


def test_job_renders_other_hardware_from_the_file_of_the_same_shape(ct: Callable[..., Any]) -> None:
    args = ["catalog", "job", "Qwen/Qwen3-8B", "--context", "8k", "--mode", "lora", "--kind", "training"]
    on_h200 = ct(*args)
    on_b200 = ct(*args, "--hardware", "b200")
    assert on_h200.code == on_b200.code == 0, on_b200.stderr
    body = on_b200.json()
    assert body["hardware"] == "B200"
    assert body["sub_job_configs"] == on_h200.json()["sub_job_configs"]
    assert "rendered from 8k-H200-training-lora.json" in on_b200.stderr and "hardware B200" in on_b200.stderr
    # What is printed passes `ct submit --dry-run` unchanged.
    checked = ct("submit", "--dry-run", "-", stdin=on_b200.stdout)
    assert checked.code == 0, checked.stderr
    assert checked.json() == body


def test_job_renders_a_shorter_context_from_the_nearest_longer_file(ct: Callable[..., Any]) -> None:
    result = ct(
        "catalog",
        "job",
        "Qwen/Qwen3.6-35B-A3B",
        "--context",
        "64k",
        "--mode",
        "lora",
        "--kind",
        "training+sampling",
    )
    assert result.code == 0, result.stderr
    body = result.json()
    configs = [sub.get("training_config") or sub.get("inference_config") for sub in body["sub_job_configs"]]
    assert [config["max_seq_len"] for config in configs] == [65536, 65536]
    # Expert-parallel training reads its sequence length from prime_rl.seq_len: it follows.
    assert configs[0]["prime_rl"]["seq_len"] == 65536
    assert "rendered from 256k-H200-training+sampling-lora.json" in result.stderr
    checked = ct("submit", "--dry-run", "-", stdin=result.stdout)
    assert checked.code == 0, checked.stderr
    # --path names the file it comes from and what changes.
    path = ct(
        "catalog",
        "job",
        "Qwen/Qwen3.6-35B-A3B",
        "--context",
        "64k",
        "--mode",
        "lora",
        "--kind",
        "training+sampling",
        "--hardware",
        "B300",
        "--path",
    )
    assert path.code == 0, path.stderr
    assert path.json()["path"].endswith("256k-H200-training+sampling-lora.json")
    assert path.json()["changes"] == {"hardware": "B300", "max_seq_len": 65536}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # Longer than the model's limit: refused, naming the contexts that exist.
        (["Qwen/Qwen3-8B", "--context", "64k", "--kind", "training", "--mode", "lora"], "max_context 32k"),
        # A workflow the model does not have: no file to start from.
        (
            ["openai/gpt-oss-120b", "--kind", "training", "--mode", "lora"],
            "available: 128k-H200-sampling-full.json",
        ),
        (["Qwen/Qwen3-8B", "--hardware", "A100", "--kind", "training", "--mode", "lora"], "H200, B200, B300"),
    ],
)
def test_job_says_which_shapes_exist_when_the_rules_refuse(
    ct: Callable[..., Any], args: list[str], says: str
) -> None:
    result = ct("catalog", "job", *args)
    assert result.code == 1 and result.stdout == "", result
    assert says in result.stderr, result.stderr
    if "max_context" in says:
        assert "8k, 32k" in result.stderr


def test_smoke_dry_run_checks_every_job_file_and_sends_nothing(ct: Callable[..., Any]) -> None:
    result = ct("catalog", "smoke", "--dry-run")
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["dry_run"] is True
    assert summary["files"] == ALL_FILES and summary["passed"] == ALL_FILES and summary["failed"] == 0
    assert all(row["ok"] and row["job_id"] is None for row in summary["results"])


def test_smoke_dry_run_reports_a_broken_file(
    ct: Callable[..., Any], catalog_copy: Path, edit_json: Any
) -> None:
    broken = catalog_copy / "models" / "Qwen--Qwen3-0.6B" / "8k-H200-training-lora.json"
    zero = lambda body: body["sub_job_configs"][0]["training_config"]["ds_config"]["zero_optimization"]  # noqa: E731
    edit_json(broken, lambda body: zero(body).update(stage=3))
    result = ct("catalog", "smoke", "Qwen/Qwen3-0.6B", "--dry-run", "--catalog", str(catalog_copy))
    assert result.code == 1
    summary = result.json()
    assert summary["failed"] == 1 and summary["passed"] == summary["files"] - 1
    [bad] = [row for row in summary["results"] if not row["ok"]]
    assert bad["file"].endswith("8k-H200-training-lora.json") and "ZeRO" in bad["error"]


@pytest.fixture(scope="module")
def smoke_server(module_local_server_factory: Any) -> Any:
    """A server of this module's own: catalog jobs ask for 8 to 16 GPUs, and on the shared server
    other modules' running jobs may hold the account's GPUs, which would leave these pending."""
    return module_local_server_factory()


def test_smoke_submits_each_file_to_a_local_server_probes_it_and_cancels_it(
    ct: Callable[..., Any], ct_home: Path, smoke_server: Any
) -> None:
    local_server = smoke_server
    connection = ["--base-url", local_server.base_url, "--database", "CATALOG_SMOKE_DB"]
    result = ct(*connection, "catalog", "smoke", "Qwen/Qwen3-0.6B", "--context", "8k")
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["dry_run"] is False and summary["files"] == 5 and summary["passed"] == 5
    probes = {row["file"].rsplit("/", 1)[-1]: row["probes"] for row in summary["results"]}
    assert probes["8k-H200-sampling-full.json"] == ["generate"]
    assert probes["8k-H200-training-lora.json"] == ["fwd-bwd"]
    assert probes["8k-H200-training+sampling-full.json"] == ["fwd-bwd", "generate"]
    # Every job it made is cancelled again.
    with local_server.http() as http:
        listed = http.get(local_server.prefix(database="CATALOG_SMOKE_DB")).raise_for_status().json()
    made = {row["job_id"] for row in summary["results"]}
    statuses = {job["status"].lower() for job in listed["jobs"] if job["job_id"] in made}
    assert len(made) == 5 and statuses <= {"cancelled", "cancelling"}, listed
    assert json.dumps(summary).count("error") == 0
