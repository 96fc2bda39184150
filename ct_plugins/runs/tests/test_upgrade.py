"""Runs and dataset builds left in flight by an older version of the service, after an upgrade.

DBOS executes and recovers only the workflows of its own application version, so a run that was
queued or running under version 1 (whose workflows were module functions) would never move again
under version 2. At start-up the service carries such a run on under a workflow of its own version,
the way a resume does: queued, the run trains from its start; past a committed checkpoint, it goes
on from that checkpoint exactly (the metrics of the same run left alone, bit-identical on the CPU
local server). A dataset build is built again.

The tests leave what a version-1 service leaves behind: the run's or build's row in the service's
store and its workflow in DBOS's system database, enqueued through DBOS's own client under the
version-1 application version and workflow names, while the server is down; then they start the
server.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ct_runs.ids import new_id
from ct_runs.progress import Progress, new_state
from ct_runs.store import Store, sqlite_url, workflow_id_of
from ct_testing import wait_until

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "UPGRADE_DB", "PUBLIC"
#: Series that are functions of the config alone (tokens_per_s is a wall-clock measurement).
DETERMINISTIC = ("train_loss", "val_loss", "lr", "epoch", "val_accuracy/topic")
#: What a version-1 service recorded with its workflows (ct_runs.workflows were module functions).
OLD_VERSION = "ct-runs-1"
OLD_RUN_WORKFLOW = "ct_runs.run"
OLD_DATASET_WORKFLOW = "ct_runs.dataset"
#: How long the server would hold the step the kill lands on: longer than any wait for it.
HOLD_STEP_S = 600.0
#: The fields of a build's summary that come from its request.
NAMING = ("name", "text_field", "label_fields")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, kit: Any) -> Path:
    return Path(kit.write_corpus(tmp_path_factory.mktemp("upgrade") / "corpus.jsonl", kit.corpus_lines()))


@pytest.fixture(scope="module")
def dataset(client: CortexTrainingClient, corpus: Path) -> dict[str, Any]:
    built = client.datasets.build(corpus, label_fields=["topic"], seed=3, wait=True, timeout=600)
    assert built["status"] == "succeeded", built
    return dict(built)


@pytest.fixture(scope="module")
def spec(dataset: dict[str, Any], kit: Any) -> dict[str, Any]:
    # Early stopping after two validations without a 0.25 gain: the stop step must come out the same.
    return dict(
        kit.small_spec(dataset["dataset_id"], epochs=3, patience=2, min_delta=0.25, val_every_steps=4)
    )


@pytest.fixture(scope="module")
def reference(client: CortexTrainingClient, spec: dict[str, Any]) -> dict[str, Any]:
    """The run trained without interruption."""
    run = client.runs.wait(client.runs.start(spec)["run_id"], timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    return {"run": run, "series": client.runs.metrics(run["run_id"])["series"]}


def _service_dir(server: Any) -> Path:
    return Path(server.state_dir) / "runs-service"


def _store(server: Any) -> Store:
    return Store(sqlite_url(_service_dir(server) / "runs.sqlite3"))


def _enqueue_as_version_1(server: Any, queue: str, workflow: str, workflow_id: str, argument: str) -> None:
    """Enqueue a workflow as a version-1 service did, through DBOS's client; when a workflow of
    that id exists (the one version 2 started for the test's run), it is deleted first."""
    from dbos import DBOSClient, DBOSPortableJSONSerializer

    dbos = DBOSClient(
        system_database_url=sqlite_url(_service_dir(server) / "dbos.sqlite3"),
        serializer=DBOSPortableJSONSerializer(),
        application_name="ct-runs",
    )
    try:
        if dbos.retrieve_workflow(workflow_id).get_status() is not None:
            dbos.delete_workflow(workflow_id)
    except Exception as exc:  # no such workflow: nothing to delete
        assert "does not exist" in str(exc) or "NonExistent" in type(exc).__name__, exc
    try:
        dbos.enqueue(
            {
                "queue_name": queue,
                "workflow_name": workflow,
                "workflow_id": workflow_id,
                "app_version": OLD_VERSION,
                "application_name": "ct-runs",
            },
            argument,
        )
        status = dbos.retrieve_workflow(workflow_id).get_status()
        assert status.status == "ENQUEUED" and status.app_version == OLD_VERSION, status
    finally:
        dbos.destroy()


def _workflow_status(server: Any, workflow_id: str) -> Any:
    from dbos import DBOSClient, DBOSPortableJSONSerializer

    dbos = DBOSClient(
        system_database_url=sqlite_url(_service_dir(server) / "dbos.sqlite3"),
        serializer=DBOSPortableJSONSerializer(),
        application_name="ct-runs",
    )
    try:
        return dbos.retrieve_workflow(workflow_id).get_status()
    finally:
        dbos.destroy()


def _same_metrics(client: CortexTrainingClient, run: dict[str, Any], reference: dict[str, Any]) -> None:
    series = client.runs.metrics(run["run_id"])["series"]
    for name in DETERMINISTIC:
        assert series.get(name) == reference["series"].get(name), name
    for key in ("step", "early_stop", "best_val_loss", "best_step"):
        assert run[key] == reference["run"][key], key


def _logs(client: CortexTrainingClient, run_id: str) -> list[dict[str, Any]]:
    return list(client.runs.logs(run_id, structured=True, limit=10_000)["logs"])


def test_a_queued_run_and_a_build_left_by_version_1_finish_after_the_upgrade(
    server: Any,
    client: CortexTrainingClient,
    dataset: dict[str, Any],
    reference: dict[str, Any],
    corpus: Path,
) -> None:
    store = _store(server)
    try:
        source = store.run_row(reference["run"]["run_id"])
        owner = source.owner
        built = store.dataset_row(dataset["dataset_id"])
        options = json.loads(built.options)
    finally:
        store.close()
    server.stop()

    # What version 1 left: a queued run (the reference's config under a new id) and a dataset build
    # of the same file and options, each with its workflow enqueued under version 1.
    store = _store(server)
    try:
        record = {**json.loads(source.record), "run_id": new_id("run"), "created_ts": time.time()}
        run_id, created, _ = store.insert_run_unless_in_flight(record, new_state(), owner)
        assert created
        now = time.time()
        pending = {
            **{
                k: v
                for k, v in json.loads(built.summary).items()
                if k in ("name", "text_field", "label_fields")
            },
            "dataset_id": new_id("ds"),
            "database": DATABASE,
            "schema": SCHEMA,
            "status": "building",
            "created_ts": now,
            "val_fraction": options["val_fraction"],
            "seed": options["seed"],
            "splits": None,
            "fingerprints": None,
            "labels": [],
            "violations": [],
            "error": None,
        }
        store.add_dataset(pending, owner=owner, options=options, source=corpus.read_bytes())
    finally:
        store.close()
    _enqueue_as_version_1(server, "ct-runs", OLD_RUN_WORKFLOW, run_id, run_id)
    _enqueue_as_version_1(
        server, "ct-datasets", OLD_DATASET_WORKFLOW, pending["dataset_id"], pending["dataset_id"]
    )

    mark = server.log_mark()
    server.start()
    # The service carried both over while it started, before it said it was ready.
    upgraded = [e for e in _logs(client, run_id) if e.get("event") == "upgraded"]
    assert len(upgraded) == 1, _logs(client, run_id)
    assert upgraded[0]["from_version"] == OLD_VERSION and upgraded[0]["step"] == 0, upgraded
    assert f"{run_id}.resume-1" in upgraded[0]["message"], upgraded
    assert _workflow_status(server, run_id).status == "CANCELLED"
    said = server.log_since(mark)
    assert run_id in said and pending["dataset_id"] in said and OLD_VERSION in said, said

    rebuilt = client.datasets.wait(pending["dataset_id"], timeout=600)
    assert rebuilt["status"] == "succeeded", rebuilt
    assert rebuilt["fingerprints"] == dataset["fingerprints"]
    assert rebuilt["splits"] == dataset["splits"]

    run = client.runs.wait(run_id, timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    _same_metrics(client, run, reference)
    events = [e.get("event") for e in _logs(client, run_id)]
    assert events.index("upgraded") < events.index("started") < events.index("succeeded"), events
    assert events.count("started") == 1


@pytest.mark.timeout(900)
def test_a_running_run_left_by_version_1_goes_on_from_its_checkpoint(
    server: Any, client: CortexTrainingClient, spec: dict[str, Any], reference: dict[str, Any], kit: Any
) -> None:
    run_id = client.runs.start({**spec})["run_id"]
    assert run_id != reference["run"]["run_id"]
    # The service dies inside a segment past its first committed checkpoint: the server holds the
    # segment's next step until the kill.
    kit.hold_past_checkpoint(server, client, run_id, HOLD_STEP_S)
    server.stop(signal.SIGKILL)

    store = _store(server)
    try:
        row = store.run_row(run_id)
        progress = Progress.load(row.state)
        assert row.status == "running" and progress.segment_open, progress
        committed = progress.committed_step
        assert committed > 0 and progress.resume is not None, progress
        assert workflow_id_of(run_id, json.loads(row.state)) == run_id
        trained_before = len(progress.job_ids)
    finally:
        store.close()
    # Version 1 ran this run: its workflow is the one DBOS knows under the run's id.
    _enqueue_as_version_1(server, "ct-runs", OLD_RUN_WORKFLOW, run_id, run_id)

    server.start()
    logs = _logs(client, run_id)
    upgraded = [e for e in logs if e.get("event") == "upgraded"]
    assert len(upgraded) == 1, logs
    assert upgraded[0]["step"] == committed and upgraded[0]["checkpoint_id"], upgraded
    assert _workflow_status(server, run_id).status == "CANCELLED"

    run = client.runs.wait(run_id, timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    _same_metrics(client, run, reference)
    logs = _logs(client, run_id)
    events = [e.get("event") for e in logs]
    # It went on from the checkpoint on a new job; it never started over.
    after = logs[events.index("upgraded") :]
    resumed = next(e for e in after if e.get("event") == "resumed")
    assert resumed["step"] == committed and resumed["checkpoint_id"] == upgraded[0]["checkpoint_id"]
    assert events.count("started") == 1
    assert len(run["job_ids"]) > trained_before
    # The workflow of this version drove it to its end (it ends right after the run's webhook step).
    wait_until(
        lambda: _workflow_status(server, f"{run_id}.resume-1").status == "SUCCESS",
        timeout=300,
        interval=0.05,
        message=lambda: str(_workflow_status(server, f"{run_id}.resume-1")),
    )


#: A version-1 worker, as far as DBOS sees it: an application ``ct-runs`` of version 1 with its own
#: executor id, which starts the run's workflow (named as version 1 named it) and is then killed,
#: leaving the workflow PENDING under its executor.
OLD_WORKER = """
import sys
from dbos import DBOS, DBOSPortableJSONSerializer, SetWorkflowID

url, executor, run_id = sys.argv[1:4]
DBOS(config={
    "name": "ct-runs", "system_database_url": url, "application_version": "ct-runs-1",
    "executor_id": executor, "serializer": DBOSPortableJSONSerializer(), "log_level": "WARNING",
})

@DBOS.workflow(name="ct_runs.run")
def run(run_id: str) -> str:
    DBOS.sleep(3600)
    return "never"

DBOS.launch()
with SetWorkflowID(run_id):
    DBOS.start_workflow(run, run_id)
print("started", flush=True)
sys.stdin.read()
"""


def _queued_copy(server: Any, reference: dict[str, Any]) -> str:
    """The reference run's config under a new id, queued, as a service inserts it (no workflow)."""
    store = _store(server)
    try:
        source = store.run_row(reference["run"]["run_id"])
        record = {**json.loads(source.record), "run_id": new_id("run"), "created_ts": time.time()}
        run_id, created, _ = store.insert_run_unless_in_flight(record, new_state(), source.owner)
        assert created
        return run_id
    finally:
        store.close()


@pytest.mark.timeout(900)
def test_a_live_version_1_worker_keeps_its_run_until_it_dies_then_the_claimer_carries_it_over(
    server: Any, client: CortexTrainingClient, reference: dict[str, Any]
) -> None:
    server.stop()
    run_id = _queued_copy(server, reference)
    old = subprocess.Popen(
        [
            sys.executable,
            "-c",
            OLD_WORKER,
            sqlite_url(_service_dir(server) / "dbos.sqlite3"),
            "old-worker",
            run_id,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert old.stdout is not None and old.stdout.readline().strip() == b"started"
    finally:
        old.kill()
        old.wait(timeout=60)
    status = _workflow_status(server, run_id)
    assert (status.status, status.app_version, status.executor_id) == ("PENDING", OLD_VERSION, "old-worker")
    # The old worker was heard from just now: the starting service takes it for alive.
    store = _store(server)
    try:
        store.heartbeat("old-worker")
    finally:
        store.close()

    server.start()
    assert not [e for e in _logs(client, run_id) if e.get("event") == "upgraded"]
    assert _workflow_status(server, run_id).status == "PENDING"
    # Silent for longer than a worker may be, it is claimed, and its run carried over.
    upgraded = wait_until(
        lambda: [e for e in _logs(client, run_id) if e.get("event") == "upgraded"],
        timeout=300,
        interval=0.1,
        message=f"run {run_id} was never carried over",
    )
    assert len(upgraded) == 1 and upgraded[0]["from_version"] == OLD_VERSION, upgraded
    run = client.runs.wait(run_id, timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    _same_metrics(client, run, reference)
    assert _workflow_status(server, run_id).status == "CANCELLED"
