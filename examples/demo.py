"""`make demo`: a job's whole life against the embedded local server, training included.

Starts `python -m ct_local serve` on a free loopback port with a temporary state dir, then runs
the real `ct` command line against it, one subprocess per step, exactly as a user would type it:
submit a job with a training and a sampling sub-job, wait for it, get it, list jobs, list its
checkpoints; then train the tiny model for a few steps (`ct fwd-bwd` + `ct step`) and show the
loss falling, save a checkpoint, take one more step, load the checkpoint back and check that the
loss is the one seen at save time; sync the trained weights into the sampler and generate from one
prompt before training and after the sync; download the job's metrics and plot them as a PNG (both
kept in --output-dir, by default a new folder under the temp dir); deploy a weights-only checkpoint
as a model deployment, chat with it and drop it; then a managed run (the runs service inside the
same server): build a dataset from the bundled corpus, start a run that stops early, show its
metrics and plot, and deploy and chat with the model it registered; show `ct capacity` (the
capacity plugin); and cancel the job.
Each step's command line is shown as a heading on stderr and what it printed follows on stdout.
The server is stopped at the end, also on failure or Ctrl+C; the exit code is non-zero when any
step fails (including a loss that does not fall, or a reload that does not restore the weights).
"""

from __future__ import annotations

import argparse
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
#: Artifacts (metrics files) are staged every half second instead of every 3 s, so the
#: download-metrics step finds the training rows without a long wait.
ARTIFACT_UPLOAD_INTERVAL_S = 0.5
SERVER_SETTINGS = {
    "pending_delay_s": 0.2,
    "placing_delay_s": 0.2,
    "initializing_delay_s": 0.3,
    "artifact_upload_interval_s": ARTIFACT_UPLOAD_INTERVAL_S,
}

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
#: The plugin behind `ct model-deployment`, allowed for the deployment steps in the same way.
DEPLOYMENT_PLUGIN = "model-deployment"

#: One greedy prompt, generated from before training and again after the weight sync: the same
#: request on other weights, so the two texts can be compared (docs/generation.md).
GENERATE_REQUEST: dict[str, Any] = {
    "prompts": ["ct trains"],
    "sampling_params": {"max_tokens": 24, "temperature": 0, "seed": 7},
}
#: How long to keep asking for the staged training metrics (they appear within one upload interval).
METRICS_WAIT_S = 30.0
METRICS_RETRY_S = 0.5
#: The deployment of the trained checkpoint: the smallest shape the spec allows
#: (docs/model-deployments.md); the source is filled in once the checkpoint exists.
DEPLOYMENT_SHAPE: dict[str, Any] = {
    "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
    "inference": {"max_seq_len": 512},
}
DEPLOYMENT_WAIT_TIMEOUT_S = 120
CHAT_MESSAGE = "Hello"
#: The managed run: the plugin its commands come from, the corpus shipped with the repository, and
#: a spec whose early stopping triggers on this corpus (validation every 6 steps and at each epoch
#: boundary; two results in a row without a 0.25 gain start the cooldown), so the run ends
#: succeeded well below its 8-epoch budget.
RUNS_PLUGIN = "runs"
RUNS_CORPUS = Path(__file__).resolve().parent / "data" / "runs-corpus.jsonl"
RUN_SPEC: dict[str, Any] = {
    "overrides": {"max_seq_len": 128},
    "trainer": {"epochs": 8, "batch_tokens": 512, "patience": 2, "min_delta": 0.25, "val_every_steps": 6},
}
CHAT_TOKENS = 16


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
    # The server loads the runs plugin (its service answers the managed-run steps) whatever
    # CT_PLUGINS narrows the commands to.
    env = {**os.environ, "CT_PLUGINS": RUNS_PLUGIN}
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
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


def run_demo(workdir: Path, output_dir: Path) -> None:
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
        png = plot_metrics(output_dir, connection, job_id)
        deploy_checkpoint(workdir, connection, job_id)
        run_png = managed_run(workdir, output_dir, connection)
        run_step("show GPU capacity (the capacity plugin)", connection, ["capacity"], plugins=CAPACITY_PLUGIN)
        run_step("cancel it", connection, ["cancel", job_id])
        final = run_step("its record after the cancel", connection, ["--compact", "get", "--raw", job_id])
        _heading(f"done: job {job_id} is {final.get('status')}; its plot is at {png}, the run's at {run_png}")
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
    prompt = workdir / "prompt.json"
    prompt.write_text(json.dumps(GENERATE_REQUEST, indent=2), encoding="utf-8")
    before = _generated_text(
        run_step("generate from the untrained sampler", on_job, ["generate", "-"], stdin=prompt.read_text())
    )
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

    run_step("sync the trained weights into the sampler", on_job, ["weight-sync"])
    after = _generated_text(
        run_step(
            "generate the same prompt after the sync", on_job, ["generate", "-"], stdin=prompt.read_text()
        )
    )
    _heading(f"generated before training: {before!r}")
    _heading(f"generated after the sync:  {after!r}")
    # The request is greedy and seeded, so the same text twice means the sync did not reach the sampler.
    if after == before:
        raise DemoError("the sampler generated the same text after the weight sync as before training")


def _generated_text(answer: Any) -> str:
    # `ct generate` prints {"result": {"results": [{"text": ...}, ...]}}; one prompt was sent.
    result = answer.get("result") if isinstance(answer, dict) else None
    items = result.get("results") if isinstance(result, dict) else None
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        raise DemoError(f"generate returned no results: {answer!r}")
    text = items[0].get("text")
    if not isinstance(text, str):
        raise DemoError(f"generate returned no text: {answer!r}")
    return text


def plot_metrics(output_dir: Path, connection: list[str], job_id: str) -> Path:
    """Download the job's metrics once the training rows are staged, plot them; return the PNG's path.

    Both go to `output_dir`, which outlives the demo's temporary folder, so the image can be opened.
    """
    metrics_dir = output_dir / "metrics"
    args = ["download-metrics", job_id, "--output-dir", str(metrics_dir)]
    deadline = time.monotonic() + METRICS_WAIT_S
    attempt = 1
    while True:
        title = "download its metrics" if attempt == 1 else f"download its metrics (try {attempt})"
        run_step(title, [*connection, "--compact"], args)
        # The server stages training.jsonl on its upload interval; until then there is nothing to plot.
        if any(path.stat().st_size > 0 for path in metrics_dir.rglob("training*.jsonl")):
            break
        if time.monotonic() > deadline:
            raise DemoError(f"no training metrics were staged within {METRICS_WAIT_S:.0f} s")
        time.sleep(METRICS_RETRY_S)
        attempt += 1
    png = output_dir / "job.png"
    plotted = run_step(
        "plot loss, learning rate and utilisation",
        [*connection, "--compact"],
        ["plot", job_id, "--output", str(png)],
    )
    if not png.is_file() or png.stat().st_size == 0:
        raise DemoError(f"ct plot wrote no image at {png}")
    if not plotted.get("steps"):
        raise DemoError(f"the plot shows no training steps: {plotted!r}")
    _heading(f"the plot is at {png} ({plotted.get('steps')} step(s))")
    return png


def deploy_checkpoint(workdir: Path, connection: list[str], job_id: str) -> None:
    """Save a weights-only checkpoint, serve it as a model deployment, chat with it, drop it."""
    on_job = [*connection, "--compact", "--job", job_id]
    saved = run_step("save a weights-only checkpoint to deploy", on_job, ["save", "--type", "weights-only"])
    checkpoint_id = saved.get("checkpoint_id")
    if not isinstance(checkpoint_id, str) or not checkpoint_id:
        raise DemoError(f"the save printed no checkpoint_id: {saved!r}")
    source = {"type": "checkpoint", "job_id": job_id, "checkpoint_id": checkpoint_id}
    deploy_and_chat(workdir, connection, source, checkpoint_id)


def deploy_and_chat(workdir: Path, connection: list[str], source: dict[str, Any], what: str) -> None:
    """Serve `source` as a model deployment, chat with it, drop it."""
    spec = {**DEPLOYMENT_SHAPE, "source": source}
    spec_file = workdir / "deployment.json"
    spec_file.write_text(json.dumps(spec, indent=2), encoding="utf-8")
    compact = [*connection, "--compact"]
    created = run_step(
        f"deploy {what}",
        compact,
        ["model-deployment", "create", str(spec_file), "--wait", "--timeout", str(DEPLOYMENT_WAIT_TIMEOUT_S)],
        plugins=DEPLOYMENT_PLUGIN,
    )
    deployment = created.get("deployment")
    if not isinstance(deployment, str) or created.get("status") != "READY":
        raise DemoError(f"the deployment is not READY: {created!r}")
    try:
        chat = ["chat", deployment, CHAT_MESSAGE, "--max-completion-tokens", str(CHAT_TOKENS)]
        answer = run_step("chat with it", compact, ["model-deployment", *chat], plugins=DEPLOYMENT_PLUGIN)
        if not isinstance(answer.get("content"), str):
            raise DemoError(f"the chat answer has no content: {answer!r}")
    finally:
        # Dropped also when the chat fails: a deployment is never reclaimed for idleness.
        dropped = run_step(
            "drop it", compact, ["model-deployment", "drop", deployment], plugins=DEPLOYMENT_PLUGIN
        )
    if dropped.get("dropped") is not True:
        raise DemoError(f"the deployment was not dropped: {dropped!r}")


def managed_run(workdir: Path, output_dir: Path, connection: list[str]) -> str:
    """A managed run: build a dataset, train until early stopping, plot, deploy the registered model."""
    compact = [*connection, "--compact"]
    dataset = run_step(
        "build a dataset from the bundled corpus (split, fingerprints, leakage gates, a label)",
        compact,
        ["datasets", "build", str(RUNS_CORPUS), "--label-field", "topic", "--wait"],
        plugins=RUNS_PLUGIN,
    )
    if dataset.get("status") != "succeeded" or dataset.get("violations"):
        raise DemoError(f"the dataset build did not succeed cleanly: {dataset!r}")
    spec_file = workdir / "run.json"
    spec_file.write_text(
        json.dumps({"dataset_id": dataset["dataset_id"], **RUN_SPEC}, indent=2), encoding="utf-8"
    )
    run = run_step(
        "start a managed run and wait for it (it stops early)",
        compact,
        ["runs", "start", str(spec_file), "--wait"],
        plugins=RUNS_PLUGIN,
    )
    if run.get("status") != "succeeded" or not run.get("early_stop") or run["step"] >= run["total_steps"]:
        raise DemoError(f"the run did not end succeeded below its budget after an early stop: {run!r}")
    _heading(
        f"run {run['run_id']} stopped early at step {run['early_stop']['step']} and cooled down to step "
        f"{run['step']} of at most {run['total_steps']}; best validation loss {run['best_val_loss']:.4f}"
    )
    tail = max(0, int(run["step"]) - 3)
    run_step(
        "its last metric points",
        compact,
        ["runs", "metrics", run["run_id"], "--after-step", str(tail)],
        plugins=RUNS_PLUGIN,
    )
    png = output_dir / "run.png"
    run_step(
        "plot its losses, learning rate and epoch",
        compact,
        ["runs", "plot", run["run_id"], "--output", str(png)],
        plugins=RUNS_PLUGIN,
    )
    model_id = run.get("model_id")
    if not isinstance(model_id, str):
        raise DemoError(f"the run registered no model: {run!r}")
    deploy_and_chat(workdir, connection, {"type": "registered_model", "model_id": model_id}, model_id)
    return str(png)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python examples/demo.py", description="Run the ct demo against a fresh local server."
    )
    parser.add_argument(
        "--output-dir",
        type=Path,
        help="where the downloaded metrics and the plot are kept (default: a new folder under the temp dir)",
    )
    options = parser.parse_args(argv)
    output_dir: Path = options.output_dir or Path(tempfile.mkdtemp(prefix="ct-demo-output-"))
    output_dir.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="ct-demo-") as workdir:
            run_demo(Path(workdir), output_dir)
    except DemoError as exc:
        sys.stderr.write(f"demo failed: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("demo interrupted\n")
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
