"""`make demo`: a job's whole life against the embedded local server, training included.

Starts `python -m ct_local serve` on a free loopback port with a temporary state dir, then runs
the real `ct` command line against it, one subprocess per step, exactly as a user would type it:
submit a job with a training and a sampling sub-job, wait for it, get it, list jobs, list its
checkpoints; then train the tiny model for a few steps (`ct fwd-bwd` + `ct step`) and show the
loss falling, save a checkpoint, take one more step, load the checkpoint back and check that the
loss is the one seen at save time; show `ct capacity` (the capacity plugin); and cancel the job.
Each step's command line is shown as a heading on stderr and what it printed follows on stdout.
The server is stopped at the end, also on failure or Ctrl+C; the exit code is non-zero when any
step fails (including a loss that does not fall, or a reload that does not restore the weights).
"""

from __future__ import annotations

import json
import math
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


#: The training part: a few optimizer steps on one short text, at a learning rate high enough that
#: the tiny randomly initialised model visibly learns it in that many steps.
TRAIN_STEPS = 5
TRAIN_LEARNING_RATE = 0.003
TRAIN_BATCH: dict[str, Any] = {
    "texts": ["ct trains a tiny model on the local server.", "the loss falls step after step."],
    "tokenizer": "byte",
    "max_length": 48,
    "label_strategy": "next_token",
}
#: How close the loss after reloading a checkpoint must be to the loss measured at save time.
RELOAD_LOSS_TOLERANCE = 1e-3
#: The plugin `ct capacity` comes from; allowed for that step even when CT_PLUGINS narrows the rest.
CAPACITY_PLUGIN = "capacity"


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


def run_step(
    title: str,
    connection: list[str],
    args: list[str],
    *,
    stdin: str | None = None,
    plugins: str | None = None,
) -> Any:
    """Run one `ct` command, show it and its output, and return its JSON result.

    `plugins` sets CT_PLUGINS for this step only (the capacity command lives in a plugin).
    """
    command = [*_ct_command(), *connection, *args]
    _heading(f"{title}: ct {shlex.join([*connection, *args])}")
    env = {**os.environ, "CT_PLUGINS": os.environ.get("CT_PLUGINS", "") if plugins is None else plugins}
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
        train(workdir, connection, job_id)
        run_step("show GPU capacity (the capacity plugin)", connection, ["capacity"], plugins=CAPACITY_PLUGIN)
        run_step("cancel it", connection, ["cancel", job_id])
        final = run_step("its record after the cancel", connection, ["--compact", "get", "--raw", job_id])
        _heading(f"done: job {job_id} is {final.get('status')}")
    finally:
        _heading("stopping the local server")
        stop_server(process)


def _loss(answer: Any) -> float:
    result = answer.get("result") if isinstance(answer, dict) else None
    loss = result.get("avg_loss") if isinstance(result, dict) else None
    if not isinstance(loss, (int, float)) or not math.isfinite(loss):
        raise DemoError(f"fwd-bwd returned no finite avg_loss: {answer!r}")
    return float(loss)


def train(workdir: Path, connection: list[str], job_id: str) -> None:
    """Train a few steps, then save, change the weights, reload and check the loss came back."""
    batch = workdir / "batch.json"
    batch.write_text(json.dumps(TRAIN_BATCH, indent=2), encoding="utf-8")
    on_job = [*connection, "--compact", "--job", job_id]
    lr = ["step", "--lr", str(TRAIN_LEARNING_RATE)]
    losses: list[float] = []
    for number in range(1, TRAIN_STEPS + 1):
        losses.append(
            _loss(run_step(f"train step {number}: forward/backward", on_job, ["fwd-bwd", str(batch)]))
        )
        run_step(f"train step {number}: optimizer step", on_job, lr)
    _heading("loss per step: " + "  ".join(f"{loss:.4f}" for loss in losses))
    if not losses[-1] < losses[0]:
        raise DemoError(f"the loss did not fall: {losses[0]:.4f} -> {losses[-1]:.4f}")

    saved = run_step("save a resumable checkpoint", on_job, ["save"])
    checkpoint_id = saved.get("checkpoint_id")
    if not isinstance(checkpoint_id, str) or not checkpoint_id:
        raise DemoError(f"the save printed no checkpoint_id: {saved!r}")
    at_save = _loss(run_step("the loss of the saved weights", on_job, ["fwd-bwd", str(batch)]))
    run_step("one more step moves the weights on", on_job, lr)
    moved = _loss(run_step("the loss after that step", on_job, ["fwd-bwd", str(batch)]))
    run_step(f"load {checkpoint_id} back", on_job, ["load", checkpoint_id])
    reloaded = _loss(run_step("the loss after the reload", on_job, ["fwd-bwd", str(batch)]))
    _heading(f"loss at save {at_save:.4f}, after one more step {moved:.4f}, after the reload {reloaded:.4f}")
    if abs(reloaded - at_save) > RELOAD_LOSS_TOLERANCE:
        raise DemoError(f"the reload did not restore the saved weights ({reloaded:.4f} != {at_save:.4f})")
    run_step("its checkpoints now", connection, ["checkpoints", job_id])


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
