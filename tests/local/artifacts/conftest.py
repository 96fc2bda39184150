"""Fixtures for artifact download tests: a ct_local server whose run trees the tests write directly.

The server's own uploader is slowed to once an hour, so the only chunks in a run are the ones a
test stages; the SDK then lists and fetches them over ct_local's real `/_artifacts` routes.
"""

from __future__ import annotations

import gzip
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from ct_core import CortexTrainingClient
from ct_local.http.artifacts import run_root

DATABASE = "CT_ART_DB"
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}


@dataclass
class RunTree:
    """One job on the artifacts server and the folder its run's artifacts live in."""

    server: Any
    client: CortexTrainingClient
    job_id: str
    root: Path

    def sub(self, name: str = "training:0") -> str:
        return f"{self.job_id}:{name}"

    def put(self, folder: str, sub_job_id: str, name: str, data: bytes, *, raw: bool = False) -> Path:
        """Stage ``data`` (gzipped unless ``raw``) as ``<folder>/<sub_job_id>/<name>``."""
        target = self.root / folder / sub_job_id / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if raw else gzip.compress(data))
        return target

    def console(self, sub_job_id: str, index: int, text: str, *, folder: str = "_stdout") -> Path:
        """A console chunk whose name sorts by ``index`` (one second apart)."""
        name = f"console.20260101-{index // 3600:02d}{index // 60 % 60:02d}{index % 60:02d}.{uuid.uuid4()}.gz"
        return self.put(folder, sub_job_id, name, text.encode())


@pytest.fixture(scope="module")
def artifacts_server(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(settings={"artifact_upload_interval_s": 3600})


@pytest.fixture
def tree(artifacts_server: Any) -> Iterator[RunTree]:
    schema = "S_" + uuid.uuid4().hex[:10].upper()
    prefix = artifacts_server.prefix(database=DATABASE, schema=schema)
    job_id = (
        httpx.post(prefix, json={"sub_job_configs": [TRAINING]}, timeout=30)
        .raise_for_status()
        .json()["job_id"]
    )
    with CortexTrainingClient(base_url=artifacts_server.base_url, database=DATABASE, schema=schema) as client:
        run = client.get_experiment_run(job_id)
        root = run_root(Path(artifacts_server.state_dir), run["experiment_name"], run["experiment_run_name"])
        yield RunTree(artifacts_server, client, job_id, root)
    artifacts_server.clear_faults()
