"""The data-plane commands end to end: `ct --job JOB fwd-bwd|step|save|load|weight-sync|logs` on ct_local.

`ct logs` takes its job as an argument too (tests/cli/test_dropin_cli.py); the global --job form is
the one kept here.

The commands run in-process through `ct_cli.main.main` (real app, real plugin manager, real HTTP to
the local server).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def ct_inproc(ct_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Result]]:
    from ct_cli.main import main

    # rich wraps help to $COLUMNS, else to the width of whatever terminal the test run's own
    # descriptors are on: a fixed width keeps the usage lines checked below on one line.
    monkeypatch.setenv("COLUMNS", "100")

    def run(*args: str, stdin: str = "") -> Result:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(args), stdout=out, stderr=err, stdin=io.StringIO(stdin))
        return Result(code, out.getvalue(), err.getvalue())

    yield run


@pytest.fixture(scope="module")
def running_job(module_local_server_factory: Any) -> tuple[str, str]:
    from ct_core import CortexTrainingClient, SubJobConfig

    server = module_local_server_factory()
    with CortexTrainingClient(
        base_url=server.base_url, database="CLI_DP", schema="PUBLIC", poll_interval=0.02
    ) as c:
        training = SubJobConfig.training_job(
            "Qwen/Qwen3-0.6B",
            optimizer={"name": "AdamW", "lr": 1e-2},
            max_seq_len=128,
            train_batch_size=2,
            n_gpus=1,
        )
        sampling = SubJobConfig.sampling_job("Qwen/Qwen3-0.6B", max_seq_len=128, n_gpus=1)
        job_id = c.create_job([training, sampling])
        c.wait_for_job(job_id)
    return server.base_url, job_id


def _globals(running_job: tuple[str, str]) -> list[str]:
    base_url, job_id = running_job
    return ["--base-url", base_url, "--database", "CLI_DP", "--poll-interval", "0.02", "--job", job_id]


BATCH = {"texts": ["hello there, general kenobi"], "tokenizer": "byte", "max_length": 32}


def test_fwd_bwd_from_stdin_and_step(ct_inproc: Callable[..., Result], running_job: tuple[str, str]) -> None:
    args = _globals(running_job)
    fb = ct_inproc(*args, "fwd-bwd", "-", stdin=json.dumps({"payload": BATCH}))
    assert fb.code == 0, fb.stderr
    assert fb.json["job_id"] == running_job[1]
    assert fb.json["payload_size_bytes"] > 0 and fb.json["result"]["avg_loss"] > 0
    assert "waiting for request" in fb.stderr
    step = ct_inproc(*args, "--compact", "step", "--lr", "0.001")
    assert step.code == 0, step.stderr
    assert step.stdout.count("\n") == 1
    assert step.json["learning_rate"] == 0.001 and step.json["result"]["last_lr"] == pytest.approx(0.001)
    plain = ct_inproc(*args, "step")
    assert plain.json["learning_rate"] is None
    # No --lr sends no learning rate: the job's optimizer lr (1e-2) applies, not a 1e-4 default.
    assert plain.json["result"]["last_lr"] == pytest.approx(1e-2)


def test_fwd_bwd_without_polling(
    ct_inproc: Callable[..., Result], running_job: tuple[str, str], tmp_path: Path
) -> None:
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps({**BATCH, "poll": False}), encoding="utf-8")
    result = ct_inproc(*_globals(running_job), "fwd-bwd", str(batch))
    assert result.code == 0, result.stderr
    assert result.json["request_id"] and "result" not in result.json
    ct_inproc(*_globals(running_job), "step")


def test_fwd_bwd_errors(ct_inproc: Callable[..., Result], running_job: tuple[str, str]) -> None:
    base_url, _ = running_job
    no_job = ct_inproc("--base-url", base_url, "fwd-bwd", "-", stdin=json.dumps(BATCH))
    assert no_job.code == 1 and "provide --job JOB_ID for fwd-bwd" in no_job.stderr
    bad_poll = ct_inproc(*_globals(running_job), "fwd-bwd", "-", stdin=json.dumps({**BATCH, "poll": "no"}))
    assert bad_poll.code == 1 and "fwd-bwd poll must be a boolean" in bad_poll.stderr
    bad_labels = ct_inproc(
        *_globals(running_job), "fwd-bwd", "-", stdin=json.dumps({**BATCH, "labels": "odd"})
    )
    assert bad_labels.code == 1 and "labels strategy" in bad_labels.stderr
    assert bad_labels.stdout == ""


def test_save_then_load(ct_inproc: Callable[..., Result], running_job: tuple[str, str]) -> None:
    args = _globals(running_job)
    saved = ct_inproc(*args, "save", "--type", "Weights-Only")
    assert saved.code == 0, saved.stderr
    assert saved.json["checkpoint_type"] == "weights-only"
    checkpoint_id = saved.json["checkpoint_id"]
    assert checkpoint_id.startswith("cp_")
    loaded = ct_inproc(*args, "load", checkpoint_id, "--target-sub-job-id", f"{running_job[1]}:training:0")
    assert loaded.code == 0, loaded.stderr
    assert loaded.json["checkpoint_id"] == checkpoint_id and "result" in loaded.json
    queued = ct_inproc(*args, "load", checkpoint_id, "--no-poll")
    assert queued.code == 0 and "result" not in queued.json
    bad = ct_inproc(*args, "save", "--type", "full")
    assert bad.code == 1 and "checkpoint_type must be 'resumable' or 'weights-only'" in bad.stderr


def test_weight_sync(ct_inproc: Callable[..., Result], running_job: tuple[str, str]) -> None:
    _, job_id = running_job
    result = ct_inproc(*_globals(running_job), "weight-sync", "--weight-format", "hf")
    assert result.code == 0, result.stderr
    assert result.json["source_sub_job_id"] == f"{job_id}:training:0"
    assert result.json["target_sub_job_ids"] == [f"{job_id}:sampling:0"]
    assert result.json["weight_format"] == "hf"
    target = result.json["result"]["targets"][0]
    assert target["sub_job_id"] == f"{job_id}:sampling:0"
    assert target["recv"]["recv"]["clear_cache"] is True
    queued = ct_inproc(
        *_globals(running_job), "weight-sync", "--target-sub-job-id", f"{job_id}:sampling:0", "--no-poll"
    )
    assert queued.code == 0 and queued.json["request_id"] and "result" not in queued.json


def test_logs(ct_inproc: Callable[..., Result], running_job: tuple[str, str]) -> None:
    _, job_id = running_job
    sub_job = f"{job_id}:training:0"
    text = ct_inproc(*_globals(running_job), "logs", "--sub-job", sub_job, "--max-lines", "3")
    assert text.code == 0, text.stderr
    lines = text.stdout.splitlines()
    assert len(lines) > 0 and all(line[:4].isdigit() for line in lines)
    as_json = ct_inproc(*_globals(running_job), "logs", "--sub-job", sub_job, "--max-lines", "2", "--json")
    assert as_json.code == 0 and as_json.json["entries"]
    unknown = ct_inproc(*_globals(running_job), "logs", "--sub-job", f"{job_id}:training:7")
    assert unknown.code == 1 and "error:" in unknown.stderr


@pytest.mark.parametrize("command", ["fwd-bwd", "step", "save", "load", "weight-sync", "generate"])
def test_data_plane_help_shows_where_the_job_goes(ct_inproc: Callable[..., Result], command: str) -> None:
    """The usage line puts --job before the command, and the help ends with the reminder."""
    result = ct_inproc(command, "--help")
    assert result.code == 0
    first = result.stdout.splitlines()[0]
    assert first.startswith("Usage: ") and f"[GLOBAL OPTIONS] --job JOB_ID {command}" in first
    tail = " ".join(result.stdout.split()[-20:])
    assert tail.endswith(
        "Required global option: --job JOB_ID (alias: --job-id JOB_ID). Place it before the subcommand."
    )


def test_other_commands_keep_their_own_usage(ct_inproc: Callable[..., Result]) -> None:
    result = ct_inproc("checkpoints", "--help")
    assert result.code == 0
    assert "--job JOB_ID" not in result.stdout.splitlines()[0]
    assert "Required global option" not in result.stdout
