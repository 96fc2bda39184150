"""`make demo`: fine-tune the tiny model on a small chat task and chat with it, then a job's whole life.

Starts `python -m ct_local serve` on a free loopback port with a temporary state dir, then runs
the real `ct` command line against it, one subprocess per step, exactly as a user would type it.

First, **fine-tune and chat** (about a minute on two CPU cores): build a dataset from the bundled
chat rows of `examples/data/shout.jsonl` (the user sends `shout kqz`, the assistant answers `KQZ`),
start a managed run on it (`ct runs start --dataset ... --wait`) and wait for the end, show its last
metrics and plot them, deploy the base model and the model the run registered (`ct runs deploy`),
ask the fine-tuned one a quick question (`ct runs chat`), ask both the held-out questions of
`examples/data/shout-heldout.jsonl` (words the run never saw) through the `openai` package, and
print their answers side by side with each model's accuracy. The demo fails unless the fine-tuned
model answers at least 90 % of them exactly and the base model at most 20 %.

Then the low-level path, by hand: submit a job with a training and a sampling sub-job, wait for it,
get it, list jobs, list its checkpoints; train a few steps (`ct fwd-bwd` + `ct step`) and show the
loss falling, save a checkpoint, take one more step, load the checkpoint back and check that the
loss is the one seen at save time; sync the weights into the sampler and generate from one prompt
before training and after the sync (both the output of a barely trained model, labelled so);
download the job's metrics and plot them as a PNG (both kept in --output-dir, by default a new
folder under the temp dir); deploy a weights-only checkpoint as a model deployment, chat with it
and drop it; show `ct capacity` (the capacity plugin); and cancel the job.

Each step's command line is shown as a heading on stderr and what it printed follows on stdout.
The server is stopped at the end, also on failure or Ctrl+C; the exit code is non-zero when any
step fails (including an accuracy below its target, a loss that does not fall, or a reload that
does not restore the weights).
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
from dataclasses import dataclass
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
#: The fine-tune: the plugin the runs commands come from, the bundled task (written by
#: examples/data/make_shout.py: chat rows `shout kqz` -> `KQZ`, and held-out rows whose words the
#: training file never has), the base model (tier S's; deployed as it is for the comparison, the
#: tiny model's random weights) and the flags of `ct runs start`. A row is about 40 tokens and
#: gets a packed row of its own; 4096 batch tokens over the model's 256-token rows are 16 rows a
#: step, so ten epochs of the 360 training rows are at most 230 steps. The tiny model answers
#: every held-out question from about step 140 on, whatever the seed: the rest is the margin.
RUNS_PLUGIN = "runs"
#: `ct runs deploy` and `ct runs chat` serve a run's model through the model-deployment plugin.
RUNS_AND_DEPLOYMENTS = f"{RUNS_PLUGIN},{DEPLOYMENT_PLUGIN}"
DATA_DIR = Path(__file__).resolve().parent / "data"
TASK_FILE = DATA_DIR / "shout.jsonl"
HELDOUT_FILE = DATA_DIR / "shout-heldout.jsonl"
BASE_MODEL = "Qwen/Qwen3-0.6B"
FINE_TUNE_FLAGS = [
    *("--model", BASE_MODEL, "--epochs", "10", "--batch-tokens", "4096"),
    *("--learning-rate", "0.003", "--seed", "0"),
]
#: What the demo promises, and fails without: the fine-tuned model answers at least this share of
#: the held-out questions exactly, the base model at most that share.
FINE_TUNED_MIN_ACCURACY = 0.9
BASE_MAX_ACCURACY = 0.2
#: Enough for a three-letter answer and the end of the turn; a model that rambles is cut here.
ANSWER_TOKENS = 8
#: The widest answer the side-by-side table shows before cutting it short.
ANSWER_COLUMN = 22
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
        outcome = fine_tune_and_chat(workdir, output_dir, connection)
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
        run_step("show GPU capacity (the capacity plugin)", connection, ["capacity"], plugins=CAPACITY_PLUGIN)
        run_step("cancel it", connection, ["cancel", job_id])
        final = run_step("its record after the cancel", connection, ["--compact", "get", "--raw", job_id])
        _heading(
            f"done: the fine-tuned model answered {outcome.tuned_correct}/{len(outcome.rows)} held-out "
            f"questions (the base model {outcome.base_correct}); run plot {outcome.plot}; job {job_id} is "
            f"{final.get('status')}, its plot is at {png}"
        )
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
    # Five steps on two sentences move the weights but teach no language: both texts are an
    # untrained model's bytes rather than words, shown escaped, and labelled so.
    _heading(f"generated before training: {before!r} (random weights: random bytes)")
    _heading(f"generated after the sync:  {after!r} ({TRAIN_STEPS} steps teach no words: still bytes)")
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


def deploy(workdir: Path, connection: list[str], source: dict[str, Any], what: str) -> dict[str, Any]:
    """Serve `source` as a model deployment, READY; returns its summary (`deployment`, `base_url`)."""
    spec = {**DEPLOYMENT_SHAPE, "source": source}
    spec_file = workdir / "deployment.json"
    spec_file.write_text(json.dumps(spec, indent=2), encoding="utf-8")
    created = run_step(
        f"deploy {what}",
        [*connection, "--compact"],
        ["model-deployment", "create", str(spec_file), "--wait", "--timeout", str(DEPLOYMENT_WAIT_TIMEOUT_S)],
        plugins=DEPLOYMENT_PLUGIN,
    )
    if not isinstance(created.get("deployment"), str) or created.get("status") != "READY":
        raise DemoError(f"the deployment is not READY: {created!r}")
    if not isinstance(created.get("base_url"), str):
        raise DemoError(f"the READY deployment has no base_url: {created!r}")
    return dict(created)


def drop(connection: list[str], deployment: str) -> None:
    """Drop a deployment (a deployment is never reclaimed for idleness, so the demo always drops its own)."""
    compact = [*connection, "--compact"]
    args = ["model-deployment", "drop", deployment]
    dropped = run_step("drop it", compact, args, plugins=DEPLOYMENT_PLUGIN)
    if dropped.get("dropped") is not True:
        raise DemoError(f"the deployment was not dropped: {dropped!r}")


def deploy_and_chat(workdir: Path, connection: list[str], source: dict[str, Any], what: str) -> None:
    """Serve `source` as a model deployment, chat with it, drop it."""
    deployment = deploy(workdir, connection, source, what)["deployment"]
    try:
        chat = ["chat", deployment, CHAT_MESSAGE, "--max-completion-tokens", str(CHAT_TOKENS)]
        answer = run_step(
            "chat with it (an untrained model: its answer is bytes, not words)",
            [*connection, "--compact"],
            ["model-deployment", *chat],
            plugins=DEPLOYMENT_PLUGIN,
        )
        if not isinstance(answer.get("content"), str):
            raise DemoError(f"the chat answer has no content: {answer!r}")
    finally:
        drop(connection, deployment)


# --- fine-tune and chat ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Asked:
    """One held-out question, the answer taught for it, and what each model answered."""

    question: str
    expected: str
    base: str
    tuned: str


@dataclass(frozen=True)
class Outcome:
    """What the fine-tune-and-chat part found: each question's answers and the run's plot."""

    rows: list[Asked]
    plot: Path

    @property
    def base_correct(self) -> int:
        return sum(row.base == row.expected for row in self.rows)

    @property
    def tuned_correct(self) -> int:
        return sum(row.tuned == row.expected for row in self.rows)

    @property
    def base_accuracy(self) -> float:
        return self.base_correct / len(self.rows)

    @property
    def tuned_accuracy(self) -> float:
        return self.tuned_correct / len(self.rows)


def held_out_questions(path: Path = HELDOUT_FILE) -> list[tuple[str, str]]:
    """`(question, expected answer)` of each chat row of `path`: its user turn and its assistant turn."""
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        turns = {message["role"]: message["content"] for message in json.loads(line)["messages"]}
        if "user" not in turns or "assistant" not in turns:
            raise DemoError(f"{path.name} line {number}: a held-out row needs a user and an assistant turn")
        pairs.append((turns["user"], turns["assistant"]))
    if not pairs:
        raise DemoError(f"{path.name} holds no questions")
    return pairs


def ask(deployment: dict[str, Any], questions: list[str]) -> list[str]:
    """Each question as one user message to the deployment's OpenAI endpoint, answered greedily."""
    from openai import OpenAI

    # The local server takes no key unless it was started with tokens; the package wants one.
    client = OpenAI(base_url=deployment["base_url"], api_key=os.environ.get("OPENAI_API_KEY", "local"))
    answers = []
    with client:
        for question in questions:
            reply = client.chat.completions.create(
                model=deployment["deployment"],
                messages=[{"role": "user", "content": question}],
                max_completion_tokens=ANSWER_TOKENS,
                temperature=0,
            )
            answers.append(reply.choices[0].message.content or "")
    return answers


def _cell(text: str) -> str:
    """An answer as the table shows it: each character as it is when it is printable ASCII, else
    escaped (an untrained model's bytes are rarely text, and escapes keep the columns straight);
    cut to the column between two characters, never inside an escape, with `~` where it was cut."""
    shown = ""
    for character in text:
        piece = character if character.isascii() and character.isprintable() else ascii(character)[1:-1]
        if len(shown) + len(piece) > ANSWER_COLUMN - 1:
            return shown + "~"
        shown += piece
    return shown


def side_by_side(rows: list[Asked]) -> str:
    """The questions, the taught answers and both models' answers in columns, with each one's accuracy."""
    width = max(len("question"), *(len(row.question) for row in rows))
    header = (
        f"{'question':<{width}}  {'taught':<8}  {'base model (untrained)':<{ANSWER_COLUMN + 2}}  fine-tuned"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        base = f"{_cell(row.base):<{ANSWER_COLUMN}} {'ok' if row.base == row.expected else '--'}"
        tuned = f"{_cell(row.tuned)} {'ok' if row.tuned == row.expected else '--'}"
        lines.append(f"{row.question:<{width}}  {row.expected:<8}  {base:<{ANSWER_COLUMN + 2}}  {tuned}")
    total = len(rows)
    base_right = sum(row.base == row.expected for row in rows)
    tuned_right = sum(row.tuned == row.expected for row in rows)
    base_score = f"{base_right}/{total} = {base_right / total:.0%}"
    lines.append("-" * len(header))
    lines.append(
        f"{'accuracy':<{width}}  {'':<8}  {base_score:<{ANSWER_COLUMN + 2}}  "
        f"{tuned_right}/{total} = {tuned_right / total:.0%}"
    )
    return "\n".join(lines)


def fine_tune_and_chat(workdir: Path, output_dir: Path, connection: list[str]) -> Outcome:
    """Build the bundled chat task, fine-tune on it, deploy the base and the fine-tuned model, and
    compare their answers to the held-out questions; DemoError when an accuracy misses its target."""
    compact = [*connection, "--compact"]
    dataset = run_step(
        "build a dataset from the bundled chat rows (format, split, fingerprints, leakage gates)",
        compact,
        ["datasets", "build", str(TASK_FILE), "--wait"],
        plugins=RUNS_PLUGIN,
    )
    if dataset.get("status") != "succeeded" or dataset.get("violations") or dataset.get("format") != "chat":
        raise DemoError(f"the dataset build did not succeed cleanly as chat rows: {dataset!r}")
    run = run_step(
        "fine-tune: start a managed run and wait for it (about a minute on two CPU cores)",
        compact,
        ["runs", "start", "--dataset", dataset["dataset_id"], *FINE_TUNE_FLAGS, "--wait"],
        plugins=RUNS_PLUGIN,
    )
    model_id = run.get("model_id")
    if run.get("status") != "succeeded" or not isinstance(model_id, str):
        raise DemoError(f"the run did not succeed with a registered model: {run!r}")
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
    pairs = held_out_questions()
    questions = [question for question, _ in pairs]
    base = deploy(
        workdir, connection, {"type": "base_model", "model": BASE_MODEL}, f"the base model {BASE_MODEL}"
    )
    try:
        _heading(f"ask the base model the {len(questions)} held-out questions (the openai package)")
        base_answers = ask(base, questions)
    finally:
        drop(connection, base["deployment"])
    tuned = run_step(
        "deploy the model the run registered, in one command",
        compact,
        ["runs", "deploy", run["run_id"], "--wait", "--timeout", str(DEPLOYMENT_WAIT_TIMEOUT_S)],
        plugins=RUNS_AND_DEPLOYMENTS,
    )
    if tuned.get("status") != "READY" or not isinstance(tuned.get("base_url"), str):
        raise DemoError(f"the fine-tuned model's deployment is not READY: {tuned!r}")
    try:
        run_step(
            "a quick question to it (a word the run never saw)",
            compact,
            ["runs", "chat", run["run_id"], questions[0]],
            plugins=RUNS_AND_DEPLOYMENTS,
        )
        _heading(f"ask the fine-tuned model the {len(questions)} held-out questions (the openai package)")
        tuned_answers = ask(tuned, questions)
    finally:
        drop(connection, tuned["deployment"])
    rows = [
        Asked(question, expected, base, tuned)
        for (question, expected), base, tuned in zip(pairs, base_answers, tuned_answers, strict=True)
    ]
    _heading("held-out questions (words the run never saw), the base model and the fine-tuned one")
    sys.stdout.write(side_by_side(rows) + "\n")
    sys.stdout.flush()
    outcome = Outcome(rows=rows, plot=png)
    check_targets(outcome)
    return outcome


def check_targets(outcome: Outcome) -> None:
    """DemoError unless the fine-tuned model reached its accuracy and the base model stayed under its own."""
    if outcome.tuned_accuracy < FINE_TUNED_MIN_ACCURACY or outcome.base_accuracy > BASE_MAX_ACCURACY:
        raise DemoError(
            f"expected the fine-tuned model to answer at least {FINE_TUNED_MIN_ACCURACY:.0%} of the "
            f"held-out questions and the base model at most {BASE_MAX_ACCURACY:.0%}; they answered "
            f"{outcome.tuned_accuracy:.0%} and {outcome.base_accuracy:.0%}"
        )


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
