"""The engine's typed progress, and how DBOS reaches the service: a configured instance it records
with every workflow, so a recovered workflow finds the service without a module global."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ct_runs import schedule
from ct_runs.progress import Progress, new_state

from ct_core import CortexTrainingClient


def test_a_new_run_state_is_the_default_progress() -> None:
    state = new_state()
    progress = Progress.load(json.dumps(state))
    assert progress == Progress()
    assert progress.early_stop == schedule.EarlyStop().to_dict()
    assert progress.to_dict() == state


def test_a_state_stored_before_the_newer_fields_reads_with_their_defaults() -> None:
    stored = {
        "step": 12,
        "epoch": 1.5,
        "committed_step": 10,
        "resume": {"checkpoint_id": "cp_1", "job_id": "job_1", "step": 10},
        "checkpoints": [{"checkpoint_id": "cp_1", "step": 10, "val_loss": 2.5}],
        "finished_ts": 1700000000.0,
    }
    progress = Progress.load(json.dumps(stored))
    assert progress.step == 12 and progress.committed_step == 10
    assert progress.resume == stored["resume"] and progress.checkpoints == stored["checkpoints"]
    assert progress.workflow_id is None and progress.resumes == 0 and progress.lowest_val is None
    # Written back, it holds every field.
    assert set(progress.to_dict()) >= {*stored, "workflow_id", "resumes", "lowest_val", "finalized_by"}


def test_a_run_workflow_is_recorded_with_the_service_instance(
    local_server_factory: Any, kit: Any, tmp_path: Path
) -> None:
    server = local_server_factory(settings=kit.settings)
    corpus = kit.write_corpus(tmp_path / "corpus.jsonl", kit.corpus_lines(rows=40))
    with CortexTrainingClient(base_url=server.base_url, database="PARTS_DB", schema="PUBLIC") as client:
        dataset = client.datasets.build(corpus, seed=3, wait=True, timeout=600)
        assert dataset["status"] == "succeeded", dataset
        spec = kit.small_spec(dataset["dataset_id"], epochs=1)
        run = client.runs.start(spec, wait=True, timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    database = Path(server.state_dir) / "runs-service" / "dbos.sqlite3"
    with sqlite3.connect(database) as conn:
        rows = conn.execute(
            "SELECT workflow_uuid, name, class_name, config_name FROM workflow_status"
        ).fetchall()
    recorded = {row[0]: row[1:] for row in rows}
    assert recorded[run["run_id"]] == ("ct_runs.run", "ct_runs.RunsWorkflows", "runs-service"), recorded
    assert recorded[dataset["dataset_id"]] == ("ct_runs.dataset", "ct_runs.RunsWorkflows", "runs-service")
