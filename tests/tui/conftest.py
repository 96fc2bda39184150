"""Fixtures of the `ct tui` tests: a training job on a ct_local server of their own, and helpers.

The screens are driven with Textual's own harness (`App.run_test()` and its Pilot) against the real
server; `wait_until` polls a condition while the app keeps running, so no test depends on timing.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("textual")

DATABASE = "CT_TUI_DB"
SCHEMA = "PUBLIC"
#: A readable batch for `ct fwd-bwd` on the local server's byte tokenizer.
BATCH = {"texts": ["hello there, general kenobi"], "tokenizer": "byte", "max_length": 32}
#: Generous: the first request of a job loads the tiny model.
WAIT_S = 90.0


@pytest.fixture(scope="module")
def local_server(module_local_server_factory: Any) -> Any:
    """A server of these tests' own: on the session's shared server, other modules' running jobs may
    hold every GPU of the account, and a new job would stay pending."""
    return module_local_server_factory()


@pytest.fixture
def client(local_server: Any) -> Any:
    from ct_core import CortexTrainingClient

    with CortexTrainingClient(
        base_url=local_server.base_url, database=DATABASE, schema=SCHEMA, poll_interval=0.05
    ) as sdk:
        yield sdk


def make_running_job(base_url: str) -> str:
    """A job with a training and a sampling sub-job, waited until it runs."""
    from ct_core import CortexTrainingClient, SubJobConfig

    with CortexTrainingClient(base_url=base_url, database=DATABASE, schema=SCHEMA, poll_interval=0.02) as c:
        training = SubJobConfig.training_job(
            "Qwen/Qwen3-0.6B",
            optimizer={"name": "AdamW", "lr": 1e-3},
            max_seq_len=128,
            train_batch_size=2,
            n_gpus=1,
        )
        sampling = SubJobConfig.sampling_job("Qwen/Qwen3-0.6B", max_seq_len=128, n_gpus=1)
        job_id = c.create_job([training, sampling])
        c.wait_for_job(job_id)
    return str(job_id)


@pytest.fixture(scope="module")
def running_job(local_server: Any) -> str:
    return make_running_job(local_server.base_url)


def fwd_bwd(base_url: str, job_id: str) -> str:
    """Run `ct fwd-bwd` in this process (as another client would); the request id it got."""
    from ct_cli.main import main

    out, err = io.StringIO(), io.StringIO()
    args = ["--base-url", base_url, "--database", DATABASE, "--poll-interval", "0.05", "--job", job_id]
    code = main([*args, "fwd-bwd", "-"], stdout=out, stderr=err, stdin=io.StringIO(json.dumps(BATCH)))
    assert code == 0, err.getvalue()
    return str(json.loads(out.getvalue())["request_id"])


async def wait_until(pilot: Any, condition: Callable[[], Any], what: str, limit_s: float = WAIT_S) -> Any:
    """Let the app run until `condition()` is truthy (its value), failing after `limit_s`."""
    deadline = time.monotonic() + limit_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def run(scenario: Any) -> None:
    asyncio.run(scenario)


@pytest.fixture
def home(ct_home: Path) -> Path:
    """An isolated HOME: the TUI's error log and saved files land there."""
    return ct_home


def server_log_lines(client: Any, job_id: str, sub_job_id: str) -> list[str]:
    """A sub-job's whole live log as the service holds it now, read from its start page by page."""
    from ct_cli.tui import format as fmt

    lines: list[str] = []
    cursor: str | None = None
    while True:
        page = client.tail_logs(job_id, cursor=cursor, sub_job_id=sub_job_id)
        entries = page.get("entries") or []
        if not entries:
            return lines
        lines += [fmt.entry_text(entry) for entry in entries]
        cursor = page.get("next_cursor") or cursor


@pytest.fixture
def cache_dir(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The TUI's log cache in a folder of the test's own, named through the environment."""
    folder = home / "tui-cache"
    monkeypatch.setenv("CORTEX_TRAINING_TUI_CACHE_DIR", str(folder))
    return folder
