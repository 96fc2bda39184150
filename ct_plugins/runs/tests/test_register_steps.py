"""The two steps of a cancelled run's registration, each run again as DBOS's recovery does.

A step that crashed before DBOS recorded its output runs again from the top: the export on a new
job (the record step ends the one the lost attempt left), the record with the export already
registered. Either way the run gets one model and one ``model_registered`` line.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_runs.engine import Engine
from ct_runs.ids import new_id
from ct_runs.store import Store

DATABASE, SCHEMA = "REGSTEPS_DB", "PUBLIC"
OWNER = "tester"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path / 'runs.sqlite3'}")
    yield store
    store.close()


def _cancelled_copy(store: Store, trained: dict[str, Any]) -> str:
    """The trained run as a run cancelled with the same checkpoints, without a model."""
    record = {**trained["record"], "run_id": new_id("run"), "config_fingerprint": secrets.token_hex(32)}
    state = {
        **trained["state"],
        "finished_ts": time.time(),
        "model_id": None,
        "live_job_id": None,
        "error": None,
        "finalized_by": "cancel",
    }
    run_id, created, _ = store.insert_run_unless_in_flight(record, state, OWNER)
    assert created
    assert store.write_state(run_id, state, status="cancelled")
    return run_id


def _events(store: Store, run_id: str) -> list[str]:
    return [json.loads(r.context).get("event") for r in store.log_entries(run_id, 0, 10_000)]


def test_both_steps_run_again_register_one_model(
    store: Store, client_for: Any, trained: dict[str, Any]
) -> None:
    engine = Engine(store, client_for, executor_id="w")
    run_id = _cancelled_copy(store, trained)
    # The export runs twice (its first output lost with a crash), then the record twice.
    lost = engine.save_cancelled(run_id)["saved"]
    saved = engine.save_cancelled(run_id)["saved"]
    assert lost["job_id"] != saved["job_id"]
    first = engine.record_cancelled(run_id, saved)
    again = engine.record_cancelled(run_id, saved)
    assert first == again and first["created"] is True
    model = first["model"]
    assert model["model_id"] == saved["model_id"] and model["run_status"] == "cancelled"
    assert model["source_checkpoint_id"] == trained["state"]["best_checkpoint_id"]

    run = engine.public(run_id)
    assert run["model_id"] == model["model_id"] and run["status"] == "cancelled"
    assert saved["job_id"] in run["job_ids"]
    assert _events(store, run_id).count("model_registered") == 1
    # The job of the lost export was ended with the registration's own.
    jobs = {job.job_id: job for job in store.run_jobs(run_id)}
    assert {lost["job_id"], saved["job_id"]} <= set(jobs)
    assert all(job.ended_at is not None for job in jobs.values())

    # A registration that comes later answers the model; another export is registered by nobody.
    assert engine.save_cancelled(run_id) == {"model": model, "created": False}
    late = engine.record_cancelled(run_id, {**lost, "model_id": new_id("mdl")})
    assert late == {"model": model, "created": False}
    assert _events(store, run_id).count("model_registered") == 1


def test_a_run_that_cannot_register_is_refused_with_what_to_do(
    store: Store, client_for: Any, trained: dict[str, Any]
) -> None:
    engine = Engine(store, client_for, executor_id="w")
    run_id = _cancelled_copy(store, trained)
    state = {**trained["state"], "finished_ts": None, "model_id": None, "live_job_id": None}
    assert store.write_state(run_id, state, status="failed")
    refused = engine.save_cancelled(run_id)["refused"]
    assert refused["code"] == "aborted" and "resume it" in refused["message"], refused
    assert store.model_for_run(run_id) is None
