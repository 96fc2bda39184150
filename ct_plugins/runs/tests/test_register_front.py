"""Registering a cancelled run's model through an HTTP front that executes nothing.

The front (``ct runs serve --front``) enqueues the run's registration workflow through DBOS's
client and waits on it there; a ``--worker`` process sharing the Postgres executes it. The answer
is the RegisteredModel, as from a service that executes its own workflows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

DATABASE, SCHEMA = "REGFRONT_DB", "PUBLIC"
TOKEN = "ctr_test-service-token"


@pytest.fixture(scope="module")
def cluster(
    module_local_server_factory: Any, postgres_url: str, tmp_path_factory: pytest.TempPathFactory, kit: Any
) -> Iterator[dict[str, Any]]:
    backend = module_local_server_factory(settings={"runs_service": False})
    folder = tmp_path_factory.mktemp("register-front")
    connection = [*kit.ct(), "--base-url", backend.base_url, "--database", DATABASE, "--schema", SCHEMA]
    serve = [*connection, "runs", "serve", "--database-url", postgres_url, "--concurrency", "1"]
    worker = kit.ServeProcess(
        "worker",
        [*serve, "--worker", "--executor-id", "worker", "--state-dir", str(folder / "worker")],
        folder,
        token=TOKEN,
    )
    front = kit.ServeProcess(
        "front",
        [*serve, "--front", "--port", "0", "--executor-id", "front", "--state-dir", str(folder / "front")],
        folder,
        token=TOKEN,
    )
    try:
        worker.wait_ready()
        info = front.wait_ready()
        yield {"base_url": info["base_url"], "backend": backend}
    finally:
        front.stop()
        worker.stop()


def test_a_front_answers_the_model_its_worker_registered(
    cluster: dict[str, Any], kit: Any, tmp_path: Path
) -> None:
    backend = cluster["backend"]
    with kit.client(cluster["base_url"], DATABASE, SCHEMA, token=TOKEN) as client:
        path = kit.write_corpus(tmp_path / "corpus.jsonl", kit.corpus_lines())
        dataset = client.datasets.build(path, label_fields=["topic"], seed=3, wait=True, timeout=600)
        assert dataset["status"] == "succeeded", dataset
        run_id = client.runs.start(kit.small_spec(dataset["dataset_id"], epochs=3, val_every_steps=4))[
            "run_id"
        ]
        # Cancelled through the front while the backend holds a step past the first checkpoint.
        run = kit.cancel_mid_run(backend, client, run_id)
        assert run["best_checkpoint_id"], run

        url = f"{cluster['base_url']}/api/v2/databases/{DATABASE}/schemas/{SCHEMA}/cortex-training"
        headers = {"Authorization": f"Bearer {TOKEN}"}
        first = httpx.post(f"{url}/runs/{run_id}:register", headers=headers, timeout=600)
        assert first.status_code == 201, first.text
        model = first.json()
        assert model["run_id"] == run_id and model["source_checkpoint_id"] == run["best_checkpoint_id"]
        again = httpx.post(f"{url}/runs/{run_id}:register", headers=headers, timeout=600)
        assert again.status_code == 200 and again.json() == model, again.text
        assert client.runs.get(run_id)["model_id"] == model["model_id"]
        events = [e.get("event") for e in client.runs.logs(run_id, structured=True, limit=10_000)["logs"]]
        assert events.count("model_registered") == 1
