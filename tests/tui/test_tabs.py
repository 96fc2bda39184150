"""The job screen's Resources and Training tabs, the deployments and runs screens, the account-wide
picker and the screen hook, driven with Textual's Pilot against a real ct_local job that trained.

The job runs a few fwd-bwd calls and steps over the real server, so its training rows and host rows
are the server's own. ct_local has no GPU here: a six-hour history of GPU rows is staged into the
job's run the way the runtime uploads it (gzip chunks named by their start time), so the views,
the preview of the newest minutes and the per-GPU lines have something to show. The pure rules
(buckets, committed bytes, steps, locations, charts) are tested on their own at the end.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.screen import Screen
from textual.widgets import DataTable, OptionList, Static

from ct_cli.tui import account, charts, metrics, records
from ct_cli.tui.app import CtTui
from ct_cli.tui.screens import ScreenEntry, check_entry, collect_entries
from ct_cli.tui.screens.deployments import DeploymentsScreen
from ct_cli.tui.screens.job import JobScreen
from ct_cli.tui.screens.jobs import JobPickerScreen
from ct_cli.tui.screens.runs import UNAVAILABLE, RunsScreen
from tests.tui.conftest import DATABASE, SCHEMA, fwd_bwd, run, wait_until

SIZE = (170, 52)
#: The staged GPU history: six hours, one chunk a minute, a sample every 15 s per GPU.
HISTORY_MINUTES = 360
SAMPLE_S = 15
#: GPU 0 runs at 20 % until the last hour, then at 80 %; GPU 1 at 50 % throughout.
OLD_UTIL, NEW_UTIL, STEADY_UTIL = 20.0, 80.0, 50.0
OTHER_DATABASE = "CT_TUI_ACCT"


@pytest.fixture(scope="module")
def local_server(module_local_server_factory: Any) -> Any:
    """A server of this module's own, uploading each sub-job's output every 2 s."""
    return module_local_server_factory(settings={"artifact_upload_interval_s": 2.0})


def _ct(base_url: str, job_id: str, *command: str) -> dict[str, Any]:
    from ct_cli.main import main

    out, err = io.StringIO(), io.StringIO()
    args = ["--base-url", base_url, "--database", DATABASE, "--poll-interval", "0.05", "--job", job_id]
    assert main([*args, *command], stdout=out, stderr=err) == 0, err.getvalue()
    return dict(json.loads(out.getvalue()))


def _gpu_chunk(sub: str, start: datetime, end_of_history: datetime, extra: list[str]) -> bytes:
    rows = list(extra)
    for second in range(0, 60, SAMPLE_S):
        at = start + timedelta(seconds=second)
        recent = end_of_history - at <= timedelta(hours=1)
        for index, util in ((0, NEW_UTIL if recent else OLD_UTIL), (1, STEADY_UTIL)):
            row = {
                "record_version": 2,
                "sub_job_id": sub,
                "sample_ts": at.strftime("%Y-%m-%dT%H:%M:%S.%f") + "123Z",
                "worker_num": 0,
                "local_gpu_index": index,
                "global_gpu_index": index,
                "gpu_uuid": f"GPU-{index}",
                "gpu_util_pct": util,
                "fb_used_bytes": 40 * 2**30 if index == 0 else None,
                "fb_free_bytes": 40 * 2**30 if index == 0 else None,
                "power_watts": 300.0,
                "gpu_temp_c": 60.0,
                "seq": int(at.timestamp()),
                "seq_epoch": "staged",
                "sample_interval_s": SAMPLE_S,
            }
            rows.append(json.dumps(row))
    return gzip.compress(("\n".join(rows) + "\n").encode())


def stage_gpu_history(local_server: Any, client: Any, job_id: str, sub: str) -> None:
    """Six hours of GPU rows in the job's run, ending now, as the runtime would have uploaded them."""
    from ct_local.http.artifacts import run_root

    names = client.get_experiment_run(job_id)
    root = run_root(Path(local_server.state_dir), names["experiment_name"], names["experiment_run_name"])
    folder = root / "_metrics" / sub
    folder.mkdir(parents=True, exist_ok=True)
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=60)
    start = end - timedelta(minutes=HISTORY_MINUTES - 1)
    broken = [
        "{torn",
        json.dumps({"record_version": 1, "sub_job_id": sub, "sample_ts": "2026-01-01T00:00:00Z"}),
    ]
    for minute in range(HISTORY_MINUTES):
        at = start + timedelta(minutes=minute)
        name = f"gpu.{at.strftime('%Y%m%d-%H%M%S')}.{uuid.uuid4().hex}.gz"
        (folder / name).write_bytes(_gpu_chunk(sub, at, end, broken if minute == 0 else []))


def _training_job(base_url: str) -> str:
    """A running job with a training sub-job (gradients clipped, so steps report grad_norm) and a
    sampling one."""
    from ct_core import CortexTrainingClient, SubJobConfig

    with CortexTrainingClient(base_url=base_url, database=DATABASE, schema=SCHEMA, poll_interval=0.02) as c:
        training = SubJobConfig.training_job(
            "Qwen/Qwen3-0.6B",
            optimizer={"name": "AdamW", "lr": 1e-3},
            max_seq_len=128,
            train_batch_size=2,
            n_gpus=1,
            gradient_clipping=1.0,
        )
        sampling = SubJobConfig.sampling_job("Qwen/Qwen3-0.6B", max_seq_len=128, n_gpus=1)
        job_id = c.create_job([training, sampling])
        c.wait_for_job(job_id)
    return str(job_id)


@pytest.fixture(scope="module")
def trained_job(local_server: Any) -> str:
    """A running job whose training sub-job did three fwd-bwd calls and two steps, with GPU history."""
    from ct_core import CortexTrainingClient

    job_id = _training_job(local_server.base_url)
    fwd_bwd(local_server.base_url, job_id)
    _ct(local_server.base_url, job_id, "step", "--lr", "0.001")
    fwd_bwd(local_server.base_url, job_id)
    fwd_bwd(local_server.base_url, job_id)
    _ct(local_server.base_url, job_id, "step", "--lr", "0.0005")
    with CortexTrainingClient(base_url=local_server.base_url, database=DATABASE, schema=SCHEMA) as sdk:
        stage_gpu_history(local_server, sdk, job_id, f"{job_id}:training:0")
    return job_id


def _text(widget: Static) -> str:
    return str(widget.render())


def _text_with(pane: Any, selector: str, needle: str) -> str:
    """The text of a pane's Static once it holds `needle` (the panes draw after the layout settles)."""
    text = _text(pane.query_one(selector, Static))
    return text if needle in text else ""


# --- the Resources tab ----------------------------------------------------------------------------


def test_resources_tab_draws_the_newest_minutes_first_then_the_history_in_every_view(
    client: Any, trained_job: str, home: Path
) -> None:
    sub = f"{trained_job}:training:0"

    async def scenario() -> None:
        app = CtTui(client, trained_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, JobScreen)
            await wait_until(pilot, lambda: screen.sources, "the job's sources")
            await pilot.press("2")
            pane = screen.resources
            assert pane.display and not screen.query_one("#log").parent.display  # type: ignore[union-attr]
            await wait_until(pilot, lambda: (sub, "full") in [a[:2] for a in pane.arrivals], "the history")
            await wait_until(pilot, lambda: not pane.fetching, "the end of the download")

            # The newest minutes came first, through the preview, and never more than half an hour.
            first = next(arrival for arrival in pane.arrivals if arrival[0] == sub)
            assert first[1] == "preview", pane.arrivals
            assert first[2] <= metrics.PREVIEW_MAX_S
            data = pane.data[sub]
            assert pane.complete[sub] and data.ignored == 2
            assert (data.newest or 0) - (data.oldest or 0) > 5.5 * 3600

            # The server uploads its host rows on a period of its own: a first download may come
            # before the first of them, and the tab's next refresh brings them.
            def drawn_with_host_rows() -> str:
                text = _text_with(pane, "#resources-body", "GPU 1")
                return text if "CPUs" in text else ""

            body = await wait_until(pilot, drawn_with_host_rows, "the tab with the host rows")
            assert "100% ┤" in body and "0% └" in body and "GPU utilisation, 2 GPU(s)" in body
            assert "FB 40.0/80.0 GiB" in body and "FB —/— GiB" in body
            assert "2 row(s) ignored" in body
            assert "worker 0" in body and "CPUs" in body  # the server's own host rows
            assert pane.view == metrics.DEFAULT_VIEW == "15m"

            def gpu0_average() -> float:
                line = next(g for g in metrics.gpu_lines(pane.data[sub], pane.view) if g.index == 0)
                assert line.current == NEW_UTIL and line.average is not None
                return line.average

            assert gpu0_average() == pytest.approx(NEW_UTIL)
            await pilot.press("v")  # 1h
            assert pane.view == "1h" and gpu0_average() == pytest.approx(NEW_UTIL, abs=1.5)
            await pilot.press("v")  # 6h: one hour at 80 %, five at 20 %
            assert pane.view == "6h" and gpu0_average() == pytest.approx(30.0, abs=1.5)
            await pilot.press("v", "v")  # all, then round to 5m
            assert pane.view == "5m" and gpu0_average() == pytest.approx(NEW_UTIL)
            await pilot.press("V")
            assert pane.view == "all"
            assert " all " in str(pane.header())

            before = pane.downloads
            await pilot.press("u")
            await wait_until(pilot, lambda: pane.downloads > before, "a second download")
            assert pane.complete[sub]
            await pilot.press("1")
            assert not pane.display and screen.tab == "logs"

    run(scenario())


# --- the Training tab ----------------------------------------------------------------------------


def test_training_tab_shows_steps_calls_and_charts(client: Any, trained_job: str, home: Path) -> None:
    async def scenario() -> None:
        app = CtTui(client, trained_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, JobScreen)
            await wait_until(pilot, lambda: screen.sources, "the job's sources")
            await pilot.press("3")
            pane = screen.training
            await wait_until(
                pilot,
                lambda: pane.shown_sub_job() and len(pane.data[pane.shown_sub_job()].calls) >= 5,  # type: ignore[index]
                "the training rows",
            )
            data = pane.data[f"{trained_job}:training:0"]
            steps = data.steps()
            assert [(s.step, s.calls, s.done) for s in steps] == [(1, 1, True), (2, 2, True)]
            assert all(s.loss is not None and s.grad_norm is not None for s in steps)
            assert [s.lr for s in steps] == [pytest.approx(0.001), pytest.approx(0.0005)]

            table = pane.query_one("#training-table", DataTable)
            # The pane draws its table after the next refresh, not when the rows arrive.
            await wait_until(pilot, lambda: table.row_count == 2, "one row per step")
            assert [str(c.label) for c in table.columns.values()][:3] == ["step", "calls", "loss"]
            assert str(table.get_row_at(0)[0]) == "2"  # newest first
            charts_text = await wait_until(
                pilot, lambda: _text_with(pane, "#training-charts", "grad-norm"), "the charts"
            )
            for title in ("loss (mean of the step's calls)", "learning rate", "grad-norm"):
                assert title in charts_text
            assert any(0x2800 < ord(char) <= 0x28FF for char in charts_text)  # braille dots were drawn
            assert "step" in charts_text

            await pilot.press("t")
            assert pane.per_call
            await wait_until(pilot, lambda: table.row_count == 5, "one row per call")
            assert [str(c.label) for c in table.columns.values()][:2] == ["time", "op"]
            ops = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
            assert ops == ["step", "fwd_bwd", "fwd_bwd", "step", "fwd_bwd"]
            # The first call came before any step: it belongs to the step that followed it.
            assert str(table.get_row_at(4)[2]) == "1"
            await pilot.press("t")
            await wait_until(pilot, lambda: table.row_count == 2, "the steps again")
            await pilot.press("1")
            assert screen.tab == "logs" and not pane.display

    run(scenario())


# --- warm-up and sessions -------------------------------------------------------------------------


def test_job_screen_warms_the_artifact_session_once_and_a_failure_goes_to_the_error_log(
    client: Any, trained_job: str, home: Path
) -> None:
    async def scenario() -> None:
        app = CtTui(client, trained_job, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, JobScreen)
            await wait_until(pilot, lambda: screen.warmed, "the warm-up")
            assert client.keep_artifact_sessions is True
        assert client.keep_artifact_sessions is False  # closed on the way out

        missing = "00000000-0000-0000-0000-000000000000"
        app = CtTui(client, missing, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, JobScreen)
            await wait_until(pilot, lambda: screen.warmed, "the warm-up of a missing job")
            error_log = home / ".cortex-training-errors.log"
            await wait_until(
                pilot,
                lambda: error_log.exists() and f"{missing} failed" in error_log.read_text(),
                "the warm-up's traceback",
            )
            assert "warm-up" not in "\n".join(screen.shown_lines())  # nothing on screen
            assert oct(error_log.stat().st_mode & 0o777) == "0o600"

    run(scenario())


# --- model deployments ----------------------------------------------------------------------------


def test_deployments_screen_lists_status_reason_and_base_url_read_only(
    client: Any, trained_job: str, home: Path
) -> None:
    spec = {
        "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
        "source": {"type": "base_model", "model": "Qwen/Qwen3-0.6B"},
        "inference": {"max_seq_len": 256},
    }
    deployment = client.create_model_deployment(spec)["deployment"]
    client.wait_for_model_deployment(deployment, timeout=120)

    async def scenario() -> None:
        app = CtTui(client)
        async with app.run_test(size=SIZE) as pilot:
            assert isinstance(app.screen, JobPickerScreen)
            await pilot.press("d")
            screen = app.screen
            assert isinstance(screen, DeploymentsScreen)
            await wait_until(pilot, lambda: any(deployment == row[0] for row in screen.rows()), "the row")
            row = next(row for row in screen.rows() if row[0] == deployment)
            assert row[1] == "READY" and row[3] == "Qwen/Qwen3-0.6B" and row[4] == "1 x H200"
            assert row[6].startswith("http")
            detail = _text(screen.query_one("#deployment-detail", Static))
            assert "source: base model Qwen/Qwen3-0.6B" in detail and "base_url: http" in detail
            await pilot.press("r")
            await wait_until(pilot, lambda: not screen.refreshing, "a refresh")
            assert client.get_job(deployment.removeprefix("sf-ct-"))["status"] == "running"  # untouched
            await pilot.press("b")
            assert isinstance(app.screen, JobPickerScreen)

            # The screens' keys belong to the picker: on a job's screen `d` opens nothing.
            app.open_job(trained_job)
            await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), "the job screen")
            await pilot.press("d")
            assert isinstance(app.screen, JobScreen)

    run(scenario())


def test_deployment_reason_wording() -> None:
    assert records.deployment_reason({"failure": {"code": "OOM", "message": "out of memory"}}) == (
        "OOM: out of memory"
    )
    assert records.deployment_reason({"status_reason": "placing", "status_details": "waiting"}) == (
        "placing: waiting"
    )
    assert records.deployment_reason({}) == "—"


# --- runs -----------------------------------------------------------------------------------------


def test_runs_screen_against_the_real_client_never_fails(client: Any, home: Path) -> None:
    """Until the runs service is on this server the screen says so; once it is, it lists."""

    async def scenario() -> None:
        app = CtTui(client)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("R")
            screen = app.screen
            assert isinstance(screen, RunsScreen)
            await wait_until(pilot, lambda: screen.loaded, "the runs list")
            rows = screen.row_texts()
            assert rows and not rows[0].startswith("[error]"), rows
            assert rows[0].startswith(UNAVAILABLE) or rows == ["(no runs)"] or "run_" in rows[0]
            await pilot.press("escape")
            assert isinstance(app.screen, JobPickerScreen)

    run(scenario())


#: A finished run of the runs service, as getRun answers it.
STAGED_RUN: dict[str, Any] = {
    "run_id": "run_01JTESTRUN0000000000000000",
    "status": "succeeded",
    "model_config_tier": "S",
    "model_name": "Qwen/Qwen3-0.6B",
    "dataset_id": "ds_01JTESTDATASET00000000000",
    "step": 40,
    "total_steps": 60,
    "epoch": 2,
    "best_val_loss": 1.25,
    "best_step": 30,
    "early_stop": {"step": 40, "reason": "validation loss did not improve for 2 checks"},
    "checkpoints": [
        {"checkpoint_id": "ck_a", "job_id": "job-1", "step": 20, "reasons": ["cadence"], "val_loss": 1.4},
        {
            "checkpoint_id": "ck_b",
            "job_id": "job-1",
            "step": 30,
            "reasons": ["cadence", "best"],
            "val_loss": 1.25,
        },
        {"checkpoint_id": "ck_c", "job_id": "job-1", "step": 40, "reasons": ["final"], "val_loss": 1.3},
    ],
    "best_checkpoint_id": "ck_b",
    "trainer": {"early_stopping": True, "patience": 2},
    "gpu_seconds": 812.5,
    "model_id": "mdl_01JTESTMODEL000000000000",
    "created_at": "2026-01-01T10:00:00Z",
}


class _StagedRuns:
    """The four reads of the runs service, answering one finished run.

    A stand-in until the runs service and `client.runs` land in this tree (nothing real can run
    yet); its answers follow the fixed REST shapes of the runs contract.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def list(self) -> dict[str, Any]:
        self.calls.append(("list", None))
        return {"runs": [STAGED_RUN]}

    def get(self, run_id: str) -> dict[str, Any]:
        self.calls.append(("get", run_id))
        return dict(STAGED_RUN)

    def metrics(self, run_id: str, *, after_step: int = -1) -> dict[str, Any]:
        self.calls.append(("metrics", after_step))
        train = [[step, 3.0 * math.exp(-step / 20)] for step in range(1, 41) if step > after_step]
        val = [[step, 1.2 + 0.5 * math.exp(-step / 10)] for step in (10, 20, 30, 40) if step > after_step]
        cursor = max([point[0] for point in train + val], default=after_step)
        return {"series": {"train_loss": train, "val_loss": val}, "cursor": cursor}

    def logs(self, run_id: str, *, structured: bool = False, after: int = 0) -> dict[str, Any]:
        self.calls.append(("logs", (structured, after)))
        entries = [
            {
                "timestamp": "2026-01-01T10:05:00Z",
                "severity": "INFO",
                "seq": 1,
                "step": 30,
                "epoch": 1,
                "event": "validation",
                "message": "validation loss improved",
                "val_loss": 1.25,
            },
            {
                "timestamp": "2026-01-01T10:06:00Z",
                "severity": "WARNING",
                "seq": 2,
                "step": 40,
                "epoch": 2,
                "event": "early_stop",
                "message": "stopping early",
                "early_stop": True,
            },
        ]
        entries = [entry for entry in entries if entry["seq"] > after]
        return {"logs": entries, "cursor": max([entry["seq"] for entry in entries], default=after)}


class _WithRuns:
    def __init__(self, client: Any, runs: _StagedRuns) -> None:
        self._client = client
        self.runs = runs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_runs_screen_shows_status_loss_chart_best_checkpoint_early_stop_and_logs(
    client: Any, home: Path
) -> None:
    runs = _StagedRuns()

    async def scenario() -> None:
        app = CtTui(_WithRuns(client, runs))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("R")
            screen = app.screen
            assert isinstance(screen, RunsScreen)
            await wait_until(pilot, lambda: screen.logs, "the run's logs")
            [row] = screen.row_texts()
            assert row.split(" │ ")[0].strip() == "succeeded" and "run_01JTESTRUN" in row and "40/60" in row
            facts = await wait_until(
                pilot, lambda: _text_with(screen, "#run-facts", "registered"), "the facts"
            )
            assert "best val_loss 1.25 at step 30" in facts
            assert "best checkpoint ck_b (step 30, val_loss 1.25, job job-1)" in facts
            assert "checkpoints: 3 (best 1, cadence 2, final 1)" in facts
            assert "stopped early at step 40: validation loss did not improve" in facts
            assert "registered model: mdl_01JTESTMODEL" in facts
            chart = await wait_until(pilot, lambda: _text_with(screen, "#run-chart", "val_loss"), "the chart")
            assert "── train_loss" in chart and "── val_loss" in chart and "(last 1.2092)" in chart
            assert ("logs", (True, 0)) in runs.calls and ("metrics", -1) in runs.calls
            assert ("logs", (True, 2)) in runs.calls and ("metrics", 40) in runs.calls  # nothing newer
            assert "validation: validation loss improved  val_loss=1.25" in screen.log_text()[0]
            assert screen.log_text()[1].startswith("2026-01-01T10:06:00Z WARNING step 40 early_stop:")

    run(scenario())


def test_runs_screen_says_the_service_is_unavailable_without_a_runs_sdk(home: Path) -> None:
    class NoRuns:
        """A client of a ct without the runs SDK: reading `runs` fails as a missing attribute does."""

        database = schema = "X"

        def list_jobs(self) -> list[Any]:
            return []

        def __getattr__(self, name: str) -> Any:
            raise AttributeError(name)

    async def scenario() -> None:
        app = CtTui(NoRuns())
        async with app.run_test(size=SIZE) as pilot:
            app.action_open_screen("runs")
            screen = app.screen
            assert isinstance(screen, RunsScreen)
            await wait_until(pilot, lambda: screen.loaded, "the row")
            assert screen.row_texts() == [f"{UNAVAILABLE}: this ct has no runs SDK (client.runs)"]

    run(scenario())


# --- the account-wide picker ----------------------------------------------------------------------


def _running_job_in(base_url: str, database: str) -> str:
    from ct_core import CortexTrainingClient, SubJobConfig

    with CortexTrainingClient(base_url=base_url, database=database, schema=SCHEMA, poll_interval=0.02) as c:
        training = SubJobConfig.training_job(
            "Qwen/Qwen3-0.6B",
            optimizer={"name": "AdamW", "lr": 1e-3},
            max_seq_len=128,
            train_batch_size=1,
            n_gpus=1,
        )
        job_id = c.create_job([training])
        c.wait_for_job(job_id)
    return str(job_id)


def _rows(app: CtTui) -> list[str]:
    rows = app.screen.query_one("#jobs", OptionList)
    return [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count)]


def test_picker_searches_a_whole_database_or_schema_across_the_account(
    client: Any, local_server: Any, running_job: str, home: Path
) -> None:
    other = _running_job_in(local_server.base_url, OTHER_DATABASE)

    async def scenario() -> None:
        app = CtTui(client, poll_interval=0.2)
        async with app.run_test(size=SIZE) as pilot:
            picker = app.screen
            assert isinstance(picker, JobPickerScreen)
            await wait_until(
                pilot, lambda: any(running_job in row for row in _rows(app)), "the schema's jobs"
            )
            assert not any(other in row for row in _rows(app))

            await pilot.press("slash", *f"@{OTHER_DATABASE}")
            await wait_until(
                pilot, lambda: any(other in row for row in _rows(app)), "the other database's job"
            )
            assert all(row.endswith(f" │ {OTHER_DATABASE}.{SCHEMA}") for row in _rows(app))
            assert not any(running_job in row for row in _rows(app))
            assert f"account-wide: {OTHER_DATABASE}" in (picker.sub_title or "")

            await pilot.press("escape")
            await wait_until(pilot, lambda: any(running_job in row for row in _rows(app)), "the schema again")
            assert picker.location is None

            await pilot.press("slash", *f"{OTHER_DATABASE.lower()}.public")
            await wait_until(pilot, lambda: any(other in row for row in _rows(app)), "database.schema")

            await pilot.press("enter")  # back to the list
            picker.query_one("#jobs", OptionList).highlighted = 0
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), "the other job's screen")
            screen = app.screen
            assert isinstance(screen, JobScreen) and screen.job_id == other
            assert screen.job_client.database == OTHER_DATABASE
            await wait_until(pilot, lambda: "— live —" in screen.shown_lines(), "its live log")
            await pilot.press("b")

            await pilot.press("slash", *"@NO_SUCH_DB")
            await wait_until(pilot, lambda: _rows(app) == ["(no jobs found in NO_SUCH_DB)"], "the empty row")

    run(scenario())


def test_account_walk_reads_every_page_and_keeps_tokens_to_their_filters(
    client: Any, local_server: Any
) -> None:
    made = {_running_job_in(local_server.base_url, "CT_TUI_WALK") for _ in range(3)}
    walk = account.AccountWalk(account.Location("CT_TUI_WALK"))
    walk.read(client, page_size=1, max_jobs=2)
    assert len(walk.jobs) == 2 and walk.token and not walk.done
    assert walk.token_filters == {"database": "CT_TUI_WALK", "schema": None}
    assert walk.token_for({"database": "OTHER", "schema": None}) is None
    walk.read(client, page_size=1)
    assert walk.done and walk.token is None and {j["job_id"] for j in walk.jobs} == made

    stale = account.AccountWalk(account.Location("CT_TUI_WALK"), token="t", token_filters={"database": "X"})
    with pytest.raises(RuntimeError, match="filters it was made under"):
        stale.read(client)


def test_locations_a_filter_can_name() -> None:
    assert account.location_in("@DB") == account.Location("DB")
    assert account.location_in(" @db.public ") == account.Location("db", "public")
    assert account.location_in("DB.SCHEMA") == account.Location("DB", "SCHEMA")
    assert account.location_in('@"My db"."S"') == account.Location('"My db"', '"S"')
    for plain in ("running", "DB", "Qwen3-0.6B", "qwen3.5", "a.b.c", "@", "@1DB", "3f2a-11"):
        assert account.location_in(plain) is None, plain


# --- the screen hook ------------------------------------------------------------------------------


class _HelloScreen(Screen[None]):
    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client

    def compose(self) -> Any:
        yield Static("hello from a plugin", id="hello")


class _HelloPlugin:
    from ct_core.hookspecs import hookimpl

    @staticmethod
    @hookimpl
    def ct_tui_screens() -> list[Any]:
        return [
            ScreenEntry("hello", "h", "Hello", _HelloScreen),
            ScreenEntry("clash", "d", "Clash", _HelloScreen),  # the deployments key
            ScreenEntry("Bad Name", "x", "Bad", _HelloScreen),
            "not an entry",
        ]


class _BrokenPlugin:
    from ct_core.hookspecs import hookimpl

    @staticmethod
    @hookimpl
    def ct_tui_screens() -> list[Any]:
        raise RuntimeError("broken on purpose")


def test_hook_ct_tui_screens(client: Any, home: Path) -> None:
    from ct_core import plugins

    pm = plugins.new_plugin_manager()
    pm.register(_HelloPlugin(), name="hello-plugin")
    pm.register(_BrokenPlugin(), name="broken-plugin")
    collected = collect_entries(pm)
    assert [entry.name for entry in collected.entries] == ["deployments", "runs", "hello"]
    problems = "\n".join(collected.problems)
    assert "plugin 'broken-plugin' failed in ct_tui_screens: RuntimeError: broken on purpose" in problems
    assert "key 'd' already opens another screen" in problems
    assert "screen name 'Bad Name'" in problems and "got str" in problems
    assert check_entry(ScreenEntry("ok", "r", "Refresh clash", _HelloScreen)) == (
        "screen 'ok': key 'r' is used by the job picker"
    )

    async def scenario() -> None:
        app = CtTui(client, plugin_manager=pm)
        async with app.run_test(size=SIZE) as pilot:
            assert isinstance(app.screen, JobPickerScreen)
            await pilot.press("h")
            assert isinstance(app.screen, _HelloScreen) and app.screen.client is client
            assert app.screen.title == "Hello"
        error_log = (home / ".cortex-training-errors.log").read_text()
        assert "a TUI screen was left out" in error_log and "broken on purpose" in error_log

    run(scenario())


# --- the pure rules -------------------------------------------------------------------------------


def test_block_chart_glyphs_axis_and_time_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    start = datetime(2026, 1, 1, 12, 0, tzinfo=UTC).timestamp()
    lines = charts.block_chart([0.0, 50.0, 100.0, None, 12.5], height=2, start_s=start, end_s=start + 900)
    assert lines[0] == "100% ┤  █  "
    assert lines[1] == "     │ ██·▂"
    assert lines[2] == "  0% └─────"
    assert lines[3] == " " * charts.AXIS_WIDTH + "12:00"  # five cells: room for the first label only
    wide = charts.block_chart([50.0] * 40, height=1, start_s=start, end_s=start + 900)
    assert wide[-1] == " " * charts.AXIS_WIDTH + "12:00" + " " * 12 + "12:07" + " " * 13 + "12:15"
    assert charts.sparkline([0, 100, None]) == " █·"
    time.tzset()


def test_line_chart_joins_points_and_names_each_cell_owner() -> None:
    chart = charts.LineChart(30, 8, [[(1, 1.0), (10, 2.0)], [(1, 2.0), (10, 1.0)]], x_label="step")
    lines = chart.lines()
    assert lines[0].lstrip().startswith("2 ┤") and lines[5].lstrip().startswith("1 ┤")
    assert lines[-1].strip().split() == ["1", "step", "10"]
    owners = {owner for row in chart.owners for owner in row}
    assert {0, 1, charts.MIXED} <= owners  # the two lines cross
    assert charts.LineChart(20, 6, [[]]).lines()[-1].strip().startswith("└")


def test_buckets_weigh_each_sample_by_the_time_it_stands_for() -> None:
    # One sample covering 60 s at 100 %, one covering 20 s at 0 %: the 60 s window averages 75 %.
    samples = [metrics.Sample(60.0, 60.0, 100.0), metrics.Sample(80.0, 20.0, 0.0)]
    assert metrics.window_average(samples, 20.0, 80.0) == pytest.approx(2 / 3 * 100)
    values = metrics.buckets(samples, 0.0, 80.0, 4)
    assert values == [100.0, 100.0, 100.0, 0.0]
    assert metrics.buckets([metrics.Sample(10.0, 1.0, None)], 0.0, 20.0, 2) == [None, None]
    assert len(metrics.buckets(samples, 0.0, 80.0, 10_000)) == metrics.MAX_BUCKETS


def test_only_committed_bytes_are_read(tmp_path: Path) -> None:
    path = tmp_path / "gpu.jsonl"
    first = json.dumps(
        {"kind": "system", "record_version": 3, "worker_num": 0, "sample_ts": "2026-01-01T00:00:00Z"}
    )
    path.write_text(first + "\n" + first.replace("00:00:00", "00:01:00") + "\n{half a li")
    assert metrics.committed_lines(path) == []  # no manifest: nothing is committed
    metrics.manifest_path(path).write_text(json.dumps({"version": 1, "names": [], "bytes": len(first) + 1}))
    data = metrics.read_resources(metrics.committed_lines(path))
    assert len(data.workers[0].cpu) == 1 and data.ignored == 0


def test_rows_of_other_versions_and_kinds() -> None:
    lines = [
        json.dumps({"record_version": 3, "global_gpu_index": 0, "sample_ts": "2026-01-01T00:00:00Z"}),
        json.dumps(
            {
                "kind": "gpu",
                "record_version": 2,
                "global_gpu_index": 0,
                "sample_ts": "2026-01-01T00:00:00Z",
                "gpu_util_pct": None,
                "fb_used_bytes": 1,
                "fb_free_bytes": None,
            }
        ),
        json.dumps({"kind": "future", "record_version": 9}),
        "[1, 2]",
        "",
    ]
    data = metrics.read_resources(lines)
    assert data.ignored == 2 and list(data.gpus) == [0]
    [line] = metrics.gpu_lines(data, "5m")
    assert line.text() == "GPU 0   util    — now     — avg  FB 0.0/— GiB"


def test_training_steps_give_waiting_calls_to_the_next_step() -> None:
    def row(op: str, step: int | None, loss: float | None = None, **more: float) -> str:
        values: dict[str, Any] = {**more, **({"avg_loss": loss} if loss is not None else {})}
        return json.dumps(
            {
                "kind": "training",
                "record_version": 2,
                "op": op,
                "step": step,
                "sample_ts": "2026-01-01T00:00:00Z",
                "metrics": values,
                "request_id": "r",
            }
        )

    data = metrics.read_training(
        [
            row("fwd_bwd", None, 4.0),
            row("fwd_bwd", None, 2.0),
            row("step", 1, grad_norm=1.5, last_lr=0.1),
            row("fwd_bwd", 2, 1.0),
            json.dumps({"kind": "training", "record_version": 1, "op": "step"}),
            "{torn",
        ]
    )
    assert data.ignored == 2
    steps = data.steps()
    assert [(s.step, s.calls, s.loss, s.grad_norm, s.lr, s.done) for s in steps] == [
        (1, 2, 3.0, 1.5, 0.1, True),
        (2, 1, 1.0, None, None, False),
    ]
    assert [c.step for c in data.resolved_calls()] == [1, 1, 1, 2]
    assert data.series() == {"loss": [(1.0, 3.0), (2.0, 1.0)], "lr": [(1.0, 0.1)], "grad_norm": [(1.0, 1.5)]}


def test_views_cycle_and_unknown_views_are_named() -> None:
    assert [metrics.next_view(v) for v in ("5m", "15m", "1h", "6h", "all")] == [
        "15m",
        "1h",
        "6h",
        "all",
        "5m",
    ]
    assert metrics.next_view("5m", -1) == "all"
    with pytest.raises(ValueError, match="unknown view '2d'; use one of 5m, 15m, 1h, 6h, all"):
        metrics.view_span("2d")


def test_run_records_wording() -> None:
    run_ = dict(STAGED_RUN, early_stop=None, trainer={"early_stopping": False})
    assert records.early_stop_text(run_) == "off"
    assert records.merge_series(
        {"val_loss": [(1.0, 2.0)]}, {"series": {"val_loss": [[1, 1.5], [2, 1.0]]}}
    ) == {"val_loss": [(1.0, 1.5), (2.0, 1.0)]}
    status, rest = records.run_row(run_)
    assert status.strip() == "succeeded" and rest.endswith("│ S │     40/60 │ best 1.25")
