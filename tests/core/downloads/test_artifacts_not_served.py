"""Logs and metrics through a server that does not serve experiment-run artifacts fail at once.

A `--base-url` client reads a job's saved console, metrics and execution logs from the artifact
routes `ct local serve` has beside its REST API. Any other server (a gateway in front of the real
service, another implementation of the REST contract) answers those routes 404: that is final, and
the error says what is needed instead, after one request and no wait.

The server here relays the REST API to a real local server and answers every artifact route 404
with an HTML page, as a gateway does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import run_ct

from ct_core import CortexTrainingClient
from ct_core.errors import ArtifactError

DB = "CT_NO_ARTIFACTS"
SCHEMA = "PUBLIC"
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}


@pytest.fixture
def gateway(local_server: Any, relay: Any, act: Any) -> Any:
    """A server with the REST API of the local server and none of its artifact routes."""
    server = relay(local_server.base_url)
    forward = server.responder

    def respond(seen: Any) -> Any:
        if seen.path.startswith("/_artifacts/"):
            return act(404, b"<html><body>Not Found</body></html>", headers={"Content-Type": "text/html"})
        return forward(seen)

    server.responder = respond
    return server


@pytest.fixture
def client(gateway: Any, no_sleep: Any) -> Iterator[CortexTrainingClient]:
    with CortexTrainingClient(base_url=gateway.base_url, database=DB, schema=SCHEMA, sleep=no_sleep) as made:
        yield made


DOWNLOADS: dict[str, Callable[[CortexTrainingClient, str, Path], Any]] = {
    "stdout": lambda c, job, out: c.download_stdout_logs(job, out),
    "metrics": lambda c, job, out: c.download_metrics(job, out),
    "training metrics": lambda c, job, out: c.download_training_metrics(job, out),
    "execution logs": lambda c, job, out: c.download_execution_logs(job, out),
}


@pytest.mark.parametrize("kind", list(DOWNLOADS))
def test_a_download_from_a_server_without_artifact_routes_fails_at_once(
    client: CortexTrainingClient, gateway: Any, no_sleep: Any, tmp_path: Path, kind: str
) -> None:
    job_id = str(client.create_job_from_body({"sub_job_configs": [TRAINING]})["job_id"])
    with pytest.raises(ArtifactError) as caught:
        DOWNLOADS[kind](client, job_id, tmp_path)
    message = str(caught.value)
    assert gateway.base_url in message and "does not serve" in message
    assert "ct local serve" in message and "Snowflake" in message
    # One listing per root the download reads (two at most), each refused once: no retry, no wait.
    listings = [seen.path for seen in gateway.requests if seen.path.startswith("/_artifacts/")]
    assert 1 <= len(listings) <= 2 and len(set(listings)) == len(listings), listings
    assert no_sleep.calls == []
    assert list(tmp_path.iterdir()) == []


def test_the_cli_says_what_a_download_needs(gateway: Any, ct_home: Path, tmp_path: Path) -> None:
    args = ["--base-url", gateway.base_url, "--database", DB, "--schema", SCHEMA]
    created = run_ct(*args, "submit", "-", input=json.dumps({"sub_job_configs": [TRAINING]}))
    assert created.returncode == 0, created
    job_id = created.json["job_id"]
    result = run_ct(
        *args, "download-log", job_id, "--log-type", "stdout", "--output-dir", str(tmp_path), timeout=60
    )
    assert result.returncode == 1, result
    assert "does not serve" in result.stderr and "ct local serve" in result.stderr, result
    assert "Snowflake" in result.stderr, result
