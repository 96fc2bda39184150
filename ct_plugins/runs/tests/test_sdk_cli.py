"""`ct datasets` / `ct runs` as a user types them, and the run plot, without a runs service.

What is checked here needs no service: the commands are listed, `ct --help` stays free of DBOS and
matplotlib, bad spec files and bad options fail with the usual error lines and exit codes before
anything is sent (every command points at port 9, where nothing listens), and the plot of a
hand-made metrics answer is a real PNG. The commands against a running service are tested with the
service (test_service.py).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import CtResult, ct_runner

#: Connection options for a server that is not there: reaching it would fail with a connection error.
NOWHERE = ["--base-url", "http://127.0.0.1:9", "--database", "RUNS_DB"]
RUN_ID = "run_01JD3QA2F5XK9V3B8C1D6E0G7H"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DATASETS_COMMANDS = ("build", "get")
RUNS_COMMANDS = (
    "start", "list", "get", "metrics", "logs", "cancel", "plot", "serve",
    "models", "model", "register", "resume", "deploy", "chat",
)  # fmt: skip
#: What `ct --help` (and a group's --help) must not import: each costs start-up time.
HEAVY = ("dbos", "matplotlib", "ct_runs.service", "ct_runs.engine", "sqlalchemy", "torch")


@pytest.fixture
def ct(ct_home: Path) -> Callable[..., CtResult]:
    """`ct` in a subprocess with an isolated home and only this plugin loaded."""
    return ct_runner("runs", timeout=120)


# --- help and start-up ----------------------------------------------------------------------------


def test_ct_help_lists_both_groups(ct: Callable[..., CtResult]) -> None:
    result = ct("--help")
    assert result.returncode == 0, result
    assert " datasets " in result.stdout and " runs " in result.stdout


@pytest.mark.parametrize(("group", "commands"), [("datasets", DATASETS_COMMANDS), ("runs", RUNS_COMMANDS)])
def test_each_group_lists_every_command(
    ct: Callable[..., CtResult], group: str, commands: tuple[str, ...]
) -> None:
    result = ct(group, "--help")
    assert result.returncode == 0, result
    listed = {
        line.split()[1]
        for line in result.stdout.splitlines()
        if line.startswith("│ ") and len(line.split()) > 2
    }
    assert set(commands) <= listed, listed


@pytest.mark.parametrize("argv", [["--help"], ["runs", "--help"], ["datasets", "build", "--help"]])
def test_help_imports_neither_dbos_nor_matplotlib(ct_home: Path, argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from ct_cli.main import main\n"
        f"code = main({argv!r})\n"
        "assert code == 0, code\n"
        f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, "CT_PLUGINS": "runs"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    if argv == ["--help"]:
        assert " runs " in result.stdout and " datasets " in result.stdout


# --- bad input fails before anything is sent ------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"dataset_id": "ds_1",}',
            "is not valid JSON: Expecting property name enclosed in double quotes at line 1",
        ),
        ("[1, 2]", "must be a JSON object with dataset_id, got a list"),
    ],
)
def test_a_bad_spec_file_is_named(
    ct: Callable[..., CtResult], tmp_path: Path, content: str, message: str
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(content, encoding="utf-8")
    result = ct(*NOWHERE, "runs", "start", str(spec))
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: run spec {spec} ")
    assert message in result.stderr


def test_a_missing_spec_file_and_a_bad_spec_on_stdin(ct: Callable[..., CtResult], tmp_path: Path) -> None:
    missing = ct(*NOWHERE, "runs", "start", str(tmp_path / "none.json"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr, missing
    piped = ct(*NOWHERE, "runs", "start", "-", input="{not json")
    assert piped.returncode == 1, piped
    assert "error: run spec on stdin is not valid JSON" in piped.stderr


def test_a_dataset_file_must_exist_and_hold_rows(ct: Callable[..., CtResult], tmp_path: Path) -> None:
    missing = ct(*NOWHERE, "datasets", "build", str(tmp_path / "none.jsonl"))
    assert missing.returncode == 1 and "dataset file" in missing.stderr and "does not exist" in missing.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    result = ct(*NOWHERE, "datasets", "build", str(empty))
    assert result.returncode == 1 and "is empty" in result.stderr, result
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"text": "a"}\n', encoding="utf-8")


@pytest.mark.parametrize("fraction", ["0", "0.6", "0.99", "1.5", "-0.1", "nan"])
def test_a_val_fraction_the_service_refuses_is_refused_before_uploading(
    ct: Callable[..., CtResult], tmp_path: Path, fraction: str
) -> None:
    # The service takes 0 < x <= 0.5; nothing is read or sent for another value (port 9 would
    # answer a connection error otherwise).
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"text": "a"}\n', encoding="utf-8")
    bad = ct(*NOWHERE, "datasets", "build", str(rows), "--val-fraction", fraction)
    assert bad.returncode == 2, bad
    assert bad.stderr.startswith("error: --val-fraction must be greater than 0 and at most 0.5"), bad.stderr
    assert "uploading" not in bad.stderr


def test_the_sdk_and_the_service_share_the_val_fraction_bound() -> None:
    from ct_runs import datasets as service_datasets

    from ct_core import CortexTrainingClient
    from ct_core.constants import DATASET_VAL_FRACTION_MAX
    from ct_core.errors import ValidationError

    assert service_datasets.MAX_VAL_FRACTION == DATASET_VAL_FRACTION_MAX == 0.5
    with CortexTrainingClient(base_url="http://127.0.0.1:9", database="RUNS_DB", schema="PUBLIC") as client:
        for fraction in (0.6, 0.0, 1.0):
            with pytest.raises(ValidationError, match=r"at most 0\.5"):
                client.datasets.build(b'{"text": "a"}\n', val_fraction=fraction)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["runs", "list", "--status", "done"], 'Invalid value "done" for --status'),
        (["runs", "metrics", RUN_ID, "--after-step", "x"], "--after-step"),
        (["runs", "serve", "--concurrency", "0"], "--concurrency must be at least 1"),
        (["runs", "serve", "--port", "70000"], "--port must be between 0 and 65535"),
        (
            ["runs", "serve", "--webhook-url", "ftp://example.com/x"],
            "--webhook-url must be an http:// or https://",
        ),
        (
            ["runs", "serve", "--webhook-secret-env", "CT_TEST_UNSET_SECRET"],
            "that environment variable is not set",
        ),
        (["runs", "get"], "requires an argument"),
        (["runs", "serve", "--front"], "--front needs the workers' shared --database-url"),
        (["runs", "serve", "--front", "--worker", "--database-url", "postgresql://x"], "pass one of them"),
    ],
)
def test_bad_options_are_usage_errors(ct: Callable[..., CtResult], argv: list[str], message: str) -> None:
    result = ct(*NOWHERE, *argv)
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr


def test_plot_refuses_an_output_that_is_not_png(ct: Callable[..., CtResult], tmp_path: Path) -> None:
    result = ct(*NOWHERE, "runs", "plot", RUN_ID, "--output", str(tmp_path / "curves.jpg"))
    assert result.returncode == 1, result
    assert "must end in .png" in result.stderr
    assert not (tmp_path / "curves.jpg").exists()


def test_serve_defaults_to_the_xdg_data_home(ct_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ct_runs.cli import default_state_dir

    assert default_state_dir() == ct_home / ".local/share" / "cortex-training" / "runs-service"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_state_dir() == ct_home / ".local" / "share" / "cortex-training" / "runs-service"


# --- the plot -------------------------------------------------------------------------------------


def _metrics(steps: int = 40) -> dict[str, Any]:
    series: dict[str, list[list[float]]] = {
        "train_loss": [],
        "val_loss": [],
        "lr": [],
        "epoch": [],
        "tokens_per_s": [],
    }
    for step in range(steps):
        series["train_loss"].append([step, 3.0 / (1 + step / 8)])
        series["lr"].append([step, 1e-3 * min(1.0, (step + 1) / 5)])
        series["epoch"].append([step, step / 20])
        series["tokens_per_s"].append([step, 900.0])
        if step % 5 == 4:
            series["val_loss"].append([step, 3.1 / (1 + step / 9)])
    series["val_accuracy/topic"] = [[step, 0.5 + step / 100] for step in range(4, steps, 5)]
    return {"series": series, "cursor": steps - 1}


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_plot_run_writes_a_png_with_every_panel(tmp_path: Path) -> None:
    from ct_runs.plot import plot_run

    run = {
        "run_id": RUN_ID,
        "status": "succeeded",
        "model_config_tier": "S",
        "step": 40,
        "total_steps": 100,
        "best_step": 29,
        "best_val_loss": 0.76,
        "early_stop": {"step": 34, "reason": "patience exhausted"},
    }
    target = tmp_path / "plots" / "run.png"
    written = plot_run(_metrics(), run, target)
    assert written == target
    data = target.read_bytes()
    # Four panels (loss, lr, epoch, per-label accuracy) at 100 dpi: 1000 x 960 pixels.
    assert _png_size(data) == (1000, 960)
    assert len(data) > 20_000
    assert [p.name for p in target.parent.iterdir()] == ["run.png"]  # no temporary file left behind


def test_plot_run_draws_an_empty_run_and_refuses_other_formats(tmp_path: Path) -> None:
    from ct_runs.plot import plot_run

    from ct_core.errors import ValidationError

    target = tmp_path / "empty.PNG"
    plot_run({"series": {}, "cursor": -1}, {"run_id": RUN_ID, "status": "queued"}, target)
    assert _png_size(target.read_bytes()) == (1000, 720)
    with pytest.raises(ValidationError, match=r"must end in \.png"):
        plot_run(_metrics(), {"run_id": RUN_ID}, tmp_path / "run.svg")
    assert not (tmp_path / "run.svg").exists()


def test_plot_run_skips_points_that_are_not_step_value_pairs(tmp_path: Path) -> None:
    from ct_runs.plot import plot_run

    metrics = {"series": {"train_loss": [[0, 2.0], [1, None], "x", [2], [3, float("nan")], [4, 1.5]]}}
    target = plot_run(metrics, {"run_id": RUN_ID, "status": "running"}, tmp_path / "odd.png")
    assert target.read_bytes()[:8] == PNG_SIGNATURE
