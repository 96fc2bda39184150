"""`ct runs` as people type it, against a real local server with the embedded runs service.

One server for the module; a dataset built once through `ct datasets build`. Runs started here are
cancelled once read, so the next test's run does not wait behind them.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import termios
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import CT_SCRIPT, CtResult, ct_runner

from ct_core.errors import ValidationError

DATABASE = "RUNS_CLI_DB"
#: Connection options for a server that is not there: reaching it would fail with a connection error.
NOWHERE = ["--base-url", "http://127.0.0.1:9", "--database", DATABASE]
#: Only bounds a hang: a run of a few steps on the tiny model ends well within it on a loaded machine.
HANG_S = 900
#: Terminal control sequences (colours, cursor moves) between the words a person reads.
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\r")


def in_terminal(*args: str) -> tuple[int, str]:
    """`ct ARGS...` with its stdin, stdout and stderr on a pseudo-terminal; (exit code, what it drew)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    env = {**os.environ, "CT_PLUGINS": "runs", "TERM": "xterm-256color", "COLUMNS": "160"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([CT_SCRIPT, *args], stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    drawn = bytearray()
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], HANG_S)
            assert ready, f"ct {args} drew nothing for {HANG_S}s: {bytes(drawn[-2000:])!r}"
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command has ended
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    return process.wait(timeout=HANG_S), ANSI.sub("", drawn.decode("utf-8", "replace"))


@pytest.fixture
def ct(ct_home: Path) -> Callable[..., CtResult]:
    return ct_runner("runs", timeout=600)


@pytest.fixture
def here(server: Any) -> list[str]:
    return ["--base-url", server.base_url, "--database", DATABASE]


@pytest.fixture(scope="module")
def dataset_id(server: Any, tmp_path_factory: pytest.TempPathFactory, kit: Any) -> str:
    corpus = kit.write_corpus(tmp_path_factory.mktemp("corpus") / "corpus.jsonl", kit.corpus_lines(rows=60))
    built = ct_runner("runs", timeout=600)(
        "--base-url", server.base_url, "--database", DATABASE,
        "datasets", "build", str(corpus), "--wait", "--timeout", "600",
    )  # fmt: skip
    assert built.returncode == 0, built
    return str(json.loads(built.stdout)["dataset_id"])


def _started(result: CtResult, ct: Callable[..., CtResult], here: list[str]) -> dict[str, Any]:
    assert result.returncode == 0, result
    run: dict[str, Any] = json.loads(result.stdout)
    cancelled = ct(*here, "runs", "cancel", run["run_id"])
    assert cancelled.returncode == 0, cancelled
    return run


# --- start: flags, a spec, both ---------------------------------------------------------------------


def test_start_without_a_spec_takes_every_setting_from_flags(
    ct: Callable[..., CtResult], here: list[str], dataset_id: str
) -> None:
    run = _started(
        ct(
            *here, "runs", "start", "--dataset", dataset_id, "--model", "qwen3-0.6b", "--epochs", "1",
            "--learning-rate", "0.002", "--batch-tokens", "512", "--seed", "3",
        ),
        ct,
        here,
    )  # fmt: skip
    assert run["dataset_id"] == dataset_id and run["model_name"] == "Qwen/Qwen3-0.6B"
    assert run["seed"] == 3
    trainer = run["trainer"]
    assert (trainer["epochs"], trainer["learning_rate"], trainer["batch_tokens"]) == (1, 0.002, 512)


def test_flags_override_the_fields_of_a_spec_file(
    ct: Callable[..., CtResult], here: list[str], dataset_id: str, tmp_path: Path
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "dataset_id": "ds_01xxxxxxxxxxxxxxxxxxxxxxxx",
                "seed": 1,
                "n_epochs": 4,
                "overrides": {"max_seq_len": 128},
                "trainer": {"batch_tokens": 1024, "patience": 2},
            }
        ),
        encoding="utf-8",
    )
    run = _started(
        ct(
            *here,
            "runs",
            "start",
            str(spec),
            "--dataset",
            dataset_id,
            "--epochs",
            "2",
            "--batch-tokens",
            "256",
        ),
        ct,
        here,
    )
    assert run["dataset_id"] == dataset_id and run["seed"] == 1  # the file's seed stays
    assert run["overrides"]["max_seq_len"] == 128
    trainer = run["trainer"]
    # --epochs replaces the file's n_epochs (OpenAI's name of the same setting).
    assert (trainer["epochs"], trainer["batch_tokens"], trainer["patience"]) == (2, 256, 2)


def test_a_spec_file_alone_still_starts_a_run(
    ct: Callable[..., CtResult], here: list[str], dataset_id: str, tmp_path: Path, kit: Any
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(kit.small_spec(dataset_id, epochs=3)), encoding="utf-8")
    run = _started(ct(*here, "runs", "start", str(spec)), ct, here)
    assert run["trainer"]["epochs"] == 3 and run["overrides"]["max_seq_len"] == 128


# --- start: refused before anything is sent -----------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (
            ["--dataset", "ds_1", "--epochs", "0"],
            ["trainer.epochs (--epochs) must be an integer in [1, 1000]"],
        ),
        (["--dataset", "ds_1", "--learning-rate", "2"], ["--learning-rate", "(0, 1]"]),
        (["--dataset", "ds_1", "--model", ""], ["model (--model) must be a non-empty string"]),
        (["--dataset", "ds_1", "--seed", "-1"], ["seed (--seed)"]),
    ],
)
def test_a_bad_flag_is_refused_at_its_field_before_sending(
    ct: Callable[..., CtResult], argv: list[str], words: list[str]
) -> None:
    result = ct(*NOWHERE, "runs", "start", *argv)
    assert result.returncode == 1, result
    assert result.stdout == "" and result.stderr.startswith("error: "), result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    assert "connect" not in result.stderr.lower()  # nothing was sent to port 9


def test_start_needs_a_dataset_or_a_spec(ct: Callable[..., CtResult]) -> None:
    result = ct(*NOWHERE, "runs", "start", "--epochs", "2")
    assert result.returncode == 2, result
    assert "--dataset" in result.stderr and "SPEC" in result.stderr, result.stderr


# --- start --wait and logs --follow: for a person at a terminal, JSON for a pipe ----------------------


@pytest.fixture(scope="module")
def waited(server: Any, dataset_id: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run started with --wait on a terminal: its exit code, what the terminal showed, the run."""
    here = ["--base-url", server.base_url, "--database", DATABASE]
    code, drawn = in_terminal(
        *here, "runs", "start", "--dataset", dataset_id, "--epochs", "2", "--batch-tokens", "512", "--wait"
    )
    listed = ct_runner("runs")(*here, "runs", "list", "--limit", "1")
    assert listed.returncode == 0, listed
    [run] = json.loads(listed.stdout)["runs"]
    return {"code": code, "drawn": drawn, "run": run, "here": here}


def test_wait_on_a_terminal_shows_progress_and_a_summary(waited: dict[str, Any]) -> None:
    drawn, run = waited["drawn"], waited["run"]
    assert waited["code"] == 0, drawn[-3000:]
    assert run["status"] == "succeeded", run
    total = run["total_steps"]
    # The live line: step / total, epoch, train loss, validation loss, throughput, time left.
    line = re.search(rf"step\s+{total}/{total}.*", drawn)
    assert line, drawn[-3000:]
    for words in ("epoch", "train loss", "val loss", "tok/s", "ETA"):
        assert words in line.group(0), line.group(0)
    # The summary: how it ended, where the best validation was, the model it registered.
    assert f"run {run['run_id']} succeeded" in drawn, drawn[-3000:]
    assert f"best val loss {run['best_val_loss']:.4f} at step {run['best_step']}" in drawn, drawn[-3000:]
    assert str(run["model_id"]) in drawn


def test_wait_piped_prints_nothing_but_the_run(
    ct: Callable[..., CtResult], here: list[str], dataset_id: str
) -> None:
    result = ct(
        *here, "runs", "start", "--dataset", dataset_id, "--epochs", "1", "--batch-tokens", "512", "--wait"
    )
    assert result.returncode == 0, result
    assert result.stderr == ""
    run = json.loads(result.stdout)
    assert run["status"] == "succeeded" and run["step"] == run["total_steps"]


def test_logs_follow_reads_as_lines_on_a_terminal_and_json_when_piped(
    ct: Callable[..., CtResult], waited: dict[str, Any]
) -> None:
    run_id = waited["run"]["run_id"]
    code, drawn = in_terminal(*waited["here"], "runs", "logs", run_id, "--follow")
    assert code == 0, drawn
    lines = [line for line in drawn.splitlines() if line.strip()]
    assert lines and not any(line.lstrip().startswith("{") for line in lines), drawn
    assert any(re.match(r"\d\d:\d\d:\d\d INFO ", line) for line in lines), drawn
    assert any("validation" in line for line in lines), drawn
    code, drawn = in_terminal(*waited["here"], "runs", "logs", run_id, "--follow", "--json")
    assert code == 0 and all(json.loads(line)["message"] for line in drawn.splitlines() if line.strip())
    piped = ct(*waited["here"], "runs", "logs", run_id, "--follow")
    assert piped.returncode == 0, piped
    entries = [json.loads(line) for line in piped.stdout.splitlines()]
    assert entries and all({"timestamp", "severity", "message"} <= set(entry) for entry in entries)


# --- the registered model, register, resume, deploy, chat ---------------------------------------------


@pytest.fixture
def both(ct_home: Path) -> Callable[..., CtResult]:
    """`ct` with the runs and the model-deployment plugins: deploying needs the second's methods."""
    return ct_runner("runs,model-deployment", timeout=600)


def test_models_and_model_show_the_registered_model(
    ct: Callable[..., CtResult], waited: dict[str, Any]
) -> None:
    run = waited["run"]
    listed = ct(*waited["here"], "runs", "models", run["run_id"])
    assert listed.returncode == 0, listed
    [model] = json.loads(listed.stdout)["models"]
    assert model["model_id"] == run["model_id"] and model["run_id"] == run["run_id"]
    shown = ct(*waited["here"], "runs", "model", run["model_id"])
    assert shown.returncode == 0, shown
    record = json.loads(shown.stdout)
    assert record["run_id"] == run["run_id"] and record["checkpoint_id"]
    assert record["status_explained"].startswith(f"{record['status']}: ")
    assert "ct runs deploy" in record["status_explained"]
    unknown = ct(*waited["here"], "runs", "model", "mdl_01zzzzzzzzzzzzzzzzzzzzzzzz")
    assert unknown.returncode == 1 and "ct runs models" in unknown.stderr, unknown


def _cancelled_after_validating(ct: Callable[..., CtResult], here: list[str], spec: Path) -> dict[str, Any]:
    """A run started from ``spec`` and cancelled once it has validated (so it has a best checkpoint)."""
    from ct_testing import wait_until

    started = ct(*here, "runs", "start", str(spec))
    assert started.returncode == 0, started
    run_id = json.loads(started.stdout)["run_id"]

    def validated() -> bool:
        got = ct(*here, "runs", "get", run_id)
        assert got.returncode == 0, got
        return json.loads(got.stdout)["best_val_loss"] is not None

    wait_until(validated, timeout=HANG_S, interval=0.5, message=f"run {run_id} never validated")
    assert ct(*here, "runs", "cancel", run_id).returncode == 0

    def ended() -> dict[str, Any] | None:
        run: dict[str, Any] = json.loads(ct(*here, "runs", "get", run_id).stdout)
        return run if run["status"] in ("cancelled", "succeeded", "failed") else None

    run = wait_until(ended, timeout=HANG_S, interval=0.5, message=f"run {run_id} never ended")
    assert run["status"] == "cancelled", run
    return run


def _long_spec(tmp_path: Path, dataset_id: str, seed: int) -> Path:
    spec = tmp_path / "long.json"
    spec.write_text(
        json.dumps(
            {
                "dataset_id": dataset_id,
                "seed": seed,
                "overrides": {"max_seq_len": 128},
                "trainer": {"epochs": 8, "batch_tokens": 512, "early_stopping": False, "val_every_steps": 2},
            }
        ),
        encoding="utf-8",
    )
    return spec


def test_register_a_cancelled_run(
    ct: Callable[..., CtResult], here: list[str], dataset_id: str, tmp_path: Path
) -> None:
    run = _cancelled_after_validating(ct, here, _long_spec(tmp_path, dataset_id, seed=11))
    assert run["model_id"] is None
    # The TUI's runs screen says what the cancelled run can still do.
    said = "\n".join(_tui_state(here, run))
    assert f"resumable: ct runs resume {run['run_id']}" in said, said
    assert f"registrable: ct runs register {run['run_id']}" in said, said
    registered = ct(*here, "runs", "register", run["run_id"])
    assert registered.returncode == 0, registered
    model = json.loads(registered.stdout)
    assert model["run_id"] == run["run_id"] and model["model_id"].startswith("mdl_")
    assert model["run_status"] == "cancelled" and "status_explained" in model
    again = ct(*here, "runs", "register", run["run_id"])
    assert again.returncode == 0 and json.loads(again.stdout)["model_id"] == model["model_id"]
    # A registered run is not resumed (the model would fall behind it): the service says what to do.
    refused = ct(*here, "runs", "resume", run["run_id"])
    assert refused.returncode == 1 and model["model_id"] in refused.stderr, refused


def test_resume_a_cancelled_run_to_its_end(
    ct: Callable[..., CtResult], here: list[str], dataset_id: str, tmp_path: Path
) -> None:
    run = _cancelled_after_validating(ct, here, _long_spec(tmp_path, dataset_id, seed=12))
    resumed = ct(*here, "runs", "resume", run["run_id"], "--wait")
    assert resumed.returncode == 0, resumed
    assert resumed.stderr == ""  # piped: nothing but the run
    ended = json.loads(resumed.stdout)
    assert ended["status"] == "succeeded" and ended["step"] == ended["total_steps"] == run["total_steps"]
    assert ended["model_id"]


def test_deploy_in_one_command_then_chat(both: Callable[..., CtResult], waited: dict[str, Any]) -> None:
    here, run = waited["here"], waited["run"]
    deployed = both(*here, "runs", "deploy", run["run_id"], "--wait")
    assert deployed.returncode == 0, deployed
    record = json.loads(deployed.stdout)
    deployment = record["deployment"]
    try:
        assert deployment.startswith("sf-ct-") and record["status"] == "READY"
        assert record["model_id"] == run["model_id"] and record["run_id"] == run["run_id"]
        assert record["base_url"].startswith("http") and record["base_url"] in deployed.stderr
        # chat finds the model's deployment and asks through it.
        asked = both(*here, "runs", "chat", run["model_id"], "hello", "--max-completion-tokens", "8")
        assert asked.returncode == 0, asked
        answer = json.loads(asked.stdout)
        assert answer["deployment"] == deployment and answer["created"] is False
        assert isinstance(answer["content"], str) and answer["finish_reason"] in ("stop", "length")
    finally:
        assert both(*here, "model-deployment", "drop", deployment).returncode == 0
    # With none left that serves, chat makes one and says so.
    asked = both(*here, "runs", "chat", run["run_id"], "hello", "--max-completion-tokens", "4")
    assert asked.returncode == 0, asked
    answer = json.loads(asked.stdout)
    assert answer["created"] is True and answer["deployment"] != deployment
    assert f"created deployment {answer['deployment']}" in asked.stderr
    assert both(*here, "model-deployment", "drop", answer["deployment"]).returncode == 0


def test_the_sdk_deploys_a_runs_model_and_chats_with_it(waited: dict[str, Any]) -> None:
    """client.runs.deploy and client.runs.chat: what the two commands run, from Python."""
    from ct_core import CortexTrainingClient

    run = waited["run"]
    with CortexTrainingClient(base_url=waited["here"][1], database=DATABASE, schema="PUBLIC") as client:
        record = client.runs.deploy(run["run_id"], wait=True)
        try:
            assert record["status"] == "READY" and record["model_id"] == run["model_id"]
            assert record["base_url"].endswith("/inference/v1")
            answer = client.runs.chat(run["model_id"], "hello", max_completion_tokens=4)
            assert answer["deployment"] == record["deployment"] and answer["created"] is False
            assert answer["finish_reason"] in ("stop", "length") and isinstance(answer["content"], str)
        finally:
            client.model_deployments.drop(record["deployment"])
        with pytest.raises(ValidationError, match=r"give a run id \(run_\.\.\.\)"):
            client.runs.deploy("ds_01xxxxxxxxxxxxxxxxxxxxxxxx")


@pytest.mark.parametrize("command", ["deploy", "chat"])
def test_deploy_and_chat_need_a_run_or_a_model(both: Callable[..., CtResult], command: str) -> None:
    argv = ["runs", command, "ds_01xxxxxxxxxxxxxxxxxxxxxxxx"] + (["hi"] if command == "chat" else [])
    result = both(*NOWHERE, *argv)
    assert result.returncode == 1, result
    assert "give a run id (run_...) or a registered model id (mdl_...)" in result.stderr


# --- the TUI's runs screen ---------------------------------------------------------------------------


def _tui_state(here: list[str], run: dict[str, Any]) -> list[str]:
    """The state lines the TUI's runs screen draws for ``run``, read through a real client."""
    from ct_cli.tui.screens.runs import read_state, state_lines
    from ct_core import CortexTrainingClient

    with CortexTrainingClient(base_url=here[1], database=DATABASE, schema="PUBLIC") as client:
        fresh = client.runs.get(run["run_id"])
        return state_lines(fresh, read_state(client, client.runs, fresh))


def test_the_tui_runs_screen_shows_the_registered_model_and_the_data_format(waited: dict[str, Any]) -> None:
    run = waited["run"]
    lines = _tui_state(waited["here"], run)
    assert "data format: text" in lines, lines
    [model] = [line for line in lines if line.startswith("model ")]
    assert model.startswith(f"model {run['model_id']}  ·  training  ·  ") and "of the succeeded run" in model
    assert not any(line.startswith(("resumable", "registrable")) for line in lines)


def test_a_run_continues_a_registered_model_and_validates_on_another_build(
    ct: Callable[..., CtResult], waited: dict[str, Any], tmp_path: Path, kit: Any
) -> None:
    here, model_id = waited["here"], waited["run"]["model_id"]
    corpus = kit.write_corpus(tmp_path / "held-out.jsonl", kit.corpus_lines(rows=20, seed=99))
    built = ct(*here, "datasets", "build", str(corpus), "--wait")
    assert built.returncode == 0, built
    held_out = json.loads(built.stdout)["dataset_id"]
    result = ct(
        *here, "runs", "start", "--dataset", waited["run"]["dataset_id"], "--model", model_id,
        "--validation-dataset", held_out, "--epochs", "1", "--batch-tokens", "512", "--wait",
    )  # fmt: skip
    assert result.returncode == 0, result
    run = json.loads(result.stdout)
    assert run["status"] == "succeeded" and run["model"] == model_id
    assert run["model_name"] == waited["run"]["model_name"] and run["validation_dataset_id"] == held_out
    unknown = ct(*here, "runs", "start", "--dataset", held_out, "--model", "mdl_01zzzzzzzzzzzzzzzzzzzzzzzz")
    assert unknown.returncode == 1 and "model" in unknown.stderr, unknown
