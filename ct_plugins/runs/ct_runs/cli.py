"""`ct datasets ...` and `ct runs ...`: the command line over `client.datasets` and `client.runs`.

Every command prints JSON on stdout and progress on stderr, and fails as every `ct` command does
(`error: ...` plus a hint, exit 1; a usage error exits 2; Ctrl+C 130). The followers
(`metrics --follow`, `logs --follow`) print one compact JSON document per line as the pages or
entries arrive, so their output is JSON Lines. A wait that ends in a failed or cancelled run (or a
failed build) prints the record and exits 1.

`ct runs serve` runs the service itself (ct_runs.serve), against the Cortex Training service the
global connection options name. Nothing heavy is imported at module level: the SDK, DBOS,
matplotlib and the service are imported inside the commands, so `ct --help` stays fast.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from cyclopts import App, Parameter

from ct_cli import context, output

datasets_app = App(name="datasets", help="Build fingerprinted, leakage-checked datasets for runs.")
runs_app = App(
    name="runs", help="Start, watch, plot and cancel managed training runs; serve the runs service."
)

RunStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]

#: The parameters several commands share, with their help.
RunId = Annotated[str, Parameter(help="The run id, run_<ULID>.")]
WaitTimeout = Annotated[
    float | None, Parameter(help="Seconds --wait may take (default: the global --poll-timeout).")
]
WaitForRun = Annotated[
    bool, Parameter(negative=(), help="Wait until the run has ended, showing its progress on a terminal.")
]
FollowPoll = Annotated[
    float | None,
    Parameter(help="Seconds between reads with --follow (default: the global --poll-interval)."),
]

#: Where `ct runs serve` keeps its state unless --state-dir says otherwise (under XDG_DATA_HOME).
STATE_SUBDIR = Path("cortex-training") / "runs-service"
#: The environment variable that holds the webhook HMAC secret unless --webhook-secret-env names another.
DEFAULT_WEBHOOK_SECRET_ENV = "CT_RUNS_WEBHOOK_SECRET"
DEFAULT_SERVE_PORT = 8085


#: The next step printed under a "not found" error, by what the command names.
RUN_NOT_FOUND_HINT = "check the run id (ct runs list shows this schema's runs), --database and --schema"
DATASET_NOT_FOUND_HINT = (
    "check the dataset id, --database and --schema (a build is kept in the schema it was made in)"
)
SPEC_NOT_FOUND_HINT = "the spec's dataset_id must name a dataset build of this schema (ct datasets get DS)"


def _client() -> Any:
    return context.client()


@contextmanager
def _not_found(hint: str) -> Iterator[None]:
    """A "not found" from the service leaves with `hint` (the CLI's generic one speaks of jobs)."""
    from ct_core.errors import NotFoundError

    try:
        yield
    except NotFoundError as exc:
        if not exc.hint:
            exc.hint = hint
        raise


def _usage(message: str) -> Exception:
    from ct_cli.app import UsageError

    return UsageError(message)


def _jsonl(value: Any) -> None:
    """One compact JSON document on its own line (the followers' output)."""
    output.emit_text(output.render_json(value, compact=True))


def _interrupted(what: str, hint: str) -> int:
    output.error(f"interrupted; {what} goes on", hint=hint)
    return output.EXIT_INTERRUPTED


# --- ct datasets ---------------------------------------------------------------------------------


@datasets_app.command
def build(
    file: Annotated[
        str, Parameter(allow_leading_hyphen=True, help="The JSONL file to upload, or - for stdin.")
    ],
    /,
    *,
    text_field: Annotated[str, Parameter(help="The key holding the text of text and labels rows.")] = "text",
    label_field: Annotated[
        list[str] | None,
        Parameter(
            negative=(),
            consume_multiple=False,
            help="A key of each row that holds a label (repeat the flag for several).",
        ),
    ] = None,
    val_fraction: Annotated[
        float, Parameter(help="Share of rows for validation (greater than 0, at most 0.5).")
    ] = 0.1,
    seed: Annotated[int, Parameter(help="Seed of the deterministic train/validation split.")] = 0,
    name: Annotated[str | None, Parameter(help="A name for people; the id stays the reference.")] = None,
    wait: Annotated[bool, Parameter(negative=(), help="Wait until the build succeeds or fails.")] = False,
    timeout: WaitTimeout = None,
) -> int:
    """Upload a JSONL file and build a dataset from it: row format, splits, fingerprints, leakage gates.

    One JSON object per line, all of one shape (the printed Dataset names it):
    chat: {"messages": [{"role": "user", "content": "Hi"},
                        {"role": "assistant", "content": "Hello!"}]}
    prompt/completion: {"prompt": "2+2=", "completion": "4"}
    text: {"text": "..."} (another key with --text-field)
    labels: the text plus the --label-field keys
    With --wait, prints the Dataset once settled; a failed build exits 1.
    """
    from ct_core.errors import ValidationError
    from ct_core.runs.datasets import check_val_fraction, read_source

    try:
        # Before the file is read or anything is sent: the service would refuse it after the upload.
        check_val_fraction(val_fraction, "--val-fraction")
    except ValidationError as exc:
        raise _usage(str(exc)) from None
    source: str | bytes = file
    if file == "-":
        source = context.current().stdin.read().encode("utf-8")
    data = read_source(source)
    datasets = _client().datasets
    where = "stdin" if file == "-" else file
    output.progress(f"uploading {len(data)} bytes from {where}")
    dataset = datasets.build(
        data,
        text_field=text_field,
        label_fields=label_field or (),
        val_fraction=val_fraction,
        seed=seed,
        name=name,
    )
    if not wait:
        output.emit(dataset)
        return output.EXIT_OK
    dataset_id = str(dataset.get("dataset_id", ""))
    return _wait_for_dataset(datasets, dataset_id, timeout)


def ended_line(what: str, ident: str, record: Mapping[str, Any]) -> str:
    """`dataset ds_... ended failed: <the service's message> (<code>)`: the error in words, never a repr."""
    from ct_core.errors import describe_service_error

    said = describe_service_error(record.get("error"))
    return f"{what} {ident} ended {record.get('status')}" + (f": {said}" if said else "")


def _settled(
    wait: Callable[[], Mapping[str, Any]],
    what: str,
    ident: str,
    *,
    interrupted: tuple[str, str],
    hint: Callable[[Mapping[str, Any]], str | None],
) -> int:
    """Print the record `wait` ends with; exit 1 with `what ident ended ...` and `hint(record)`
    unless it succeeded. Ctrl+C stops the wait alone (`interrupted` says what goes on, and the next
    step); running out of time prints the last record read, then raises."""
    from ct_core.errors import RunWaitTimeout

    try:
        record = wait()
    except KeyboardInterrupt:
        return _interrupted(*interrupted)
    except RunWaitTimeout as exc:
        output.emit(exc.last)
        raise
    output.emit(record)
    if record.get("status") != "succeeded":
        output.error(ended_line(what, ident, record), hint=hint(record))
        return output.EXIT_ERROR
    return output.EXIT_OK


def _wait_for_dataset(datasets: Any, dataset_id: str, timeout: float | None) -> int:
    def wait() -> Mapping[str, Any]:
        output.progress(f"building {dataset_id}; waiting until it settles")
        return datasets.wait(dataset_id, timeout=timeout)

    def hint(dataset: Mapping[str, Any]) -> str | None:
        violations = dataset.get("violations") or []
        if not violations:
            return None
        return f"{len(violations)} leakage violation(s) are listed in the printed report"

    return _settled(
        wait,
        "dataset",
        dataset_id,
        interrupted=(f"the build of {dataset_id}", f"read it later with ct datasets get {dataset_id}"),
        hint=hint,
    )


@datasets_app.command
def get(dataset_id: Annotated[str, Parameter(help="The dataset id, ds_<ULID>.")], /) -> None:
    """Print a dataset build: status, splits, fingerprints, labels and violations."""
    with _not_found(DATASET_NOT_FOUND_HINT):
        output.emit(_client().datasets.get(dataset_id))


# --- ct runs: start and read ----------------------------------------------------------------------


def _read_spec(spec: str) -> Any:
    if spec != "-":
        return spec
    from ct_core.runs.runs import parse_run_spec

    return parse_run_spec(context.current().stdin.read(), "on stdin")


#: The flag that sets each field of a spec, for refusals of a value a flag gave.
FLAG_OF_FIELD = {
    "dataset_id": "--dataset",
    "model": "--model",
    "validation_dataset_id": "--validation-dataset",
    "seed": "--seed",
    "trainer.epochs": "--epochs",
    "trainer.learning_rate": "--learning-rate",
    "trainer.batch_tokens": "--batch-tokens",
}


def spec_with_flags(body: Mapping[str, Any], flags: Mapping[str, Any]) -> dict[str, Any]:
    """The spec with each flag given (a spec field: ``dataset_id``, ``trainer.epochs``, ...) set.

    A flag replaces the field and OpenAI's name of the same setting (``--epochs`` drops the
    file's ``n_epochs``), so the flag is what the run gets.
    """
    from ct_runs.spec import ALIASES

    out = dict(body)
    trainer = dict(out.get("trainer") or {})
    for field, value in flags.items():
        if value is None:
            continue
        if field.startswith("trainer."):
            key = field.removeprefix("trainer.")
            trainer[key] = value
            for alias, target in ALIASES.items():
                if target == key:
                    out.pop(alias, None)
        else:
            out[field] = value
    if trainer:
        out["trainer"] = trainer
    return out


def check_spec_locally(body: Mapping[str, Any], flags: Mapping[str, Any]) -> None:
    """Refuse, before anything is sent, what the service's own spec check would refuse.

    The same check the service runs first (ct_runs.spec.parse_spec: the spec's JSON schema, then
    the rules a schema cannot say); what needs the dataset, the catalog or the registry is left to
    the service. A field a flag set is named with its flag.
    """
    from ct_core.errors import ValidationError
    from ct_runs.errors import RunsRefusal
    from ct_runs.spec import parse_spec

    try:
        parse_spec(body)
    except RunsRefusal as refusal:
        message = refusal.message
        flag = FLAG_OF_FIELD.get(refusal.field or "")
        if flag is not None and flags.get(refusal.field or "") is not None and refusal.field:
            message = message.replace(refusal.field, f"{refusal.field} ({flag})", 1)
        raise ValidationError(message) from None


@runs_app.command
def start(
    spec: Annotated[
        str | None,
        Parameter(
            allow_leading_hyphen=True,
            help="A run spec: a JSON file, or - for stdin (optional; the flags override its fields).",
        ),
    ] = None,
    /,
    *,
    dataset: Annotated[str | None, Parameter(help="The dataset build to train on (ds_...).")] = None,
    model: Annotated[
        str | None,
        Parameter(help="A catalog base model (e.g. Qwen/Qwen3-1.7B) or a registered model id (mdl_...)."),
    ] = None,
    epochs: Annotated[int | None, Parameter(help="Passes over the train split (default 10).")] = None,
    learning_rate: Annotated[
        float | None, Parameter(help="The peak learning rate (default: the model's).")
    ] = None,
    batch_tokens: Annotated[
        int | None, Parameter(help="Tokens per optimizer step (default: the model's).")
    ] = None,
    validation_dataset: Annotated[
        str | None, Parameter(help="A separate dataset build to validate on (ds_...).")
    ] = None,
    seed: Annotated[int | None, Parameter(help="The run's seed (default 0).")] = None,
    wait: WaitForRun = False,
    timeout: WaitTimeout = None,
) -> int:
    """Start a training run on a dataset build, from flags, a JSON spec, or both.

    `ct runs start --dataset DS [--model NAME] [--epochs N] ...` needs no file; a SPEC.json
    ({dataset_id, model, validation_dataset_id, model_config_tier, labels, seed, overrides, trainer})
    reaches every setting, and the flags override its fields. Prints the Run (the same run again
    for an identical spec still in flight).

    With --wait, a terminal shows a live progress line and a summary at the end; piped, only the
    ended run is printed. A failed or cancelled run exits 1.
    """
    from ct_core.runs.runs import load_run_spec

    if spec is None and dataset is None:
        raise _usage("give the dataset to train on: --dataset DS (or a SPEC.json file that names it)")
    body = load_run_spec(_read_spec(spec)) if spec is not None else {}
    flags = {
        "dataset_id": dataset,
        "model": model,
        "validation_dataset_id": validation_dataset,
        "seed": seed,
        "trainer.epochs": epochs,
        "trainer.learning_rate": learning_rate,
        "trainer.batch_tokens": batch_tokens,
    }
    body = spec_with_flags(body, flags)
    check_spec_locally(body, flags)
    runs = _client().runs
    with _not_found(SPEC_NOT_FOUND_HINT):
        run = runs.start(body)
    if not wait:
        output.emit(run)
        return output.EXIT_OK
    return _wait_for_run(runs, str(run.get("run_id", "")), timeout, status=str(run.get("status")))


def _stderr_is_terminal() -> bool:
    isatty = getattr(output.current().stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _wait_for_run(runs: Any, run_id: str, timeout: float | None, *, status: str) -> int:
    """Wait for the run's end: a live progress line and a summary on a terminal, silence otherwise;
    then the ended run on stdout (exit 1 unless it succeeded)."""

    def wait() -> Mapping[str, Any]:
        if _stderr_is_terminal():
            return watch_run(runs, run_id, timeout, status=status)
        return runs.wait(run_id, timeout=timeout)

    return _settled(
        wait,
        "run",
        run_id,
        interrupted=(f"run {run_id}", f"cancel it with ct runs cancel {run_id}"),
        hint=lambda run: f"see its logs with ct runs logs {run_id}",
    )


class RunProgress:
    """What the live line shows, from the run and its metric pages as they are read."""

    def __init__(self) -> None:
        self.run: dict[str, Any] = {}
        self.last: dict[str, float] = {}
        self.cursor = -1

    def update(self, run: Mapping[str, Any], page: Mapping[str, Any]) -> None:
        self.run = dict(run)
        series = page.get("series") or {}
        for name, points in series.items():
            for point in points or ():
                if isinstance(point, list | tuple) and len(point) == 2 and isinstance(point[1], int | float):
                    self.last[name] = float(point[1])
        cursor = page.get("cursor")
        if isinstance(cursor, int) and not isinstance(cursor, bool):
            self.cursor = max(self.cursor, cursor)

    def eta_seconds(self) -> float | None:
        """Seconds left at the measured throughput: the steps left times the tokens of a step."""
        step, total = int(self.run.get("step") or 0), int(self.run.get("total_steps") or 0)
        batch = (self.run.get("trainer") or {}).get("batch_tokens")
        speed = self.last.get("tokens_per_s")
        if self.run.get("status") in ("succeeded", "failed", "cancelled") or step >= total > 0:
            return 0.0
        if not speed or not isinstance(batch, int) or speed <= 0:
            return None
        return (total - step) * batch / speed

    def line(self) -> str:
        step, total = int(self.run.get("step") or 0), int(self.run.get("total_steps") or 0)
        parts = [f"step {step}/{total}", f"epoch {float(self.run.get('epoch') or 0.0):.2f}"]
        parts.append(f"train loss {_number(self.last.get('train_loss'))}")
        parts.append(f"val loss {_number(self.last.get('val_loss'))}")
        speed = self.last.get("tokens_per_s")
        parts.append(f"{speed:,.0f} tok/s" if speed is not None else "- tok/s")
        eta = self.eta_seconds()
        parts.append(f"ETA {_clock(eta)}" if eta is not None else "ETA -")
        return " · ".join(parts)

    def render(self) -> Any:
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        total = int(self.run.get("total_steps") or 0)
        grid = Table.grid(padding=(0, 1))
        grid.add_row(
            Text(str(self.run.get("status") or "starting"), style="bold"),
            ProgressBar(total=total or None, completed=int(self.run.get("step") or 0), width=24),
            Text(self.line(), no_wrap=True, overflow="ellipsis"),
        )
        return grid


def _number(value: float | None) -> str:
    return f"{value:.4f}" if value is not None else "-"


def _clock(seconds: float) -> str:
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def run_summary(run: Mapping[str, Any]) -> str:
    """One sentence on how a run ended: steps, the best validation, an early stop, its model."""
    run_id, status = run.get("run_id"), run.get("status")
    text = f"run {run_id} {status} at step {run.get('step', 0)}/{run.get('total_steps', 0)}"
    text += f" (epoch {float(run.get('epoch') or 0.0):.2f})"
    if run.get("best_val_loss") is not None:
        text += f"; best val loss {float(run['best_val_loss']):.4f} at step {run.get('best_step')}"
    stop = run.get("early_stop") or {}
    if stop.get("step") is not None:
        text += f"; stopped early at step {stop['step']} ({stop.get('reason')})"
    if run.get("model_id"):
        text += f"; model {run['model_id']} (ct runs deploy {run['model_id']})"
    elif status in ("failed", "cancelled"):
        text += f"; ct runs resume {run_id} trains on from its last checkpoint"
    return text + f"; {float(run.get('gpu_seconds') or 0.0):.1f} GPU seconds"


def watch_run(runs: Any, run_id: str, timeout: float | None, *, status: str) -> dict[str, Any]:
    """Poll the run and its metrics every poll interval, drawing the live line on stderr, until the
    run ends; then print its summary. Running out of time raises RunWaitTimeout (the run goes on)."""
    from rich.console import Console
    from rich.live import Live

    from ct_core.control.polling import PollSchedule
    from ct_core.errors import RunWaitTimeout, ValidationError
    from ct_core.runs import TERMINAL_RUN_STATUSES

    client = runs.client
    limit = client.poll_timeout if timeout is None else timeout
    if isinstance(limit, bool) or not isinstance(limit, int | float) or limit <= 0:
        raise ValidationError(f"--timeout must be a positive number of seconds, got {limit!r}")
    interval = float(client.poll_interval)
    schedule = PollSchedule(
        interval=interval, timeout=float(limit), multiplier=1.0, max_interval=interval, sleep=client.sleep
    )
    console = Console(file=output.current().stderr, highlight=False)
    console.print(f"run {run_id} is {status}; waiting until it ends (Ctrl+C stops waiting, not the run)")
    view = RunProgress()
    with Live(view.render(), console=console, auto_refresh=False, transient=False) as live:
        while True:
            run = runs.get(run_id)
            view.update(run, runs.metrics(run_id, after_step=view.cursor))
            live.update(view.render(), refresh=True)
            if run.get("status") in TERMINAL_RUN_STATUSES:
                break
            if schedule.expired():
                raise RunWaitTimeout(
                    f"run {run_id} is still {run.get('status')} after {limit:g}s; it goes on, "
                    f"read it later with ct runs get {run_id}",
                    last=run,
                )
            schedule.wait()
    console.print(run_summary(run), soft_wrap=True)
    return run


@runs_app.command(name="list")
def list_runs(
    *,
    status: Annotated[RunStatus | None, Parameter(help="Only runs in this status.")] = None,
    limit: Annotated[
        int | None, Parameter(help="At most this many runs (the service's default: 100).")
    ] = None,
) -> None:
    """List the schema's runs, newest first: {"runs": [...]}."""
    output.emit({"runs": _client().runs.list(status=status, limit=limit)})


@runs_app.command(name="get")
def get_run(run_id: RunId, /) -> None:
    """Print a run: status, fingerprints, resolved trainer, progress, checkpoints and outcome."""
    with _not_found(RUN_NOT_FOUND_HINT):
        output.emit(_client().runs.get(run_id))


@runs_app.command
def cancel(run_id: RunId, /) -> None:
    """Cancel a run: a queued one ends at once, a running one after a final checkpoint."""
    with _not_found(RUN_NOT_FOUND_HINT):
        output.emit(_client().runs.cancel(run_id))


# --- ct runs: the registered model, resume, deploy, chat ------------------------------------------

MODEL_NOT_FOUND_HINT = (
    "check the model id (ct runs models lists this schema's models), --database and --schema"
)

#: What a registered model's status means, for `ct runs model`.
MODEL_STATUS_MEANING = {
    "training": (
        "registered from its run's best checkpoint (exported weights-only); it can be deployed now "
        "(ct runs deploy), and evaluation and promotion gates take it from here"
    ),
}


@runs_app.command
def models(
    run_id: Annotated[str | None, Parameter(help="Only the model this run registered (run_...).")] = None,
    /,
    *,
    limit: Annotated[
        int | None, Parameter(help="At most this many models (the service's default: 100).")
    ] = None,
) -> None:
    """List the models runs of this schema registered, newest first: {"models": [...]}."""
    with _not_found(RUN_NOT_FOUND_HINT):
        output.emit({"models": _client().runs.models(run_id=run_id, limit=limit)})


def explained_model(model: Mapping[str, Any]) -> dict[str, Any]:
    """The registered model with `status_explained`: what its status means, in words."""
    status = str(model.get("status") or "")
    meaning = MODEL_STATUS_MEANING.get(status, f"the registry's status {status!r}")
    how = model.get("status_detail")
    return {**model, "status_explained": f"{status}: {meaning}" + (f"; {how}" if how else "")}


@runs_app.command
def model(model_id: Annotated[str, Parameter(help="The registered model id, mdl_<ULID>.")], /) -> None:
    """Print a registered model: source run, checkpoint, chat template, and its status explained."""
    with _not_found(MODEL_NOT_FOUND_HINT):
        output.emit(explained_model(_client().runs.get_model(model_id)))


@runs_app.command
def register(run_id: RunId, /) -> None:
    """Register the model of a cancelled run from its best checkpoint; prints the model.

    A run that has a model (a succeeded one, or one registered before) prints that model.
    """
    with _not_found(RUN_NOT_FOUND_HINT):
        output.emit(explained_model(_client().runs.register(run_id)))


@runs_app.command
def resume(
    run_id: RunId,
    /,
    *,
    wait: WaitForRun = False,
    timeout: WaitTimeout = None,
) -> int:
    """Resume a failed or cancelled run from its last resumable checkpoint; prints the run.

    It trains on exactly as it would have without the interruption. With --wait, as ct runs start
    --wait: a failed or cancelled end exits 1.
    """
    runs = _client().runs
    with _not_found(RUN_NOT_FOUND_HINT):
        run = runs.resume(run_id)
    if not wait:
        output.emit(run)
        return output.EXIT_OK
    return _wait_for_run(runs, run_id, timeout, status=str(run.get("status")))


@runs_app.command
def deploy(
    run_or_model: Annotated[str, Parameter(help="A run id (its registered model) or a model id (mdl_...).")],
    /,
    *,
    wait: Annotated[bool, Parameter(negative=(), help="Wait until the deployment is READY.")] = False,
    timeout: WaitTimeout = None,
) -> None:
    """Deploy the model a run registered: one replica on one GPU, answering OpenAI's API.

    Prints {"deployment", "status", "base_url", "model_id", "run_id", ...}: point an OpenAI client
    at base_url with the deployment id as the model. Drop it with ct model-deployment drop.
    """
    with _not_found(RUN_NOT_FOUND_HINT):
        record = _client().runs.deploy(run_or_model, wait=wait, timeout=timeout)
    output.progress(
        f"deployment {record['deployment']} of model {record['model_id']} is {record.get('status')}; "
        f"OpenAI base URL {record['base_url']} (model {record['deployment']})"
    )
    output.emit(record)


@runs_app.command
def chat(
    run_or_model: Annotated[str, Parameter(help="A run id (its registered model) or a model id (mdl_...).")],
    prompt: Annotated[str, Parameter(help="The user message to send.")],
    /,
    *,
    max_completion_tokens: Annotated[int, Parameter(help="Most tokens to generate.")] = 64,
    timeout: Annotated[
        float | None,
        Parameter(help="Seconds a new deployment may take to be READY (default: the global --poll-timeout)."),
    ] = None,
) -> None:
    """Ask a run's model one question through its deployment (created first when it has none).

    Prints {"content", "finish_reason", "deployment", "base_url", "created", ...}; a deployment made
    here keeps running until dropped (ct model-deployment drop).
    """
    with _not_found(RUN_NOT_FOUND_HINT):
        answer = _client().runs.chat(
            run_or_model, prompt, max_completion_tokens=max_completion_tokens, timeout=timeout
        )
    if answer["created"]:
        output.progress(
            f"created deployment {answer['deployment']} of model {answer['model_id']} for this chat; "
            f"it keeps running: drop it with ct model-deployment drop {answer['deployment']}"
        )
    output.emit(answer)


# --- ct runs: metrics and logs --------------------------------------------------------------------


@runs_app.command
def metrics(
    run_id: RunId,
    /,
    *,
    after_step: Annotated[int | None, Parameter(help="Only points after this step.")] = None,
    follow: Annotated[
        bool, Parameter(negative=(), help="Keep printing new pages, one JSON line each, until the run ends.")
    ] = False,
    poll: FollowPoll = None,
) -> int:
    """Print the run's metric series {"series": {name: [[step, value], ...]}, "cursor"}.

    Series: train_loss, val_loss, lr, epoch, tokens_per_s and val_accuracy/<label> per label.
    """
    runs = _client().runs
    try:
        with _not_found(RUN_NOT_FOUND_HINT):
            if not follow:
                output.emit(runs.metrics(run_id, after_step=after_step))
                return output.EXIT_OK
            for page in runs.follow_metrics(run_id, after_step=after_step, poll=poll):
                _jsonl(page)
    except KeyboardInterrupt:
        return _interrupted(f"run {run_id}", "follow again with --after-step set to the last cursor")
    return output.EXIT_OK


def log_line(entry: Mapping[str, Any]) -> str:
    """A log entry as a person reads it: `08:59:19 INFO    step 54: validation loss 2.330412`."""
    stamp = str(entry.get("timestamp") or "")
    clock = stamp[11:19] if len(stamp) >= 19 and stamp[10] == "T" else stamp
    return f"{clock} {entry.get('severity') or ''!s:<7} {entry.get('message', '')}"


@runs_app.command
def logs(
    run_id: RunId,
    /,
    *,
    structured: Annotated[
        bool, Parameter(negative=(), help="Add step, epoch, event and the known losses, throughput and lr.")
    ] = False,
    after: Annotated[int, Parameter(help="Only entries after this sequence number (a cursor).")] = 0,
    limit: Annotated[int | None, Parameter(help="At most this many entries (without --follow).")] = None,
    follow: Annotated[
        bool,
        Parameter(
            negative=(),
            help="Print entries as they come, until the run ends: lines on a terminal, JSON lines otherwise.",
        ),
    ] = False,
    json_lines: Annotated[
        bool, Parameter(name="--json", negative=(), help="With --follow, JSON lines on a terminal too.")
    ] = False,
    poll: FollowPoll = None,
) -> int:
    """Print the run's log {"logs": [{timestamp, severity, message, ...}], "cursor"}.

    With --follow, each entry as it comes: `time severity message` lines on a terminal, one JSON
    document per line with --json or when piped.
    """
    runs = _client().runs
    readable = follow and not json_lines and output.stdout_is_terminal() and not structured
    try:
        with _not_found(RUN_NOT_FOUND_HINT):
            if not follow:
                output.emit(runs.logs(run_id, structured=structured, after=after, limit=limit))
                return output.EXIT_OK
            for entry in runs.follow_logs(run_id, structured=structured, after=after, poll=poll):
                if readable:
                    output.emit_text(output.printable(log_line(entry)))
                else:
                    _jsonl(entry)
    except KeyboardInterrupt:
        return _interrupted(
            f"run {run_id}", "follow again with --after set to the last entry's seq (--structured)"
        )
    return output.EXIT_OK


def _all_metrics(runs: Any, run_id: str) -> dict[str, Any]:
    """Every point of every series, read page after page until a page brings nothing new."""
    merged: dict[str, list[Any]] = {}
    cursor = -1
    while True:
        page = runs.metrics(run_id, after_step=cursor)
        series = page.get("series") or {}
        fresh = False
        for name, points in series.items():
            if points:
                merged.setdefault(name, []).extend(points)
                fresh = True
        next_cursor = page.get("cursor")
        if not fresh or not isinstance(next_cursor, int) or next_cursor <= cursor:
            return {"series": merged, "cursor": cursor if not isinstance(next_cursor, int) else next_cursor}
        cursor = next_cursor


@runs_app.command
def plot(
    run_id: RunId,
    /,
    *,
    output_file: Annotated[
        Path | None, Parameter(name="--output", help="The PNG file to write (default: ./<RUN_ID>.png).")
    ] = None,
) -> None:
    """Plot train and validation loss, learning rate and epoch over the steps as a PNG.

    An early stop is marked on every panel. Prints {"run_id", "status", "output", "points"}.
    """
    from ct_runs.plot import check_output, plot_run

    target = check_output(output_file or Path(f"{run_id}.png"))
    runs = _client().runs
    with _not_found(RUN_NOT_FOUND_HINT):
        run = runs.get(run_id)
        series = _all_metrics(runs, run_id)
    written = plot_run(series, run, target)
    output.emit(
        {
            "run_id": run_id,
            "status": run.get("status"),
            "output": str(written.resolve()),
            "points": {name: len(points) for name, points in sorted(series["series"].items())},
        }
    )


# --- ct runs serve --------------------------------------------------------------------------------


def default_state_dir() -> Path:
    """`$XDG_DATA_HOME/cortex-training/runs-service`, or under ~/.local/share without XDG_DATA_HOME."""
    from ct_core.fs import service_state_dir

    return service_state_dir(STATE_SUBDIR.name)


@runs_app.command
def serve(
    *,
    host: Annotated[str, Parameter(help="Address to listen on; keep it on loopback.")] = "127.0.0.1",
    port: Annotated[int, Parameter(help="Port to listen on; 0 picks a free one.")] = DEFAULT_SERVE_PORT,
    state_dir: Annotated[
        Path | None,
        Parameter(
            help="Folder of the service's state (default: $XDG_DATA_HOME/cortex-training/runs-service)."
        ),
    ] = None,
    database_url: Annotated[
        str | None,
        Parameter(
            help="The DBOS system database, e.g. postgresql://... (default: SQLite under the state dir)."
        ),
    ] = None,
    worker: Annotated[
        bool, Parameter(negative=(), help="Only run workflows from the shared database; serve no HTTP.")
    ] = False,
    front: Annotated[
        bool,
        Parameter(
            negative=(), help="Serve HTTP only; --worker processes on the --database-url run the workflows."
        ),
    ] = False,
    concurrency: Annotated[
        int, Parameter(help="At most this many runs train at once, over all workers.")
    ] = 1,
    webhook_url: Annotated[
        list[str] | None,
        Parameter(negative=(), consume_multiple=False, help="Send run.completed webhooks here (repeatable)."),
    ] = None,
    webhook_secret_env: Annotated[
        str, Parameter(help="The environment variable that holds the webhooks' HMAC secret.")
    ] = DEFAULT_WEBHOOK_SECRET_ENV,
    executor_id: Annotated[
        str | None, Parameter(help="This process's DBOS executor id (default: chosen by the service).")
    ] = None,
    ready_file: Annotated[
        Path | None, Parameter(help='Write {"base_url", "pid"} here once the service accepts connections.')
    ] = None,
) -> int:
    """Run the runs service in the foreground, driving the Cortex Training service of the global options.

    Workers (--worker) sharing one Postgres --database-url split the runs and recover each other's;
    a --front process serves their HTTP routes.
    """
    if not 0 <= port <= 65535:
        raise _usage(f"--port must be between 0 and 65535, got {port}")
    if front and worker:
        raise _usage("--front serves HTTP only and --worker runs workflows only: pass one of them")
    if front and not database_url:
        raise _usage("--front needs the workers' shared --database-url (postgresql://...)")
    if concurrency < 1:
        raise _usage(f"--concurrency must be at least 1, got {concurrency}")
    if not webhook_secret_env.strip():
        raise _usage("--webhook-secret-env names an environment variable; it cannot be empty")
    for url in webhook_url or []:
        if not url.startswith(("http://", "https://")):
            raise _usage(f"--webhook-url must be an http:// or https:// URL, got {url!r}")
    # The secret itself never appears on the command line (nor in a process listing).
    secret = os.environ.get(webhook_secret_env) or None
    if secret is None and webhook_secret_env != DEFAULT_WEBHOOK_SECRET_ENV:
        raise _usage(f"--webhook-secret-env {webhook_secret_env}: that environment variable is not set")
    client = _client()
    from ct_runs.serve import run_service

    return run_service(
        client,
        host=host,
        port=port,
        state_dir=(state_dir or default_state_dir()).expanduser(),
        database_url=database_url,
        worker_only=worker,
        concurrency=concurrency,
        webhook_urls=list(webhook_url or []),
        webhook_secret=secret,
        executor_id=executor_id,
        ready_file=ready_file,
        execute=not front,
    )
