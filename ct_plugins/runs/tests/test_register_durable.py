"""Registering a cancelled run's model is a DBOS workflow the request waits on.

The answer is the RegisteredModel (``201`` registered now, ``200`` registered before), as the
contract says; the export and the record are steps of a workflow (``run_….register-N``), so a
service killed in the middle of the export finishes the registration by itself when it starts
again, exactly once: one model, one ``model_registered`` line, every job of the run ended.
"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from ct_runs.store import Store, sqlite_url
from ct_testing import wait_until

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "REGISTER_DB", "PUBLIC"
#: How long the server would hold the export the kill lands on: longer than any wait for it.
HOLD_SAVE_S = 600.0


@pytest.fixture(scope="module")
def spec(client: CortexTrainingClient, tmp_path_factory: pytest.TempPathFactory, kit: Any) -> dict[str, Any]:
    corpus = kit.write_corpus(tmp_path_factory.mktemp("register") / "corpus.jsonl", kit.corpus_lines())
    dataset = client.datasets.build(corpus, label_fields=["topic"], seed=3, wait=True, timeout=600)
    assert dataset["status"] == "succeeded", dataset
    # Validation every 4 steps, before the first checkpoint: a cancelled run has a best checkpoint.
    return dict(kit.small_spec(dataset["dataset_id"], epochs=3, val_every_steps=4))


def _cancelled_run(
    server: Any, client: CortexTrainingClient, spec: dict[str, Any], kit: Any
) -> dict[str, Any]:
    """A run cancelled inside a segment past its first checkpoint, with a best checkpoint."""
    run = kit.cancel_mid_run(server, client, client.runs.start(spec)["run_id"])
    assert run["best_checkpoint_id"], run
    return dict(run)


def _register_url(server: Any, run_id: str) -> str:
    return f"{server.prefix(DATABASE, SCHEMA)}/runs/{run_id}:register"


def _workflow_status(server: Any, workflow_id: str) -> Any:
    from dbos import DBOSClient, DBOSPortableJSONSerializer

    dbos = DBOSClient(
        system_database_url=sqlite_url(Path(server.state_dir) / "runs-service" / "dbos.sqlite3"),
        serializer=DBOSPortableJSONSerializer(),
        application_name="ct-runs",
    )
    try:
        found = dbos.list_workflows(workflow_ids=[workflow_id], load_input=False, load_output=False)
        return found[0] if found else None
    finally:
        dbos.destroy()


def _events(client: CortexTrainingClient, run_id: str) -> list[str]:
    return [e.get("event") for e in client.runs.logs(run_id, structured=True, limit=10_000)["logs"]]


def test_the_answer_is_the_model_registered_by_a_workflow(
    server: Any, client: CortexTrainingClient, spec: dict[str, Any], kit: Any
) -> None:
    run = _cancelled_run(server, client, {**spec, "seed": 1}, kit)
    run_id = run["run_id"]
    first = httpx.post(_register_url(server, run_id), timeout=600)
    assert first.status_code == 201, first.text
    model = first.json()
    assert model["run_id"] == run_id and model["run_status"] == "cancelled"
    assert model["source_checkpoint_id"] == run["best_checkpoint_id"] and model["model_id"].startswith("mdl_")
    # It was the work of the run's registration workflow, which ended.
    assert _workflow_status(server, f"{run_id}.register-1").status == "SUCCESS"

    again = httpx.post(_register_url(server, run_id), timeout=600)
    assert again.status_code == 200, again.text
    assert again.json() == model
    assert client.runs.get(run_id)["model_id"] == model["model_id"]
    assert _events(client, run_id).count("model_registered") == 1
    # Asking again started no second workflow.
    assert _workflow_status(server, f"{run_id}.register-2") is None


@pytest.mark.timeout(900)
def test_a_service_killed_while_registering_finishes_the_registration_once(
    server: Any, client: CortexTrainingClient, spec: dict[str, Any], kit: Any
) -> None:
    run = _cancelled_run(server, client, {**spec, "seed": 2}, kit)
    run_id = run["run_id"]
    # The server holds the weights-only export; the service is killed while it waits on it.
    server.set_faults({"path": "/save$", "method": "POST", "action": "delay", "delay_s": HOLD_SAVE_S})
    answers: list[Any] = []

    def register() -> None:
        try:
            answers.append(httpx.post(_register_url(server, run_id), timeout=HOLD_SAVE_S))
        except httpx.TransportError as exc:
            answers.append(exc)

    caller = threading.Thread(target=register, daemon=True)
    caller.start()
    wait_until(
        lambda: kit.fault_hit(server),
        timeout=300,
        interval=0.01,
        message="the registration never reached the export",
    )
    server.stop(signal.SIGKILL)
    caller.join(timeout=60)
    assert len(answers) == 1 and isinstance(answers[0], httpx.TransportError), answers

    # Nobody asks again: the restarted service recovers the registration workflow and finishes it.
    server.start()
    model_id = wait_until(
        lambda: client.runs.get(run_id)["model_id"],
        timeout=300,
        interval=0.05,
        message=f"the registration of run {run_id} was never finished",
    )
    # The workflow ends right after its record step wrote the model id.
    wait_until(
        lambda: _workflow_status(server, f"{run_id}.register-1").status == "SUCCESS",
        timeout=300,
        interval=0.05,
        message=lambda: str(_workflow_status(server, f"{run_id}.register-1")),
    )

    answer = httpx.post(_register_url(server, run_id), timeout=600)
    assert answer.status_code == 200, answer.text
    model = answer.json()
    assert model["model_id"] == model_id and model["source_checkpoint_id"] == run["best_checkpoint_id"]
    assert [m["model_id"] for m in client.runs.models(run_id=run_id)] == [model_id]
    assert _events(client, run_id).count("model_registered") == 1
    # The export's weights live on a job the run names; every job of the run has ended, the one
    # the killed attempt created included.
    final = client.runs.get(run_id)
    assert final["status"] == "cancelled" and model["job_id"] in final["job_ids"]
    store = Store(sqlite_url(Path(server.state_dir) / "runs-service" / "runs.sqlite3"))
    try:
        jobs = store.run_jobs(run_id)
        assert all(job.ended_at is not None for job in jobs), [tuple(job) for job in jobs]
        state = json.loads(store.run_row(run_id).state)
        assert state["live_job_id"] is None and state["model_id"] == model_id
    finally:
        store.close()
