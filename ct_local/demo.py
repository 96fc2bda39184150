"""`make demo`: a job's whole control-plane life against the embedded local server.

Starts `python -m ct_local serve` on a free loopback port with a temporary state dir, then runs
the real `ct` command line against it, one subprocess per step, exactly as a user would type it:
submit a job with a training and a sampling sub-job, wait for it, get it, list jobs, list its
checkpoints, and cancel it. Each step's command line is shown as a heading on stderr and what
it printed follows on stdout. The server is stopped at the end, also on failure or Ctrl+C; the
exit code is non-zero when any step fails.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: How long the server may take to come up (imports of torch and transformers dominate).
SERVER_START_TIMEOUT_S = 120.0
SERVER_STOP_TIMEOUT_S = 15.0
#: Each `ct` step is a quick control-plane call on the local server; this only bounds a hang.
STEP_TIMEOUT_S = 300.0
DATABASE = "DEMO_DB"
SCHEMA = "PUBLIC"
#: Short lifecycle delays, so the job reaches running in about a second.
SERVER_SETTINGS = {"pending_delay_s": 0.2, "placing_delay_s": 0.2, "initializing_delay_s": 0.3}

DEMO_JOB: dict[str, Any] = {
    "sub_job_configs": [
        {
            "job_type": "training",
            "model_name": "Qwen/Qwen3-0.6B",
            "training_config": {
                "optimizer": {"name": "AdamW", "lr": 0.0001},
                "max_seq_len": 512,
                "train_batch_size": 4,
                "n_gpus": 1,
            },
        },
        {
            "job_type": "sampling",
            "model_name": "Qwen/Qwen3-0.6B",
            "inference_config": {"max_seq_len": 512, "n_gpus": 1},
        },
    ],
    "experiment_name": "demo",
    "hardware": "H200",
    "idle_timeout_seconds": 1800,
}


class DemoError(RuntimeError):
    """A demo step failed; the message says which."""


def _heading(text: str) -> None:
    sys.stderr.write(f"\n=== {text}\n")
    sys.stderr.flush()


def _ct_command() -> list[str]:
    # The console script next to this interpreter, or the module when it is not installed.
    script = Path(sys.executable).with_name("ct")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ct_cli"]


def start_server(state_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start the local server on a free port; return the process and its base URL."""
    ready = state_dir.parent / "ready.json"
    command = [
        sys.executable,
        "-m",
        "ct_local",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--state-dir",
        str(state_dir),
        "--ready-file",
        str(ready),
        "--settings-json",
        json.dumps(SERVER_SETTINGS),
    ]
    _heading("starting the local server: " + shlex.join(command))
    log = (state_dir.parent / "server.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while not ready.exists():
        if process.poll() is not None:
            raise DemoError(f"the server exited with {process.returncode}; see {log.name}")
        if time.monotonic() > deadline:
            raise DemoError(f"the server did not start within {SERVER_START_TIMEOUT_S:.0f} s")
        time.sleep(0.05)
    base_url = json.loads(ready.read_text(encoding="utf-8"))["base_url"]
    sys.stderr.write(f"listening on {base_url}\n")
    return process, base_url


def stop_server(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=SERVER_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_step(title: str, connection: list[str], args: list[str], *, stdin: str | None = None) -> Any:
    """Run one `ct` command, show it and its output, and return its JSON result."""
    command = [*_ct_command(), *connection, *args]
    _heading(f"{title}: ct {shlex.join([*connection, *args])}")
    env = {**os.environ, "CT_PLUGINS": os.environ.get("CT_PLUGINS", "")}
    completed = subprocess.run(
        command, input=stdin, capture_output=True, text=True, env=env, timeout=STEP_TIMEOUT_S, check=False
    )
    if completed.stderr:
        sys.stderr.write(completed.stderr)
    sys.stdout.write(completed.stdout)
    sys.stdout.flush()
    if completed.returncode != 0:
        raise DemoError(f"step '{title}' exited with {completed.returncode}")
    return json.loads(completed.stdout)


def run_demo(workdir: Path) -> None:
    state_dir = workdir / "state"
    state_dir.mkdir()
    job_file = workdir / "job.json"
    job_file.write_text(json.dumps(DEMO_JOB, indent=2), encoding="utf-8")
    process, base_url = start_server(state_dir)
    try:
        connection = ["--base-url", base_url, "--database", DATABASE, "--schema", SCHEMA]
        run_step("check the job body offline", [], ["submit", str(job_file), "--dry-run"])
        job_id = run_step("submit a training + sampling job", connection, ["submit", str(job_file)])["job_id"]
        record = run_step("wait until it is running", connection, ["wait", job_id])
        if record.get("status") != "running":
            raise DemoError(f"expected a running job, got {record.get('status')!r}")
        run_step("get a create body for a job like it", connection, ["get", job_id])
        listed = run_step("list the schema's jobs", connection, ["--compact", "list"])
        if job_id not in {job.get("job_id") for job in listed.get("jobs", [])}:
            raise DemoError("the new job is missing from ct list")
        run_step("list its checkpoints", connection, ["checkpoints", job_id])
        run_step("cancel it", connection, ["cancel", job_id])
        final = run_step("its record after the cancel", connection, ["--compact", "get", "--raw", job_id])
        _heading(f"done: job {job_id} is {final.get('status')}")
    finally:
        _heading("stopping the local server")
        stop_server(process)


def main() -> int:
    try:
        with tempfile.TemporaryDirectory(prefix="ct-demo-") as workdir:
            run_demo(Path(workdir))
    except DemoError as exc:
        sys.stderr.write(f"demo failed: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("demo interrupted\n")
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
