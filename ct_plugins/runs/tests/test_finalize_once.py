"""A run turns terminal exactly once, however many finalizers race for it.

Two finalizers of one run (the cancel route and the run's workflow picked up at that moment, or two
workers on one database) each read the run as not finished and then write its end. The tests make
that interleaving certain instead of likely: a barrier holds every finalizer right before its
terminal write (each has read the run by then), and an event lets the chosen one write first. Each
finalizer has a store of its own, as two processes would, over one real SQLite file or Postgres.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from ct_runs import store as tables
from ct_runs.engine import Engine, new_state
from ct_runs.ids import new_id
from ct_runs.service import RunsService
from ct_runs.store import TERMINAL, Store

DATABASE, SCHEMA = "FINALIZE_DB", "PUBLIC"
OWNER = "tester"
#: Bounds a hang only: a finalizer that never reaches the barrier fails the test instead of stalling it.
BARRIER_TIMEOUT_S = 300


class Race:
    """Runs callables in threads that all reach their first terminal write before any writes.

    ``hold(store)`` wraps that store object's ``write_state``: a thread's first write of a terminal
    status waits at the barrier, then the thread named ``first`` writes while the others wait for it
    to have written. Every terminal write that happened is recorded, in order. The store's
    ``add_model`` waits at a barrier of its own, so finalizers of a succeeded run have all found no
    model registered (and saved weights for one) before any registers it.
    """

    def __init__(self, parties: int, *, first: int = 0) -> None:
        self.barrier = threading.Barrier(parties, timeout=BARRIER_TIMEOUT_S)
        self.registering = threading.Barrier(parties, timeout=BARRIER_TIMEOUT_S)
        self.first = first
        self.first_wrote = threading.Event()
        self.terminal_writes: list[str] = []
        self._lock = threading.Lock()
        self._local = threading.local()

    def hold(self, store: Store) -> Store:
        write = store.write_state

        def write_state(run_id: str, state: Any, *, status: str | None = None, **options: Any) -> bool:
            held = status in TERMINAL and not getattr(self._local, "held", False)
            if held:
                self._local.held = True
                self.barrier.wait()
                if self._local.index != self.first:
                    assert self.first_wrote.wait(BARRIER_TIMEOUT_S)
            try:
                wrote = write(run_id, state, status=status, **options)
            finally:
                if held and self._local.index == self.first:
                    self.first_wrote.set()
            if wrote and status is not None and status in TERMINAL:
                with self._lock:
                    self.terminal_writes.append(status)
            return wrote

        add_model = store.add_model

        def add_model_held(record: Any, *, owner: str) -> str:
            if not getattr(self._local, "registering", False):
                self._local.registering = True
                self.registering.wait()
            return add_model(record, owner=owner)

        store.write_state = write_state  # type: ignore[method-assign]
        store.add_model = add_model_held  # type: ignore[method-assign]
        return store

    def run(self, *calls: Callable[[], Any]) -> list[Any]:
        results: list[Any] = [None] * len(calls)
        errors: list[BaseException] = []

        def run_one(index: int, call: Callable[[], Any]) -> None:
            self._local.index = index
            try:
                results[index] = call()
            except BaseException as exc:  # the test reports it; the others must not wait for this one
                errors.append(exc)
                self.barrier.abort()
                self.registering.abort()
                self.first_wrote.set()

        threads = [threading.Thread(target=run_one, args=(i, c)) for i, c in enumerate(calls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        return results


# --- fixtures ------------------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    return str(request.getfixturevalue("postgres_url"))


def _stores(race: Race, url: str, n: int = 2) -> list[Store]:
    return [race.hold(Store(url)) for _ in range(n)]


def _insert(store: Store, record: dict[str, Any], state: dict[str, Any]) -> str:
    run_id, created, _ = store.insert_run_unless_in_flight(record, state, OWNER)
    assert created
    return run_id


def _queued_run(store: Store) -> str:
    """A run as the service inserts it, waiting in the queue."""
    record = {
        "run_id": new_id("run"),
        "database": DATABASE,
        "schema": SCHEMA,
        "created_ts": time.time(),
        "config_fingerprint": secrets.token_hex(32),
        "dataset_id": new_id("ds"),
        "dataset_fingerprint": secrets.token_hex(32),
        "model_config_tier": "S",
        "model_name": "tiny",
        "labels": [],
        "seed": 0,
        "overrides": {},
        "trainer": {"n_gpus": 1},
        "total_steps": 10,
        "steps_per_epoch": 5,
    }
    return _insert(store, record, new_state())


def _events(store: Store, run_id: str) -> list[str]:
    return [json.loads(r.context).get("event") for r in store.log_entries(run_id, 0, 10_000)]


def _close(*stores: Store) -> None:
    for store in stores:
        store.close()


# --- the engine: two finalizers, one terminal transition ------------------------------------------------


@pytest.mark.parametrize("first", [0, 1])
def test_a_cancel_and_the_workflow_end_a_queued_run_once(
    database_url: str, client_for: Any, first: int
) -> None:
    race = Race(2, first=first)
    cancel_side, workflow_side = _stores(race, database_url)
    run_id = _queued_run(cancel_side)
    # The cancel route ends the queued run at once; the workflow, picked up at that moment, finds
    # it no longer queued and ends it as well.
    assert cancel_side.request_cancel(run_id) == "cancelled"
    route, worker = Engine(cancel_side, client_for), Engine(workflow_side, client_for, executor_id="w")
    assert worker.mark_running(run_id) is False
    results = race.run(
        lambda: route.finalize(run_id, "cancelled"), lambda: worker.finalize(run_id, "cancelled")
    )
    final = route.public(run_id)
    assert final["status"] == "cancelled" and final["finished_at"] is not None
    assert final["cancel_requested"] is True
    # One terminal write and one terminal log line; the loser answers with the winner's run.
    assert race.terminal_writes == ["cancelled"]
    assert _events(cancel_side, run_id).count("cancelled") == 1
    assert results == [final, final]
    _close(cancel_side, workflow_side)


def test_two_workers_end_a_running_run_once(database_url: str, client_for: Any) -> None:
    race = Race(2)
    one, other = _stores(race, database_url)
    run_id = _queued_run(one)
    assert Engine(one, client_for, executor_id="a").mark_running(run_id) is True
    engines = [Engine(s, client_for, executor_id=n) for s, n in ((one, "a"), (other, "b"))]
    results = race.run(
        lambda: engines[0].finalize(run_id, "failed", "the first worker's error"),
        lambda: engines[1].finalize(run_id, "failed", "the second worker's error"),
    )
    final = engines[0].public(run_id)
    assert final["status"] == "failed" and final["error"] == "the first worker's error"
    assert race.terminal_writes == ["failed"]
    events = _events(one, run_id)
    assert events.count("failed") == 1 and events.count("started") == 1
    assert results == [final, final]
    # A finalizer coming later (a workflow replaying its step) changes nothing.
    assert engines[1].finalize(run_id, "succeeded") == final
    assert _events(other, run_id) == events
    _close(one, other)


# --- a succeeded run: one registered model --------------------------------------------------------------


def _unfinished_copy(store: Store, trained: dict[str, Any]) -> str:
    """The trained run, as it stood before its finalize: running, checkpoints committed, no model."""
    record = {**trained["record"], "run_id": new_id("run"), "config_fingerprint": secrets.token_hex(32)}
    state = {**trained["state"], "finished_ts": None, "model_id": None, "live_job_id": None, "error": None}
    run_id = _insert(store, record, state)
    assert store.write_state(run_id, state, status="running")
    return run_id


def test_two_finalizers_of_a_succeeded_run_register_one_model(
    database_url: str, client_for: Any, trained: dict[str, Any]
) -> None:
    race = Race(2)
    one, other = _stores(race, database_url)
    run_id = _unfinished_copy(one, trained)
    engines = [Engine(one, client_for, executor_id="a"), Engine(other, client_for, executor_id="b")]
    results = race.run(*(lambda e=e: e.finalize(run_id, "succeeded") for e in engines))
    final = engines[0].public(run_id)
    assert final["status"] == "succeeded", final["error"]
    assert race.terminal_writes == ["succeeded"]
    events = _events(one, run_id)
    assert events.count("succeeded") == 1 and events.count("model_registered") == 1
    assert results == [final, final]
    with one.tx() as c:
        models = c.execute(sa.select(tables.models).where(tables.models.c.run_id == run_id)).all()
    assert [m.model_id for m in models] == [final["model_id"]]
    model = json.loads(models[0].record)
    # Each finalizer saved weights on a registration job of its own; both jobs are ended, and only
    # the registered weights are left on them.
    client = client_for(OWNER, DATABASE, SCHEMA)
    jobs = one.run_jobs(run_id)
    assert len(jobs) == 2 and all(job.ended_at is not None for job in jobs)
    left = {c["checkpoint_id"] for job in jobs for c in client.list_checkpoints(job.job_id)}
    assert left == {model["checkpoint_id"]}
    _close(one, other)


# --- the service: one completion webhook -----------------------------------------------------------------


def _service(state_dir: Path, url: str, client_for: Any, receiver: Any, kit: Any) -> RunsService:
    service = RunsService(
        state_dir=state_dir,
        client_for=client_for,
        authenticate=lambda request: OWNER,
        database_url=url,
        webhook_urls=[receiver.url],
        webhook_secret=kit.secret,
        execute=False,
    )
    service.start()
    return service


@pytest.mark.parametrize("first", [0, 1], ids=["cancel-wins", "workflow-wins"])
def test_a_cancelled_queued_run_sends_one_webhook(
    database_url: str, client_for: Any, webhook_receiver: Any, kit: Any, tmp_path: Path, first: int
) -> None:
    front = _service(tmp_path / "front", database_url, client_for, webhook_receiver, kit)
    worker = _service(tmp_path / "worker", database_url, client_for, webhook_receiver, kit)
    assert front.store is not None and worker.store is not None and worker.engine is not None
    worker_engine = worker.engine
    race = Race(2, first=first)
    race.hold(front.store)
    race.hold(worker.store)
    run_id = _queued_run(front.store)
    assert front.store.request_cancel(run_id) == "cancelled"
    assert worker_engine.mark_running(run_id) is False
    notifiers: list[Any] = []

    def cancel_route() -> None:
        notifiers.append(front._cancel_queued(run_id))

    def workflow() -> None:
        # The run workflow's last two steps.
        worker_engine.finalize(run_id, "cancelled")
        worker.notify_completed(run_id)

    race.run(cancel_route, workflow)
    for notifier in notifiers:
        if notifier is not None:
            notifier.join()
    try:
        assert race.terminal_writes == ["cancelled"]
        sent = [r for r in webhook_receiver.received() if json.loads(r["body"])["data"]["run_id"] == run_id]
        assert len(sent) == 1
        assert json.loads(sent[0]["body"])["data"]["status"] == "cancelled"
        assert _events(front.store, run_id).count("webhook") == 1
    finally:
        front.stop()
        worker.stop()
