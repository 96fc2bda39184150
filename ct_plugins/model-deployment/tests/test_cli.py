"""`ct model-deployment ...` as a user runs it: a real `ct` process against a real ct_local server."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

DB = "DEP_DB"
CT_SCRIPT = str(Path(sys.executable).with_name("ct"))


def base_args(server: Any) -> list[str]:
    return ["--base-url", server.base_url, "--database", DB, "--poll-interval", "0.05"]


@pytest.fixture
def spec_file(tmp_path: Path, spec: dict[str, Any]) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def test_dry_run_prints_the_normalized_spec_without_a_server(
    run_ct: Any, tmp_path: Path, spec: dict[str, Any]
) -> None:
    spec["deployment"]["gpu_type"] = "b200"
    spec["source"] = {"type": "checkpoint", "job_id": "no-such-job", "checkpoint_id": "cp_x"}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    # Nothing listens on port 9: a request would fail, so success proves none was sent.
    result = run_ct(
        "--base-url",
        "http://127.0.0.1:9",
        "--database",
        DB,
        "model-deployment",
        "create",
        str(path),
        "--dry-run",
    )
    assert result.returncode == 0, result
    assert result.json["deployment"]["gpu_type"] == "B200"
    assert result.json["source"] == spec["source"]
    from_stdin = run_ct("model-deployment", "create", "-", "--dry-run", input=json.dumps(spec))
    assert from_stdin.returncode == 0 and from_stdin.json == result.json


def test_dry_run_names_every_problem(run_ct: Any, tmp_path: Path, spec: dict[str, Any]) -> None:
    spec["deployment"]["min_replica"] = spec["deployment"].pop("min_replicas")
    spec["deployment"]["gpus_per_replica"] = 3
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    result = run_ct("model-deployment", "create", str(path), "--dry-run")
    assert result.returncode == 1 and result.stdout == ""
    for needle in (
        "unknown keys: min_replica",
        "missing keys: min_replicas",
        "gpus_per_replica must be one of",
    ):
        assert needle in result.stderr


def test_create_wait_list_describe_chat_drop(run_ct: Any, dep_server: Any, spec_file: Path) -> None:
    args = base_args(dep_server)
    created = run_ct(*args, "model-deployment", "create", str(spec_file), "--wait", "--timeout", "60")
    assert created.returncode == 0, created
    summary = created.json
    deployment = summary["deployment"]
    assert set(summary) == {"deployment", "status", "base_url"} and summary["status"] == "READY"

    listed = run_ct(*args, "model-deployment", "list", "--status", "ready")
    # One object, as every other listing prints, with the deployments under their own key.
    assert set(listed.json) == {"deployments"}
    assert {"deployment": deployment, "status": "READY"} in listed.json["deployments"]
    assert all(set(item) == {"deployment", "status"} for item in listed.json["deployments"])
    assert run_ct(*args, "model-deployment", "list", "--status", "nope").returncode == 1

    described = run_ct(*args, "model-deployment", "describe", deployment).json
    assert described["spec"]["inference"] == {"max_seq_len": 256}
    waited = run_ct(*args, "model-deployment", "wait", deployment)
    assert waited.returncode == 0 and waited.json == summary

    answer = run_ct(*args, "model-deployment", "chat", deployment, "hi", "--max-completion-tokens", "5")
    assert answer.returncode == 0, answer
    assert answer.json["deployment"] == deployment and answer.json["usage"]["completion_tokens"] <= 5
    streamed = run_ct(*args, "model-deployment", "chat", deployment, "hi", "--stream", "--temperature", "0")
    assert streamed.returncode == 0, streamed

    dropped = run_ct(*args, "model-deployment", "drop", deployment)
    assert dropped.returncode == 0 and dropped.json["dropped"] is True
    again = run_ct(*args, "model-deployment", "drop", deployment)
    assert again.returncode == 0 and again.json["dropped"] is True


def test_list_shows_the_healthy_deployments_and_names_a_malformed_one(
    run_ct: Any, dep_server: Any, spec: dict[str, Any]
) -> None:
    from ct_model_deployment.spec import check_spec, create_body

    args = [*base_args(dep_server), "--schema", "MALFORMED_CLI"]
    with httpx.Client(timeout=30) as http:
        prefix = dep_server.prefix(database=DB, schema="MALFORMED_CLI")
        body = create_body(check_spec(spec), spec["source"]["model"])
        body["sub_job_configs"][0]["inference_config"]["n_gpus"] = 3
        broken = "sf-ct-" + http.post(prefix + "/", json=body).raise_for_status().json()["job_id"]
    healthy = run_ct(*args, "model-deployment", "create", "-", input=json.dumps(spec)).json["deployment"]
    listed = run_ct(*args, "model-deployment", "list")
    assert listed.returncode == 0, listed
    assert [item["deployment"] for item in listed.json["deployments"]] == [healthy]
    assert [item["deployment"] for item in listed.json["malformed"]] == [broken]
    assert "n_gpus 3" in listed.json["malformed"][0]["error"]
    assert f"warning: model deployment {broken} is malformed" in listed.stderr
    assert run_ct(*args, "model-deployment", "drop", healthy).returncode == 0


def test_failed_deployment_exit_codes(run_ct: Any, dep_server: Any, spec_file: Path) -> None:
    args = base_args(dep_server)
    deployment = run_ct(*args, "model-deployment", "create", str(spec_file)).json["deployment"]
    job_id = deployment.removeprefix("sf-ct-")
    dep_server.force_status(
        job_id, "failed", "image_pull_failed", f"sub-job {job_id}:sampling:0 could not start"
    )
    waited = run_ct(*args, "model-deployment", "wait", deployment)
    assert waited.returncode == 1
    assert waited.json["failure"] == {
        "code": "image_pull_failed",
        "message": f"sub-job {deployment} could not start",
    }
    assert "image_pull_failed" in waited.stderr and "download-log" in waited.stderr
    assert job_id not in (waited.stdout + waited.stderr).replace(deployment, "")
    dropped = run_ct(*args, "model-deployment", "drop", deployment)
    assert dropped.returncode == 0, dropped
    assert dropped.json == {"deployment": deployment, "dropped": False, "status": "FAILED"}


def test_errors_and_bad_ids(run_ct: Any, dep_server: Any) -> None:
    args = base_args(dep_server)
    bad = run_ct(*args, "model-deployment", "describe", "my-deployment")
    assert bad.returncode == 1 and "deployment must currently be an sf-ct-<UUID> ID" in bad.stderr
    missing = "sf-ct-00000000-0000-4000-8000-000000000000"
    gone = run_ct(*args, "model-deployment", "describe", missing)
    assert gone.returncode == 1 and f"model deployment {missing} not found in {DB}.PUBLIC" in gone.stderr
    # The hint speaks of the deployment, not of the job behind it.
    assert "hint: check the deployment id" in gone.stderr and "job id" not in gone.stderr


def test_wait_timeout_says_it_still_holds_gpus(run_ct: Any, slow_server: Any, spec_file: Path) -> None:
    args = base_args(slow_server)
    created = run_ct(*args, "model-deployment", "create", str(spec_file), "--wait", "--timeout", "0.3")
    assert created.returncode == 1
    assert created.json["status"] == "PENDING"
    assert "still running and holding GPUs" in created.stderr


def test_wait_defaults_to_the_global_poll_timeout(run_ct: Any, slow_server: Any, spec_file: Path) -> None:
    args = base_args(slow_server)
    deployment = run_ct(*args, "model-deployment", "create", str(spec_file)).json["deployment"]
    waited = run_ct(*args, "--poll-timeout", "0.3", "model-deployment", "wait", deployment)
    assert waited.returncode == 1 and waited.json == {
        "deployment": deployment,
        "status": "PENDING",
        "base_url": waited.json["base_url"],
    }
    assert "still running and holding GPUs" in waited.stderr
    assert run_ct(*args, "model-deployment", "drop", deployment).returncode == 0


def _interrupt(command: list[str], first_line_start: str) -> tuple[str, str, str, int]:
    """Run `ct`, send SIGINT once its first stderr line shows the wait began; (line, out, err, code)."""
    env = {**os.environ, "CT_PLUGINS": "model-deployment"}
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Background shells start jobs with SIGINT ignored; a terminal gives ct the default handler.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    first_line = process.stderr.readline()  # written once the deployment exists and the wait begins
    assert first_line.startswith(first_line_start), first_line
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    return first_line, stdout, stderr, process.returncode


def test_ctrl_c_during_create_wait(ct_home: Path, slow_server: Any, spec_file: Path) -> None:
    command = [CT_SCRIPT, *base_args(slow_server), "model-deployment", "create", str(spec_file), "--wait"]
    first_line, stdout, stderr, code = _interrupt(command, "created sf-ct-")
    deployment = first_line.split()[1].rstrip(";")
    assert code == 130
    assert stdout == ""
    assert f"interrupted; {deployment} is still running ..." in stderr and "Traceback" not in stderr
    # Nothing was dropped: the backing job is still pending.
    with httpx.Client(base_url=slow_server.base_url, timeout=30) as http:
        prefix = f"/api/v2/databases/{DB}/schemas/PUBLIC/cortex-training/"
        job = http.get(prefix + deployment.removeprefix("sf-ct-")).json()
    assert job["status"] == "pending"


def test_chat_before_ready_fails_with_the_endpoints_answer(
    run_ct: Any, slow_server: Any, spec_file: Path
) -> None:
    args = base_args(slow_server)
    deployment = run_ct(*args, "model-deployment", "create", str(spec_file)).json["deployment"]
    for extra in ((), ("--stream",)):
        answer = run_ct(*args, "model-deployment", "chat", deployment, "hi", *extra)
        assert answer.returncode == 1 and answer.stdout == ""
        assert (
            f"model deployment {deployment} request failed with HTTP 503 (endpoint_failed)" in answer.stderr
        )
        assert "http://" not in answer.stderr
    assert run_ct(*args, "model-deployment", "drop", deployment).returncode == 0


def test_ctrl_c_during_wait(ct_home: Path, run_ct: Any, slow_server: Any, spec_file: Path) -> None:
    args = base_args(slow_server)
    deployment = run_ct(*args, "model-deployment", "create", str(spec_file)).json["deployment"]
    command = [CT_SCRIPT, *args, "model-deployment", "wait", deployment]
    _, stdout, stderr, code = _interrupt(command, f"waiting for {deployment}")
    assert code == 130 and stdout == ""
    assert f"interrupted; {deployment} is still running ..." in stderr and "Traceback" not in stderr
    assert run_ct(*args, "model-deployment", "describe", deployment).json["status"] == "PENDING"
    assert run_ct(*args, "model-deployment", "drop", deployment).returncode == 0


#: Holds the first read of a job (GET .../<job id>) for an hour: a test that sees it held knows the
#: deployment exists and `create` has not yet returned, and interrupts it right there.
HOLD_FIRST_READ = {
    "path": r"/cortex-training/[0-9a-f-]{36}$",
    "method": "GET",
    "action": "delay",
    "delay_s": 3600,
    "count": 1,
}


def _rule_hits(server: Any) -> int:
    answer = httpx.get(f"{server.base_url}/_ct/faults", headers=server.admin_headers, timeout=10.0)
    return sum(int(rule["hits"]) for rule in answer.raise_for_status().json()["rules"])


@pytest.mark.parametrize("extra", [[], ["--wait"]], ids=["create", "create-wait"])
def test_ctrl_c_before_create_returns_still_names_the_deployment(
    ct_home: Path, slow_server: Any, spec_file: Path, extra: list[str]
) -> None:
    command = [CT_SCRIPT, *base_args(slow_server), "model-deployment", "create", str(spec_file), *extra]
    slow_server.set_faults(HOLD_FIRST_READ)
    try:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "CT_PLUGINS": "model-deployment"},
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        # The condition, not a time: the server holds the read that follows the create.
        for _ in range(6000):
            if _rule_hits(slow_server) or process.poll() is not None:
                break
            time.sleep(0.02)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        slow_server.clear_faults()
    assert process.returncode == 130, stderr
    assert stdout == "" and "Traceback" not in stderr
    match = re.search(r"interrupted; (sf-ct-[0-9a-f-]{36}) was created and is still running", stderr)
    assert match, stderr
    deployment = match.group(1)
    with httpx.Client(base_url=slow_server.base_url, timeout=30) as http:
        prefix = f"/api/v2/databases/{DB}/schemas/PUBLIC/cortex-training/"
        assert http.get(prefix + deployment.removeprefix("sf-ct-")).json()["status"] == "pending"


def _sse(text: str) -> str:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"


def test_chat_stream_escapes_control_bytes_on_a_terminal_only(
    ct_home: Path, run_ct: Any, dep_server: Any, spec_file: Path
) -> None:
    import pty

    args = base_args(dep_server)
    deployment = run_ct(*args, "model-deployment", "create", str(spec_file), "--wait").json["deployment"]
    answer = {
        "path": "/inference/v1/chat/completions$",
        "method": "POST",
        "action": "respond",
        "status": 200,
        "body": _sse("hi\x1b[2J\x07there"),
        "headers": {"content-type": "text/event-stream"},
        "count": 2,
    }
    dep_server.set_faults(answer)
    try:
        piped = run_ct(*args, "model-deployment", "chat", deployment, "hi", "--stream")
        assert piped.returncode == 0, piped
        assert piped.stdout == "hi\x1b[2J\x07there\n"
        # The same answer on a real terminal: the escape sequence and the bell are shown, not obeyed.
        leader, follower = pty.openpty()
        command = [CT_SCRIPT, *args, "model-deployment", "chat", deployment, "hi", "--stream"]
        process = subprocess.Popen(
            command,
            stdout=follower,
            stderr=subprocess.PIPE,
            env={**os.environ, "CT_PLUGINS": "model-deployment"},
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                block = os.read(leader, 4096)
            except OSError:  # the terminal's other end closed: the process is done writing
                break
            if not block:
                break
            shown += block
        os.close(leader)
        assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    finally:
        dep_server.clear_faults()
    assert shown.decode().replace("\r\n", "\n") == "hi\\u001b[2J\\u0007there\n"
    assert run_ct(*args, "model-deployment", "drop", deployment).returncode == 0


def _job_words(text: str) -> list[str]:
    """The job wording a deployment error must not use (a deployment's user never sees a job)."""
    return [words for words in ("job body", "check the job id", "owner role)") if words in text]


def test_errors_speak_of_deployments_not_jobs(
    run_ct: Any, dep_server: Any, tmp_path: Path, spec: dict[str, Any]
) -> None:
    args = base_args(dep_server)
    path = tmp_path / "spec.json"

    # A spec with several problems, refused before anything is sent.
    broken = json.loads(json.dumps(spec))
    broken["deployment"]["gpus_per_replica"] = 3
    broken["inference"]["max_seq_len"] = 0
    path.write_text(json.dumps(broken))
    refused = run_ct(*args, "model-deployment", "create", str(path))
    assert refused.returncode == 1 and refused.stdout == ""
    assert "error: the deployment spec is invalid:" in refused.stderr, refused.stderr
    assert "gpus_per_replica must be one of" in refused.stderr and "max_seq_len" in refused.stderr
    assert _job_words(refused.stderr) == []

    # A deployment the endpoint does not know.
    missing = "sf-ct-00000000-0000-4000-8000-000000000000"
    chat = run_ct(*args, "model-deployment", "chat", missing, "hi")
    assert chat.returncode == 1 and "HTTP 404" in chat.stderr
    assert "hint: check the deployment id" in chat.stderr and _job_words(chat.stderr) == []

    # A checkpoint source whose training job does not exist.
    source = {"type": "checkpoint", "job_id": "00000000-0000-4000-8000-00000000abcd", "checkpoint_id": "cp_x"}
    path.write_text(json.dumps({**spec, "source": source}))
    no_source = run_ct(*args, "model-deployment", "create", str(path))
    assert no_source.returncode == 1 and "HTTP 404" in no_source.stderr
    assert "hint: check source.job_id" in no_source.stderr and _job_words(no_source.stderr) == []

    # A registered model the runs service does not know.
    path.write_text(
        json.dumps({**spec, "source": {"type": "registered_model", "model_id": "mdl_" + "0" * 26}})
    )
    unknown = run_ct(*args, "model-deployment", "create", str(path))
    assert unknown.returncode == 1 and "registered model mdl_" in unknown.stderr
    assert "hint: check source.model_id" in unknown.stderr and _job_words(unknown.stderr) == []
