"""The lifecycle loop passes over the jobs when one is due or it is woken, never on a fixed tick.

A server idle with many running jobs used to read them all from SQLite every `tick_s` (10 ms in
the tests' servers), on the event loop every request goes through. Here the loop runs against a
real store; `IDLE_RECHECK_S`, its safety net for changes nobody announces, is raised to a minute
so that any transition seen within the tests' limits came from a due time or a wake.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_testing import wait_until

from ct_local.control import lifecycle as lifecycle_module
from ct_local.control.jobs import build_job
from ct_local.control.lifecycle import Lifecycle
from ct_local.settings import HardwareCapacity, Identity, ServerSettings
from ct_local.storage.store import JobRow, Store

SAMPLING = {"job_type": "sampling", "model_name": "Qwen/Qwen3-0.6B", "inference_config": {"n_gpus": 1}}
LIMIT_S = 30.0


class CountingStore(Store):
    """A real store that counts the lifecycle's passes (each reads the active jobs once)."""

    passes = 0

    def jobs_with_status(self, statuses: Any) -> list[JobRow]:
        self.passes += 1
        return super().jobs_with_status(statuses)


@dataclasses.dataclass
class Loop:
    store: CountingStore
    settings: ServerSettings
    lifecycle: Lifecycle

    def job(self, status: str = "pending", **fields: Any) -> str:
        job = build_job(
            {"sub_job_configs": [SAMPLING]},
            settings=self.settings,
            identity=Identity("LOCAL_ROLE", "LOCAL_USER"),
            database="DB",
            schema="LOOP",
            endpoint="cortex-training",
            now=time.time(),
        )
        self.store.insert_job(dataclasses.replace(job, status=status, **fields))
        return job.job_id

    def status(self, job_id: str) -> str:
        job = self.store.get_job(job_id)
        assert job is not None
        return job.status


@pytest.fixture
def loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Loop]:
    monkeypatch.setattr(lifecycle_module, "IDLE_RECHECK_S", 60.0)
    settings = ServerSettings(
        capacity={"H200": HardwareCapacity(max_total_gpus=1)},
        state_dir=tmp_path / "state",
        pending_delay_s=0.3,
        placing_delay_s=0.3,
        initializing_delay_s=0.3,
        cancelling_delay_s=0.3,
        tick_s=0.01,
    )
    store = CountingStore(settings.state_dir)
    lifecycle = Lifecycle(store, settings)
    runner = asyncio.new_event_loop()
    task = runner.create_task(lifecycle.run())

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            runner.run_until_complete(task)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield Loop(store, settings, lifecycle)
    finally:
        runner.call_soon_threadsafe(task.cancel)
        thread.join(LIMIT_S)
        runner.close()
        store.close()


def test_an_idle_loop_with_running_jobs_does_not_pass_over_them(loop: Loop) -> None:
    for _ in range(20):
        loop.job("running", idle_timeout_seconds=3600)
    loop.lifecycle.wake()
    wait_until(lambda: loop.store.passes >= 1, timeout=LIMIT_S, message="the loop never passed")
    before = loop.store.passes
    time.sleep(1.0)
    # At 10 ms a tick this would be about 100 passes; nothing is due for an hour.
    assert loop.store.passes - before <= 1


def test_a_woken_loop_takes_a_new_job_through_each_dwell_time(loop: Loop) -> None:
    job_id = loop.job()
    loop.lifecycle.wake()
    # pending -> placing -> initializing -> running: the first step from the wake, the others at
    # the due times the passes computed (each 0.3 s), none from the minute-long recheck.
    wait_until(lambda: loop.status(job_id) == "running", timeout=LIMIT_S, message="the job never ran")
    assert loop.store.passes <= 12


def test_a_running_job_idle_past_its_timeout_is_reclaimed_when_due(loop: Loop) -> None:
    job_id = loop.job("running", idle_timeout_seconds=1)
    loop.lifecycle.wake()
    wait_until(lambda: loop.status(job_id) == "terminated", timeout=LIMIT_S, message="the idle job was kept")
    job = loop.store.get_job(job_id)
    assert job is not None and job.reason == "idle_timeout"


def test_a_cancel_wakes_the_loop_and_the_end_of_a_job_frees_gpus_for_a_pending_one(loop: Loop) -> None:
    holder = loop.job("running", idle_timeout_seconds=3600, hardware="H200", gpus=1)
    waiting = loop.job("pending", hardware="H200", gpus=1, pending_timeout_seconds=3600)
    loop.lifecycle.wake()
    time.sleep(0.5)
    assert loop.status(waiting) == "pending"
    job = loop.store.get_job(holder)
    assert job is not None
    loop.lifecycle.cancel(job)  # from this thread, as a request handler's would be
    wait_until(lambda: loop.status(holder) == "cancelled", timeout=LIMIT_S, message="the cancel hung")
    wait_until(lambda: loop.status(waiting) == "running", timeout=LIMIT_S, message="the GPUs stayed held")
