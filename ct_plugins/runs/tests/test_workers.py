"""Several `ct runs serve` processes sharing a real Postgres.

A front serves the REST routes and executes nothing; two `--worker` processes run the workflows.
The queue's global concurrency (1) holds across them; killing the worker that trains a run hands
the run to the other, which resumes it exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_testing import wait_until

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "WORKERS_DB", "PUBLIC"
TOKEN = "ctr_test-service-token"
DETERMINISTIC = ("train_loss", "val_loss", "lr", "epoch")


@pytest.fixture(scope="module")
def cluster(
    module_local_server_factory: Any, postgres_url: str, tmp_path_factory: pytest.TempPathFactory, kit: Any
) -> Iterator[dict[str, Any]]:
    # The Cortex Training side: a local server without an embedded runs service.
    backend = module_local_server_factory(settings={"runs_service": False})
    folder = tmp_path_factory.mktemp("runs-cluster")
    connection = [*kit.ct(), "--base-url", backend.base_url, "--database", DATABASE, "--schema", SCHEMA]
    serve = [*connection, "runs", "serve", "--database-url", postgres_url, "--concurrency", "1"]
    workers = {
        name: kit.ServeProcess(
            name,
            [*serve, "--worker", "--executor-id", name, "--state-dir", str(folder / name)],
            folder,
            token=TOKEN,
        )
        for name in ("worker-1", "worker-2")
    }
    front = kit.ServeProcess(
        "front",
        [*serve, "--front", "--port", "0", "--executor-id", "front", "--state-dir", str(folder / "front")],
        folder,
        token=TOKEN,
    )
    processes = [front, *workers.values()]
    try:
        for process in processes:
            process.wait_ready()
        info = json.loads(front.ready.read_text())
        yield {"base_url": info["base_url"], "workers": workers, "front": front}
    finally:
        for process in processes:
            process.stop()


def _client(cluster: dict[str, Any]) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=cluster["base_url"],
        database=DATABASE,
        schema=SCHEMA,
        token=TOKEN,
        poll_interval=0.05,
        poll_max_interval=0.5,
    )


def _workers_of(client: CortexTrainingClient, run_id: str) -> list[tuple[str, str]]:
    logs = client.runs.logs(run_id, structured=True, limit=10_000)["logs"]
    return [
        (e["event"], e["worker"])
        for e in logs
        if e.get("event") in ("started", "resumed", "recovered", "job_started")
    ]


def _wait_for(
    client: CortexTrainingClient, run_id: str, ready: Any, timeout: float = 240, poll_s: float = 0.05
) -> dict[str, Any]:
    def ready_run() -> dict[str, Any] | None:
        run = client.runs.get(run_id)
        if ready(run):
            return run
        assert run["status"] in ("queued", "running"), run
        return None

    return wait_until(ready_run, timeout=timeout, interval=poll_s, message=f"run {run_id} never got ready")


def test_the_front_needs_the_service_token(cluster: dict[str, Any]) -> None:
    from ct_core.errors import AuthenticationError

    with (
        CortexTrainingClient(
            base_url=cluster["base_url"], database=DATABASE, schema=SCHEMA, token="wrong"
        ) as c,
        pytest.raises(AuthenticationError),
    ):
        c.runs.list()


# Three runs and a takeover that waits out a dead worker's silence: minutes on a loaded machine.
@pytest.mark.timeout(600)
def test_two_workers_share_the_queue_and_take_over_a_dead_one(
    cluster: dict[str, Any], kit: Any, tmp_path: Path
) -> None:
    with _client(cluster) as client:
        path = kit.write_corpus(tmp_path / "corpus.jsonl", kit.corpus_lines())
        dataset = client.datasets.build(path, seed=4, wait=True, timeout=600)
        assert dataset["status"] == "succeeded", dataset
        spec = kit.small_spec(dataset["dataset_id"], epochs=6)
        reference = client.runs.wait(client.runs.start(spec)["run_id"], timeout=900)
        assert reference["status"] == "succeeded", reference.get("error")

        # The same config again, and a second (shorter) run behind it in the queue.
        victim = client.runs.start(spec)
        other = client.runs.start({**kit.small_spec(dataset["dataset_id"], epochs=1), "seed": 9})
        # The worker that marks the run running logs "started" in the same transaction.
        _wait_for(client, victim["run_id"], lambda r: r["status"] == "running")
        [(_, holder)] = [w for w in _workers_of(client, victim["run_id"]) if w[0] == "started"]
        survivor = next(name for name in cluster["workers"] if name != holder)
        # Killed as soon as a checkpoint is committed (the step a run shows is its last
        # commit): the rest of the run is left for the survivor, which carries on from that
        # checkpoint.
        _wait_for(client, victim["run_id"], lambda r: r["step"] >= 3, poll_s=0.01)
        cluster["workers"][holder].kill()
        killed_at = client.runs.get(victim["run_id"])
        assert killed_at["status"] == "running" and killed_at["step"] < killed_at["total_steps"], killed_at
        # One run at a time across both workers: the second waits, now behind a dead worker's run.
        assert client.runs.get(other["run_id"])["status"] == "queued"

        finished = client.runs.wait(victim["run_id"], timeout=900)
        assert finished["status"] == "succeeded", finished.get("error")
        series = client.runs.metrics(finished["run_id"])["series"]
        expected = client.runs.metrics(reference["run_id"])["series"]
        for name in DETERMINISTIC:
            assert series[name] == expected[name], name
        # The survivor says it took the run over: resumed from the checkpoint on a new job when
        # the kill came inside a segment, or recovered (carrying on with the live job) when it
        # came between two, which is where a kill just after a visible commit often lands.
        took_over = {event for event, worker in _workers_of(client, victim["run_id"]) if worker == survivor}
        assert took_over & {"resumed", "recovered"}, _workers_of(client, victim["run_id"])

        second = client.runs.wait(other["run_id"], timeout=900)
        assert second["status"] == "succeeded", second.get("error")
        # The global concurrency held: the second run started after the first had ended.
        assert second["started_at"] >= finished["finished_at"]
        ran_on = {w for _, w in _workers_of(client, other["run_id"])}
        assert ran_on == {survivor}


def test_a_standalone_service_on_sqlite(module_local_server_factory: Any, kit: Any, tmp_path: Path) -> None:
    """`ct runs serve` alone, with its default SQLite under the state dir, in front of a server."""
    backend = module_local_server_factory(settings={"runs_service": False})
    connection = [*kit.ct(), "--base-url", backend.base_url, "--database", DATABASE, "--schema", SCHEMA]
    state = tmp_path / "service"
    service = kit.ServeProcess(
        "alone",
        [*connection, "runs", "serve", "--port", "0", "--state-dir", str(state)],
        tmp_path,
        token=TOKEN,
    )
    try:
        info = service.wait_ready()
        assert (state / "runs.sqlite3").is_file() and (state / "dbos.sqlite3").is_file()
        with CortexTrainingClient(
            base_url=info["base_url"], database=DATABASE, schema=SCHEMA, token=TOKEN, poll_interval=0.05
        ) as client:
            path = kit.write_corpus(tmp_path / "corpus.jsonl", kit.corpus_lines(40))
            dataset = client.datasets.build(path, wait=True, timeout=600)
            run = client.runs.start(kit.small_spec(dataset["dataset_id"], epochs=1), wait=True, timeout=600)
            assert run["status"] == "succeeded", run.get("error")
            # The jobs were created on the Cortex Training side, in the connection's schema.
            with CortexTrainingClient(base_url=backend.base_url, database=DATABASE, schema=SCHEMA) as side:
                assert set(run["job_ids"]) <= {job["job_id"] for job in side.list_jobs()}
    finally:
        service.stop()
