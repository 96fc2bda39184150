"""Snapshots of every `ct tui` screen and tab (pytest-textual-snapshot), for review and the docs.

A snapshot must come out the same on every run, so it cannot show a real server's job ids and
clocks. The screens here read a fixed account instead: `FixedAccount` answers the few reads the
TUI makes (jobs, one job, its live log, its metrics downloads, deployments, runs) with fixed ids
and times, and writes the metrics files the way the SDK's downloads do (each with its manifest),
so the tabs' own reading code runs. The terminal is 160 x 45, the time zone UTC and the clock
fixed. The behaviour against a real server is tested in test_tabs.py and test_screens.py.

Update the SVGs after an intended change with `make tui-snapshots` (it also copies them to
docs/images/tui/).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytest_textual_snapshot")

from ct_cli.tui.app import CtTui
from ct_cli.tui.screens.deployments import DeploymentsScreen
from ct_cli.tui.screens.job import JobScreen
from ct_cli.tui.screens.jobs import JobPickerScreen
from ct_cli.tui.screens.runs import RunsScreen
from tests.tui.conftest import wait_until
from tests.tui.test_tabs import _StagedRuns

SIZE = (160, 45)
#: The fixed clock: 2026-03-01 12:00:00 UTC.
NOW = 1772366400.0
JOB = "6f1c2d3e-0000-4000-8000-000000000001"
TRAINING = f"{JOB}:training:0"
SAMPLING = f"{JOB}:sampling:0"
OTHER_DATABASE = "RESEARCH_DB"


def _ts(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _job(job_id: str, status: str, created: float, types: Sequence[str], **more: Any) -> dict[str, Any]:
    sub_jobs = [
        {
            "sub_job_id": f"{job_id}:{kind}:0",
            "job_type": kind,
            "model_name": "Qwen/Qwen3-0.6B",
            "training_config" if kind == "training" else "inference_config": {
                "n_gpus": 2 if kind == "training" else 1,
                "max_seq_len": 4096,
                **(
                    {
                        "train_batch_size": 8,
                        "gradient_clipping": 1.0,
                        "optimizer": {"name": "AdamW", "lr": 2e-4},
                    }
                    if kind == "training"
                    else {}
                ),
            },
        }
        for kind in types
    ]
    return {"job_id": job_id, "status": status, "created_at": _ts(created), "sub_jobs": sub_jobs, **more}


JOBS = [
    _job(JOB, "running", NOW - 3600, ("training", "sampling")),
    _job("6f1c2d3e-0000-4000-8000-000000000002", "completed", NOW - 7200, ("training",)),
    _job("6f1c2d3e-0000-4000-8000-000000000003", "failed", NOW - 90000, ("sampling",)),
]
ACCOUNT_JOBS = [
    _job(
        "7a2b3c4d-0000-4000-8000-00000000000a",
        "running",
        NOW - 1800,
        ("training",),
        database_name=OTHER_DATABASE,
        schema_name="PUBLIC",
    ),
    _job(
        "7a2b3c4d-0000-4000-8000-00000000000b",
        "cancelled",
        NOW - 86400,
        ("training", "sampling"),
        database_name=OTHER_DATABASE,
        schema_name="EXPERIMENTS",
    ),
]
LOG_ENTRIES = [
    {"ts": _ts(NOW - 60 + i), "level": level, "logger": "trainer", "msg": msg}
    for i, (level, msg) in enumerate(
        [
            ("INFO", "job status initializing -> running"),
            ("INFO", "loaded Qwen/Qwen3-0.6B on 2 GPUs"),
            ("INFO", "request r-0001 fwd-bwd done avg_loss=2.041900"),
            ("INFO", "request r-0002 step done global_steps=30"),
            ("WARNING", "gradient norm 84.4 above the clipping threshold 1.0"),
            ("INFO", "request r-0003 fwd-bwd done avg_loss=1.998200"),
        ]
    )
]
DEPLOYMENTS = [
    {
        "deployment": "sf-ct-5d6e7f80-0000-4000-8000-000000000021",
        "status": "READY",
        "model": "Qwen/Qwen3-0.6B",
        "gpu_type": "H200",
        "min_replicas": 1,
        "gpus_per_replica": 1,
        "n_gpus": 1,
        "max_seq_len": 4096,
        "source": {"type": "checkpoint", "job_id": JOB, "checkpoint_id": "cp_0030"},
        "base_url": "https://example.snowflakecomputing.com/api/v2/cortex-training/deployments/sf-ct-5d6e7f80/v1",
        "created_at": _ts(NOW - 5400),
        "updated_at": _ts(NOW - 5000),
    },
    {
        "deployment": "sf-ct-5d6e7f80-0000-4000-8000-000000000022",
        "status": "FAILED",
        "model": "Qwen/Qwen3-0.6B",
        "gpu_type": "H200",
        "min_replicas": 1,
        "gpus_per_replica": 2,
        "n_gpus": 2,
        "max_seq_len": 8192,
        "source": {"type": "base_model", "model": "Qwen/Qwen3-0.6B"},
        "failure": {"code": "INSUFFICIENT_CAPACITY", "message": "no H200 capacity in the account"},
        "created_at": _ts(NOW - 9000),
        "updated_at": _ts(NOW - 8900),
    },
]


def _gpu_rows() -> Iterator[dict[str, Any]]:
    for tick in range(240):  # one hour, a sample every 15 s
        at = NOW - 3600 + 15 * (tick + 1)
        for gpu in (0, 1):
            util = 70 + 25 * math.sin(tick / 9 + gpu) if tick % 40 < 34 else 5.0
            yield {
                "record_version": 2,
                "sub_job_id": TRAINING,
                "sample_ts": _ts(at),
                "worker_num": 0,
                "local_gpu_index": gpu,
                "global_gpu_index": gpu,
                "gpu_uuid": f"GPU-{gpu}",
                "gpu_util_pct": round(util, 1),
                "fb_used_bytes": (52 + 4 * gpu) * 2**30,
                "fb_free_bytes": (89 - 52 - 4 * gpu) * 2**30,
                "sample_interval_s": 15,
                "seq": tick,
                "seq_epoch": "e",
            }
        yield {
            "kind": "system",
            "record_version": 3,
            "sub_job_id": TRAINING,
            "sample_ts": _ts(at),
            "worker_num": 0,
            "seq": tick,
            "seq_epoch": "e",
            "sample_interval_s": 15,
            "cpu_util_pct": round(35 + 10 * math.sin(tick / 5), 1),
            "cpu_count": 64,
            "mem_used_bytes": 180 * 2**30,
            "mem_total_bytes": 512 * 2**30,
        }


def _training_rows() -> Iterator[dict[str, Any]]:
    seq = 0
    for step in range(1, 31):
        for call in (1, 2):
            loss = 2.6 * math.exp(-step / 12) + 0.4 + 0.03 * math.sin(step * call)
            yield {
                "kind": "training",
                "record_version": 2,
                "sub_job_id": TRAINING,
                "sample_ts": _ts(NOW - 600 + step * 20 + call),
                "seq": seq,
                "seq_epoch": "e",
                "op": "fwd_bwd",
                "step": step,
                "call": call,
                "request_id": f"r-{step:04d}-{call}",
                "metrics": {"avg_loss": round(loss, 4), "sft_packed_rows": 8},
            }
            seq += 1
        lr = 2e-4 * min(step / 5, 1.0) * (0.5 + 0.5 * math.cos(math.pi * step / 30))
        yield {
            "kind": "training",
            "record_version": 2,
            "sub_job_id": TRAINING,
            "sample_ts": _ts(NOW - 600 + step * 20 + 5),
            "seq": seq,
            "seq_epoch": "e",
            "op": "step",
            "step": step,
            "call": None,
            "request_id": f"r-{step:04d}-s",
            "metrics": {
                "global_steps": step,
                "grad_norm": round(3 + 2 * math.cos(step / 3), 3),
                "last_lr": lr,
            },
        }
        seq += 1


def _write_committed(folder: Path, sub: str, name: str, rows: Iterator[dict[str, Any]]) -> dict[str, Any]:
    """A rebuilt file and its manifest, as the SDK's downloads leave them."""
    target = folder / sub / name
    target.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(json.dumps(row) + "\n" for row in rows).encode()
    target.write_bytes(body)
    manifest = {"version": 1, "names": [f"_metrics/{sub}/x.gz"], "bytes": len(body)}
    target.with_name(f".{name}.manifest.json").write_text(json.dumps(manifest))
    return {"sub_job_id": sub, "filename": name, "saved_path": str(target), "chunk_count": 1}


class FixedAccount:
    """The reads `ct tui` makes, answered from the fixed account above. Read-only, like the TUI."""

    database, schema = "CT_DB", "PUBLIC"

    def __init__(self) -> None:
        self.keep_artifact_sessions = False
        self.runs = _StagedRuns()
        self._tailed: set[str | None] = set()

    def list_jobs(self, status: str | None = None) -> list[dict[str, Any]]:
        return [dict(job) for job in JOBS]

    def get_job(self, job_id: str) -> dict[str, Any]:
        return dict(next(job for job in JOBS if job["job_id"] == job_id))

    def list_jobs_page(self, database: str | None = None, **_: Any) -> dict[str, Any]:
        jobs = [job for job in ACCOUNT_JOBS if str(job["database_name"]).lower() == str(database).lower()]
        return {"jobs": jobs, "next_page_token": None}

    def for_job(self, job: dict[str, Any]) -> FixedAccount:
        return self

    def tail_logs(
        self, job_id: str, *, cursor: str | None, sub_job_id: str | None, **_: Any
    ) -> dict[str, Any]:
        if cursor is None:
            return {"entries": LOG_ENTRIES, "next_cursor": "c-1"}
        return {"entries": [], "next_cursor": cursor}

    def warm_artifact_session(self, job_id: str) -> None:
        return None

    def download_metrics(self, job_id: str, output_dir: Path, **options: Any) -> list[dict[str, Any]]:
        entry = _write_committed(Path(output_dir), TRAINING, "gpu.jsonl", _gpu_rows())
        options["on_commit"](entry)
        return [entry]

    def download_training_metrics(
        self, job_id: str, output_dir: Path, **options: Any
    ) -> list[dict[str, Any]]:
        entry = _write_committed(Path(output_dir), TRAINING, "training.jsonl", _training_rows())
        options["on_commit"](entry)
        return [entry]

    def list_model_deployments(self, statuses: Any = None) -> list[dict[str, Any]]:
        return [dict(record) for record in DEPLOYMENTS]


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch, home: Path) -> Iterator[None]:
    """UTC, and `time.strftime` without a time reads the fixed clock (the screens' 'updated' stamps)."""
    real = time.strftime
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setattr(
        time, "strftime", lambda form, at=None: real(form, time.gmtime(NOW) if at is None else at)
    )
    yield
    monkeypatch.undo()
    time.tzset()


#: Longer than any run of a test: no screen refreshes itself before its screenshot is taken.
NO_REFRESH_S = 3600.0


@pytest.fixture(autouse=True)
def no_timed_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """The screens' periodic refreshes never come: on a busy machine a test may outlast a period (15 s
    for the Training tab), and a screenshot taken during that refresh would show it in progress."""
    from ct_cli.tui.screens import jobs, resources, runs, training

    monkeypatch.setattr(jobs, "REFRESH_S", NO_REFRESH_S)
    monkeypatch.setattr(resources, "REFRESH_S", NO_REFRESH_S)
    monkeypatch.setattr(training, "REFRESH_S", NO_REFRESH_S)
    monkeypatch.setattr(runs, "DETAIL_S", NO_REFRESH_S)
    monkeypatch.setattr(DeploymentsScreen, "refresh_s", NO_REFRESH_S)
    monkeypatch.setattr(RunsScreen, "refresh_s", NO_REFRESH_S)


@pytest.fixture(autouse=True)
def colours_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `NO_COLOR` of the caller's shell turns Textual's output monochrome: the snapshots are in colour."""
    monkeypatch.delenv("NO_COLOR", raising=False)


def _app(job_id: str | None = None) -> CtTui:
    from ct_core import plugins

    # A manager without entry points: only the built-in screens, whatever else is installed.
    return CtTui(FixedAccount(), job_id, poll_interval=0.05, plugin_manager=plugins.new_plugin_manager())


async def _table_laid_out(pilot: Any, screen: JobScreen) -> None:
    """A DataTable measures its rows after they are added: wait until it has, so the scrollbar and
    the rows on screen are the same in every run."""
    from textual.widgets import DataTable

    table = screen.training.query_one("#training-table", DataTable)
    laid_out = lambda: table.row_count and table.virtual_size.height >= table.row_count + 1  # noqa: E731
    await wait_until(pilot, laid_out, "the table's size")
    await pilot.pause()


async def _job_screen_ready(pilot: Any) -> JobScreen:
    screen = pilot.app.screen
    assert isinstance(screen, JobScreen)
    await wait_until(pilot, lambda: "— live —" in screen.shown_lines() and screen.updated, "the live log")
    await wait_until(pilot, lambda: screen.warmed, "the warm-up")
    return screen


def test_picker(snap_compare: Any, fixed_clock: None) -> None:
    async def ready(pilot: Any) -> None:
        picker = pilot.app.screen
        assert isinstance(picker, JobPickerScreen)
        await wait_until(pilot, lambda: picker.loaded, "the jobs")

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)


def test_picker_account_wide(snap_compare: Any, fixed_clock: None) -> None:
    async def ready(pilot: Any) -> None:
        picker = pilot.app.screen
        assert isinstance(picker, JobPickerScreen)
        await wait_until(pilot, lambda: picker.loaded, "the jobs")
        await pilot.press("slash", *f"@{OTHER_DATABASE}", "enter")
        await wait_until(pilot, lambda: picker.walk is not None, "the account-wide list")

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)


def test_job_logs(snap_compare: Any, fixed_clock: None) -> None:
    assert snap_compare(_app(JOB), terminal_size=SIZE, run_before=_job_screen_ready)


def test_job_resources(snap_compare: Any, fixed_clock: None) -> None:
    async def ready(pilot: Any) -> None:
        screen = await _job_screen_ready(pilot)
        await pilot.press("2")
        await wait_until(pilot, lambda: screen.resources.downloads and not screen.resources.fetching, "rows")

    assert snap_compare(_app(JOB), terminal_size=SIZE, run_before=ready)


def test_job_resources_all(snap_compare: Any, fixed_clock: None) -> None:
    async def ready(pilot: Any) -> None:
        screen = await _job_screen_ready(pilot)
        await pilot.press("2")
        await wait_until(pilot, lambda: screen.resources.downloads and not screen.resources.fetching, "rows")
        await pilot.press("V")

    assert snap_compare(_app(JOB), terminal_size=SIZE, run_before=ready)


def test_job_training(snap_compare: Any, fixed_clock: None) -> None:
    async def ready(pilot: Any) -> None:
        screen = await _job_screen_ready(pilot)
        await pilot.press("3")
        await wait_until(pilot, lambda: screen.training.downloads and not screen.training.fetching, "rows")
        await _table_laid_out(pilot, screen)

    assert snap_compare(_app(JOB), terminal_size=SIZE, run_before=ready)


def test_job_training_per_call(snap_compare: Any, fixed_clock: None) -> None:
    async def ready(pilot: Any) -> None:
        screen = await _job_screen_ready(pilot)
        await pilot.press("3")
        await wait_until(pilot, lambda: screen.training.downloads and not screen.training.fetching, "rows")
        await pilot.press("t")
        await wait_until(pilot, lambda: screen.training.per_call, "the calls")
        await _table_laid_out(pilot, screen)

    assert snap_compare(_app(JOB), terminal_size=SIZE, run_before=ready)


def test_deployments(snap_compare: Any, fixed_clock: None) -> None:
    async def ready(pilot: Any) -> None:
        await wait_until(pilot, lambda: pilot.app.screen.loaded, "the jobs")
        await pilot.press("d")
        screen = pilot.app.screen
        assert isinstance(screen, DeploymentsScreen)
        await wait_until(pilot, lambda: screen.loaded, "the deployments")

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)


def test_runs(snap_compare: Any, fixed_clock: None) -> None:
    async def ready(pilot: Any) -> None:
        await wait_until(pilot, lambda: pilot.app.screen.loaded, "the jobs")
        await pilot.press("R")
        screen = pilot.app.screen
        assert isinstance(screen, RunsScreen)
        await wait_until(pilot, lambda: screen.loaded and len(screen.logs) == 2, "the run")

    assert snap_compare(_app(), terminal_size=SIZE, run_before=ready)
