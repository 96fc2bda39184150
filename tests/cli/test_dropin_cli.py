"""What a user of the reference CLI meets when moving to `ct`: the real console script on ct_local.

Covers `ct logs JOB_ID` (positional job, the training sub-job picked on a job with several, the
download-log pointer once a followed job ends), a flat token-id prompt counted as one prompt,
hints that name what is missing, CLI words (not SDK ones) in download notices, no `.lock` files
left behind, clear refusals of removed reference forms, and the one version source.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest
from ct_testing.plugin import CT_SCRIPT

CtRunner = Any
ROOT = Path(__file__).resolve().parents[2]
#: A poll interval short enough that `--follow` notices the end of a job at once.
FAST_POLL = ["--poll-interval", "0.05"]


# --- ct logs JOB_ID -----------------------------------------------------------------------------


def test_logs_takes_the_job_id_as_an_argument(
    ct: CtRunner, server_args: list[str], submitted_job: str
) -> None:
    sub = f"{submitted_job}:training:0"
    result = ct(*server_args, "logs", submitted_job, "--sub-job-id", sub, "--max-lines", "2")
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert 0 < len(lines) <= 2 and all(line[:4].isdigit() for line in lines)
    # The older spelling stays: the global --job and --sub-job.
    legacy = ct(*server_args, "--job", submitted_job, "logs", "--sub-job", sub, "--max-lines", "2")
    assert legacy.returncode == 0, legacy
    assert legacy.stdout.splitlines() == lines


def test_logs_on_a_job_with_several_sub_jobs_reads_the_training_one(
    ct: CtRunner, server_args: list[str], submitted_job: str
) -> None:
    result = ct(*server_args, "logs", submitted_job, "--max-lines", "2")
    assert result.returncode == 0, result
    assert result.stdout.strip()
    assert f"reading the training sub-job {submitted_job}:training:0" in result.stderr
    assert "--sub-job-id" in result.stderr


def test_logs_on_an_ended_job_points_at_the_saved_console(
    ct: CtRunner, server_args: list[str], submitted_job: str, local_server: Any
) -> None:
    from ct_testing.plugin import wait_for_job_status

    assert ct(*server_args, "cancel", submitted_job).returncode == 0
    with local_server.http() as http:
        url = f"{local_server.prefix(database=server_args[3])}/{submitted_job}"
        wait_for_job_status(http, url, {"cancelled"})
    result = ct(*server_args, "logs", submitted_job)
    assert result.returncode == 1, result
    assert f"ct download-log {submitted_job} --log-type stdout" in result.stderr
    assert "several sub-jobs" not in result.stderr and "download_stdout_logs" not in result.stderr


def test_logs_refuses_two_different_jobs(ct: CtRunner, server_args: list[str], submitted_job: str) -> None:
    result = ct(*server_args, "--job", "another-job", "logs", submitted_job)
    assert result.returncode == 2, result
    assert "another-job" in result.stderr and submitted_job in result.stderr


def test_logs_without_a_job_says_where_it_goes(ct: CtRunner, server_args: list[str]) -> None:
    result = ct(*server_args, "logs")
    assert result.returncode == 2, result
    assert "ct logs JOB_ID" in result.stderr


def test_logs_help_shows_the_job_argument(ct: CtRunner) -> None:
    result = ct("logs", "--help")
    assert result.returncode == 0, result
    assert "logs JOB_ID" in result.stdout.splitlines()[0]
    assert "--sub-job-id" in result.stdout


def test_logs_follow_ends_with_the_download_log_pointer_when_the_job_ends(
    ct: CtRunner, server_args: list[str], submitted_job: str
) -> None:
    command = [CT_SCRIPT, *server_args, *FAST_POLL, "logs", submitted_job, "--follow"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_ct_env()
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # the stream has read from the job: its end ends the command
        assert first[:4].isdigit(), first
        cancelled = ct(*server_args, "cancel", submitted_job)
        assert cancelled.returncode == 0, cancelled
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert f"ct download-log {submitted_job} --log-type stdout" in stderr
    assert "download_stdout_logs" not in stderr


def _ct_env() -> dict[str, str]:
    import os

    return {**os.environ, "CT_PLUGINS": "", "COLUMNS": "100"}


# --- generate: a flat token-id prompt --------------------------------------------------------------


@pytest.fixture
def sampling_job(local_server: Any) -> tuple[list[str], str]:
    """Global options and the id of a running job with one sampling sub-job (short window)."""
    from ct_testing.plugin import create_job, wait_for_job_status

    database = "CT_CLI_GEN"
    with local_server.http() as http:
        prefix = local_server.prefix(database=database)
        sampling = {
            "job_type": "sampling",
            "model_name": "Qwen/Qwen3-0.6B",
            "inference_config": {"max_seq_len": 64, "n_gpus": 1},
        }
        job_id = create_job(http, prefix, [sampling])
        wait_for_job_status(http, f"{prefix}/{job_id}", {"running"})
    return ["--base-url", local_server.base_url, "--database", database, *FAST_POLL], job_id


def test_a_flat_token_id_prompt_is_one_prompt(ct: CtRunner, sampling_job: tuple[list[str], str]) -> None:
    args, job_id = sampling_job
    request = {"prompts": [72, 105, 33], "sampling_params": [{"max_tokens": 2, "temperature": 0}]}
    result = ct(*args, "--job", job_id, "generate", "-", input=json.dumps(request))
    assert result.returncode == 0, result
    assert result.json["prompt_count"] == 1
    [only] = result.json["result"]["results"]
    assert len(only["token_ids"]) == 2


def test_generate_takes_sub_job_id_as_well_as_sub_job(
    ct: CtRunner, sampling_job: tuple[list[str], str]
) -> None:
    args, job_id = sampling_job
    request = {"prompts": ["Hi"], "sampling_params": {"max_tokens": 1}}
    for flag in ("--sub-job-id", "--sub-job"):
        result = ct(
            *args, "--job", job_id, "generate", "-", flag, f"{job_id}:sampling:0", input=json.dumps(request)
        )
        assert result.returncode == 0, result
        assert result.json["prompt_count"] == 1


# --- hints name what is missing ---------------------------------------------------------------------


def test_load_of_a_missing_checkpoint_says_the_checkpoint_was_not_found(
    ct: CtRunner, server_args: list[str], submitted_job: str
) -> None:
    result = ct(*server_args, "--job", submitted_job, "load", "cp_nope")
    assert result.returncode == 1, result
    hint = _hint(result.stderr)
    assert "checkpoint cp_nope was not found" in hint and f"ct checkpoints {submitted_job}" in hint
    assert "check the job id" not in result.stderr


def test_load_from_a_missing_source_job_names_the_source_job(
    ct: CtRunner, server_args: list[str], submitted_job: str
) -> None:
    result = ct(*server_args, "--job", submitted_job, "load", "cp_nope", "--source-job-id", "no-such-source")
    assert result.returncode == 1, result
    hint = _hint(result.stderr)
    assert "source job no-such-source was not found" in hint


def test_load_on_a_missing_job_names_the_job(ct: CtRunner, server_args: list[str]) -> None:
    result = ct(*server_args, "--job", "no-such-job", "load", "cp_nope")
    assert result.returncode == 1, result
    hint = _hint(result.stderr)
    assert "job no-such-job was not found" in hint and "--database" in hint


def test_deleting_or_downloading_a_missing_checkpoint_names_the_checkpoint(
    ct: CtRunner, server_args: list[str], submitted_job: str, tmp_path: Path
) -> None:
    deleted = ct(*server_args, "delete-checkpoint", submitted_job, "cp_nope")
    assert deleted.returncode == 1, deleted
    assert "checkpoint cp_nope was not found" in _hint(deleted.stderr)
    downloaded = ct(
        *server_args, "download-checkpoint", submitted_job, "cp_nope", "--output-dir", str(tmp_path / "out")
    )
    assert downloaded.returncode == 1, downloaded
    assert "checkpoint cp_nope was not found" in _hint(downloaded.stderr)


def _hint(stderr: str) -> str:
    hints = [line for line in stderr.splitlines() if line.startswith("hint: ")]
    assert hints, stderr
    return hints[-1]


# --- downloads: CLI words, and no lock files left ---------------------------------------------------


def _running_job_with_console(local_server: Any, database: str) -> str:
    """A running job whose run folder holds two console chunks and one metrics chunk of a sub-job."""
    import gzip

    from ct_testing.plugin import wait_for_job_status

    from ct_local.http.artifacts import run_root

    prefix = local_server.prefix(database=database, schema="ARTIFACTS")
    body = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}
    job_id = httpx.post(prefix, json=body, timeout=30).raise_for_status().json()["job_id"]
    with local_server.http() as http:
        wait_for_job_status(http, f"{prefix}/{job_id}", {"running"})
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
    return job_id


def test_download_notices_speak_cli_words(ct: CtRunner, local_server: Any, tmp_path: Path) -> None:
    args = ["--base-url", local_server.base_url, "--database", "CT_CLI_WORDS", "--schema", "ARTIFACTS"]
    job_id = _running_job_with_console(local_server, "CT_CLI_WORDS")
    sub = f"{job_id}:training:9"
    result = ct(
        *args,
        "download-log",
        job_id,
        "--log-type",
        "stdout",
        "--sub-job-id",
        sub,
        "--output-dir",
        str(tmp_path),
    )
    assert result.returncode == 0, result
    # The running job's newest chunks may still be uploading: the notice says how to fetch them later.
    assert "may still be uploading" in result.stderr
    assert "--resume" in result.stderr and "resume=True" not in result.stderr
    [entry] = result.json["logs"]
    assert entry["warnings"] and not any("resume=True" in warning for warning in entry["warnings"])


def test_downloads_leave_no_lock_files(ct: CtRunner, local_server: Any, tmp_path: Path) -> None:
    args = ["--base-url", local_server.base_url, "--database", "CT_CLI_LOCKS", "--schema", "ARTIFACTS"]
    job_id = _running_job_with_console(local_server, "CT_CLI_LOCKS")
    sub = f"{job_id}:training:9"
    out = tmp_path / "out"
    for command in (
        ["download-log", job_id, "--log-type", "stdout"],
        ["download-log", job_id, "--log-type", "stdout", "--resume"],
        ["download-metrics", job_id],
    ):
        result = ct(*args, *command, "--sub-job-id", sub, "--output-dir", str(out))
        assert result.returncode == 0, result
        assert sorted(p.name for p in out.rglob("*.lock")) == [], command
    assert (out / sub / "stdout.log").read_text() == "hello\nworld\n"


# --- removed reference forms ------------------------------------------------------------------------


def test_submit_job_id_is_refused_and_says_why(ct: CtRunner, server_args: list[str], job_file: Path) -> None:
    result = ct(*server_args, "submit", str(job_file), "--job-id", "my-job")
    assert result.returncode == 2, result
    assert result.stdout == ""
    message = result.stderr
    assert "submit --job-id was removed" in message and "the service assigns" in message
    assert "Unused Tokens" not in message


def test_submit_warns_that_a_global_job_is_not_its_id(
    ct: CtRunner, server_args: list[str], job_file: Path
) -> None:
    result = ct(*server_args, "--job-id", "my-job", "submit", str(job_file))
    assert result.returncode == 0, result
    assert result.json["job_id"] != "my-job"
    assert "warning:" in result.stderr and "my-job" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["step", "JOB"],
        ["--job", "JOB", "step", "JOB"],
        ["save", "JOB"],
        ["weight-sync", "JOB"],
        ["load", "JOB", "cp_1"],
        ["fwd-bwd", "JOB", "batch.json"],
        ["generate", "JOB", "request.json"],
    ],
)
def test_a_positional_job_id_for_a_job_command_is_explained(
    ct: CtRunner, server_args: list[str], argv: list[str]
) -> None:
    result = ct(*server_args, *argv)
    assert result.returncode == 2, result
    assert "Unused Tokens" not in result.stderr
    command = argv[argv.index("JOB") - 1] if argv[0] != "--job" else argv[2]
    assert f"ct --job JOB_ID {command}" in result.stderr
    assert "before the command" in result.stderr


@pytest.mark.parametrize("flag", ["--job", "--job-id"])
def test_the_job_option_after_a_job_command_is_explained(
    ct: CtRunner, server_args: list[str], flag: str
) -> None:
    result = ct(*server_args, "step", flag, "JOB")
    assert result.returncode == 2, result
    assert "ct --job JOB_ID step" in result.stderr and "before the command" in result.stderr


# --- the version --------------------------------------------------------------------------------------


def test_the_version_is_written_once_and_ct_version_shows_it(ct: CtRunner) -> None:
    import importlib.metadata

    import ct_core

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    # The distribution's version is read from ct_core/version.py at build time (hatch's dynamic version).
    assert "version" not in project and "version" in project.get("dynamic", [])
    assert pyproject["tool"]["hatch"]["version"]["path"] == "ct_core/version.py"
    result = ct("--version")
    assert result.returncode == 0, result
    assert result.stdout.strip() == ct_core.__version__ == importlib.metadata.version("ct")
    later = ct("--compact", "--version")
    assert later.returncode == 0 and later.stdout.strip() == ct_core.__version__
