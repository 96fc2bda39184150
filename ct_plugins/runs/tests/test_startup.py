"""A runs service on its way up inside ``ct local serve``: its routes answer 503 with Retry-After
(never a 500), and the SDK waits through that, a dataset upload included.

The server answers ``/healthz`` as soon as it listens, and starts its embedded services after
that. The test holds the service's start deterministically: the store takes a lock file next to
its database while it creates its tables (ct_runs.store.create_tables), so a test that holds that
lock keeps the service starting for as long as it likes, and lets it go when it has seen what it
came for.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from ct_core import CortexTrainingClient
from ct_core.fs import exclusive_lock

DATABASE, SCHEMA = "START_DB", "PUBLIC"
#: Bounds a hang only: how long a step of the test may wait for the server.
DEADLINE_S = 300.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Starting:
    """A local server whose runs service is held while starting; `release()` lets it go."""

    def __init__(self, factory: Any, settings: dict[str, Any]) -> None:
        self.server = factory(settings=settings, start=False)
        service_dir = Path(self.server.state_dir) / "runs-service"
        service_dir.mkdir(parents=True, mode=0o700)
        self._held = exclusive_lock(service_dir / "runs.sqlite3.init-lock")
        self._held.__enter__()
        # The ready file comes only once the services have started: a fixed port lets the test
        # reach the server before that, as a user of `ct local serve` does.
        self.server.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.server.port}"
        self.started = threading.Event()
        self.start_error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            self.server.start()
        except BaseException as exc:
            self.start_error = exc
        finally:
            self.started.set()

    def wait_listening(self) -> None:
        with httpx.Client(timeout=5.0) as http:
            while not self.started.wait(0.05):
                try:
                    if http.get(f"{self.base_url}/healthz").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
        raise AssertionError(f"the server ended its start before it answered: {self.start_error}")

    def release(self) -> None:
        if self._held is not None:
            self._held.__exit__(None, None, None)
            self._held = None

    def wait_started(self) -> None:
        assert self.started.wait(DEADLINE_S), "the server never finished starting"
        assert self.start_error is None, self.start_error


@pytest.fixture
def starting(local_server_factory: Any, kit: Any) -> Any:
    held = Starting(local_server_factory, kit.settings)
    try:
        yield held
    finally:
        held.release()
        held.started.wait(DEADLINE_S)


def test_a_starting_service_answers_503_with_retry_after_never_500(starting: Starting) -> None:
    starting.wait_listening()
    prefix = f"{starting.base_url}/api/v2/databases/{DATABASE}/schemas/{SCHEMA}/cortex-training"
    with httpx.Client(timeout=30.0) as http:
        answers = [
            http.post(f"{prefix}/datasets", content=b'{"text": "a b c"}\n'),
            http.get(f"{prefix}/runs"),
            http.post(f"{prefix}/runs", json={"dataset_id": "ds_01m8rng1v17g51gxtxd8tpankf"}),
        ]
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert float(answer.headers["retry-after"]) > 0
        body = answer.json()
        assert body["code"] == "unavailable", body
        assert "starting" in body["message"], body
    starting.release()
    starting.wait_started()


def test_the_sdk_waits_for_a_starting_service_then_builds(starting: Starting, kit: Any) -> None:
    starting.wait_listening()
    waits: list[float] = []
    retried = threading.Event()

    def sleep(seconds: float) -> None:
        # The client's own sleep: told each wait the retry loop chose, and the first retry lets
        # the service finish starting.
        waits.append(seconds)
        retried.set()
        starting.release()
        time.sleep(seconds)

    with CortexTrainingClient(
        base_url=starting.base_url, database=DATABASE, schema=SCHEMA, sleep=sleep, poll_interval=0.05
    ) as client:
        lines = kit.corpus_lines(rows=20)
        data = "".join(f'{{"text": "{line["text"]}"}}\n' for line in lines).encode()
        dataset = client.datasets.build(data, wait=True, timeout=DEADLINE_S)
        assert dataset["status"] == "succeeded", dataset
        runs = client.runs.list()
    assert retried.is_set()
    # The wait the service asked for (Retry-After), not the client's own backoff.
    assert waits[0] == pytest.approx(1.0)
    assert runs == []
    starting.wait_started()


def test_healthz_says_the_runs_service_is_starting_then_up(starting: Starting) -> None:
    starting.wait_listening()
    with httpx.Client(timeout=30.0) as http:
        held = http.get(f"{starting.base_url}/healthz")
        assert held.status_code == 200, held.text
        body = held.json()
        # The server's own fields stay; the embedded service says where it is.
        assert body["status"] == "ok" and "device" in body, body
        assert body["services"] == {"runs": "starting"}, body
        starting.release()
        starting.wait_started()
        up = http.get(f"{starting.base_url}/healthz").json()
    assert up["services"] == {"runs": "up"}, up


def test_healthz_says_why_the_runs_service_did_not_start(local_server_factory: Any, kit: Any) -> None:
    server = local_server_factory(settings=kit.settings, start=False)
    service_dir = Path(server.state_dir) / "runs-service"
    service_dir.mkdir(parents=True, mode=0o700)
    # A folder where the service's database file goes: its store cannot open it.
    (service_dir / "runs.sqlite3").mkdir()
    server.start()
    with httpx.Client(timeout=30.0) as http:
        body = http.get(f"{server.base_url}/healthz").json()
    assert body["status"] == "ok", body
    assert body["services"]["runs"].startswith("failed: "), body
