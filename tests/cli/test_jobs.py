"""Every control-plane command of `ct`, run as a subprocess against a running ct_local server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

CtRunner = Any
DATABASE = "CT_CLI_DB"  # the database conftest's server_args use


def test_submit_prints_the_job_id_and_creates_the_job(
    ct: CtRunner, server_args: list[str], job_file: Path
) -> None:
    result = ct(*server_args, "submit", str(job_file))
    assert result.returncode == 0, result
    assert list(result.json) == ["job_id"]
    record = ct(*server_args, "get", "--raw", result.json["job_id"]).json
    assert [sub["job_type"] for sub in record["sub_jobs"]] == ["training", "sampling"]


def test_submit_from_stdin_with_wait_prints_the_running_record(
    ct: CtRunner, server_args: list[str], job_body: dict[str, Any]
) -> None:
    result = ct(*server_args, "submit", "-", "--wait", input=json.dumps(job_body))
    assert result.returncode == 0, result
    assert result.json["status"] == "running"
    assert "waiting until it is running" in result.stderr
    assert result.json["job_id"] in result.stderr


def test_output_is_sorted_json_pretty_or_compact(
    ct: CtRunner, server_args: list[str], submitted_job: str
) -> None:
    pretty = ct(*server_args, "get", "--raw", submitted_job)
    compact = ct("--compact", *server_args, "get", "--raw", submitted_job)
    assert pretty.returncode == compact.returncode == 0
    record = pretty.json
    assert pretty.stdout == json.dumps(record, indent=2, sort_keys=True) + "\n"
    assert compact.stdout == json.dumps(compact.json, separators=(",", ":"), sort_keys=True) + "\n"
    assert compact.json["job_id"] == record["job_id"]


def test_get_prints_a_create_body_for_a_job_like_it(
    ct: CtRunner, server_args: list[str], submitted_job: str, tmp_path: Path
) -> None:
    body = ct(*server_args, "get", submitted_job).json
    assert "job_id" not in body and "status" not in body
    assert body["experiment_name"].endswith("cli-tests")
    assert [sub["job_type"] for sub in body["sub_job_configs"]] == ["training", "sampling"]
    assert all("sub_job_id" not in sub for sub in body["sub_job_configs"])
    # The body is ready to resubmit as it is.
    again = tmp_path / "again.json"
    again.write_text(json.dumps(body))
    assert ct(*server_args, "submit", str(again), "--dry-run").returncode == 0
    created = ct(*server_args, "submit", str(again))
    assert created.returncode == 0, created


def test_wait_prints_the_running_record(ct: CtRunner, server_args: list[str], job_file: Path) -> None:
    job_id = ct(*server_args, "submit", str(job_file)).json["job_id"]
    result = ct(*server_args, "wait", job_id)
    assert result.returncode == 0, result
    assert result.json["job_id"] == job_id and result.json["status"] == "running"


def test_wait_on_a_failed_job_exits_1(
    ct: CtRunner, server_args: list[str], job_file: Path, local_server: Any
) -> None:
    job_id = ct(*server_args, "submit", str(job_file)).json["job_id"]
    local_server.force_status(job_id, "failed", reason="oom")
    result = ct(*server_args, "wait", job_id)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("error:") == 1 and "failed" in result.stderr


def test_list_is_oldest_first_and_filters_by_status(
    ct: CtRunner, server_args: list[str], job_file: Path, local_server: Any
) -> None:
    first = ct(*server_args, "submit", str(job_file), "--wait").json["job_id"]
    second = ct(*server_args, "submit", str(job_file), "--wait").json["job_id"]
    local_server.force_status(second, "failed", reason="test")
    jobs = ct(*server_args, "list").json["jobs"]
    ids = [job["job_id"] for job in jobs]
    assert ids.index(first) < ids.index(second)
    stamps = [job["created_at"] for job in jobs]
    assert stamps == sorted(stamps)

    running = ct(*server_args, "list", "--status", "running").json["jobs"]
    assert first in {job["job_id"] for job in running}
    assert {job["status"] for job in running} == {"running"}
    failed = ct(*server_args, "list", "--status", "failed").json["jobs"]
    assert [job["job_id"] for job in failed if job["job_id"] in (first, second)] == [second]
    both = ct(*server_args, "list", "--status", "RUNNING,failed").json["jobs"]
    assert {first, second} <= {job["job_id"] for job in both}
    assert ct(*server_args, "list", "--status", "placing").json["jobs"] == []


def test_list_all_uses_the_account_level_list(ct: CtRunner, local_server: Any, job_file: Path) -> None:
    other_db = ["--base-url", local_server.base_url, "--database", "CT_CLI_OTHER"]
    mine = ct(*other_db, "submit", str(job_file)).json["job_id"]
    newest = ct("--base-url", local_server.base_url, "--database", DATABASE, "submit", str(job_file)).json[
        "job_id"
    ]
    result = ct("--base-url", local_server.base_url, "--database", DATABASE, "list", "--all", "--limit", "2")
    assert result.returncode == 0, result
    jobs = result.json["jobs"]
    # The two newest across databases, printed in the one order of `ct list`: oldest first.
    assert [job["job_id"] for job in jobs] == [mine, newest]
    assert {job["database_name"] for job in jobs} == {DATABASE, "CT_CLI_OTHER"}
    # Command-level --database (after the command) filters the account list.
    filtered = ct(
        "--base-url",
        local_server.base_url,
        "--database",
        DATABASE,
        "list",
        "--all",
        "--database",
        "CT_CLI_OTHER",
        "--page-size",
        "1",
    ).json["jobs"]
    assert filtered and {job["database_name"] for job in filtered} == {"CT_CLI_OTHER"}
    assert mine in {job["job_id"] for job in filtered}
    stamps = [job["created_at"] for job in filtered]
    assert stamps == sorted(stamps)


def test_list_all_status_done_means_cancelled_or_terminated(
    ct: CtRunner, server_args: list[str], job_file: Path
) -> None:
    job_id = ct(*server_args, "submit", str(job_file), "--wait").json["job_id"]
    assert ct(*server_args, "cancel", job_id).returncode == 0
    jobs = ct(*server_args, "list", "--all", "--status", "done").json["jobs"]
    assert job_id in {job["job_id"] for job in jobs}
    assert {job["status"].lower() for job in jobs} <= {"cancelled", "cancelling", "terminated"}


def test_cancel_is_idempotent(ct: CtRunner, server_args: list[str], submitted_job: str) -> None:
    first = ct(*server_args, "cancel", submitted_job)
    assert first.returncode == 0, first
    assert first.json == {"cancelled": True, "job_id": submitted_job}
    assert ct(*server_args, "cancel", submitted_job).json == first.json


def test_cancel_a_failed_job_is_an_error(
    ct: CtRunner, server_args: list[str], submitted_job: str, local_server: Any
) -> None:
    local_server.force_status(submitted_job, "failed")
    result = ct(*server_args, "cancel", submitted_job)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ")


def test_checkpoints_and_delete_checkpoint(
    ct: CtRunner, server_args: list[str], submitted_job: str, local_server: Any
) -> None:
    assert ct(*server_args, "checkpoints", submitted_job).json == {"checkpoints": []}
    local_server.add_checkpoint(
        submitted_job, checkpoint_id="global_step3", global_steps=3, checkpoint_type="resumable"
    )
    listed = ct(*server_args, "checkpoints", submitted_job).json["checkpoints"]
    assert [c["checkpoint_id"] for c in listed] == ["global_step3"]
    deleted = ct(*server_args, "delete-checkpoint", submitted_job, "global_step3")
    assert deleted.returncode == 0, deleted
    assert deleted.json == {"checkpoint_id": "global_step3", "deleted": True, "job_id": submitted_job}
    assert ct(*server_args, "checkpoints", submitted_job).json == {"checkpoints": []}
    missing = ct(*server_args, "delete-checkpoint", submitted_job, "global_step3")
    assert missing.returncode == 1 and "404" in missing.stderr


def test_models_restores_the_envelope(ct: CtRunner, server_args: list[str], local_server: Any) -> None:
    result = ct(*server_args, "models")
    assert result.returncode == 0, result
    served = httpx.get(f"{local_server.base_url}/api/v2/cortex-training/models", timeout=10).json()
    assert result.json == served
    assert all("name" in model for model in result.json["models"])


@pytest.mark.parametrize("flag", ["--job", "--job-id"])
def test_global_job_option_is_accepted_before_the_command(
    ct: CtRunner, server_args: list[str], flag: str
) -> None:
    # No core command of this issue needs --job yet; it must still parse before any command.
    result = ct(*server_args, flag, "some-job", "models")
    assert result.returncode == 0, result
