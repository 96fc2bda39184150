"""The server's request signals: code inside `ct local serve` waits for its own requests in memory.

A service of the local server (the runs service, the Tinker API) drives jobs on that very server
through ct_core. Polling a request's status over loopback costs the interpreter the training runs
in twice (client and server side), so the server hands such a service a waiter
(`ServerState.request_signals.wait`, through the service's optional `use_request_waiter`) and its
clients read a status once the waiter says the request ended. These tests run the real app with
its training data plane under uvicorn in this process, so they can hold the waiter and call the
server over real HTTP at once.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from ct_testing import wait_until
from ct_testing.plugin import FAST_SETTINGS

from ct_core import CortexTrainingClient, SubJobConfig, wire
from ct_core.data.payloads import build_forward_backward_payload
from ct_local.app import create_app, start_services
from ct_local.dataplane.training_plane import TrainingDataPlane
from ct_local.settings import ServerSettings
from ct_local.state import ServerState

MODEL = "Qwen/Qwen3-0.6B"
LIMIT_S = 120.0


@dataclass
class InProcess:
    state: ServerState
    base_url: str


class Service:
    """A `ct_local_services` object that only keeps what the server hands it."""

    def __init__(self) -> None:
        self.waiter: Any = None
        self.started_with: str | None = None

    def routes(self) -> list[Any]:
        return []

    def use_request_waiter(self, wait: Any) -> None:
        self.waiter = wait

    def start(self, base_url: str) -> None:
        self.started_with = base_url

    def stop(self) -> None:
        pass


@pytest.fixture(scope="module")
def service() -> Service:
    return Service()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, service: Service) -> Iterator[InProcess]:
    settings = ServerSettings(state_dir=tmp_path_factory.mktemp("waiter") / "state", **FAST_SETTINGS)
    app, state = create_app(settings, data_plane_factory=TrainingDataPlane, services=[service])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    runner = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: runner.started, timeout=LIMIT_S, message="the in-process server never started")
    start_services(state, base_url)
    try:
        yield InProcess(state, base_url)
    finally:
        runner.should_exit = True
        thread.join(LIMIT_S)
        sock.close()


def _client(server: InProcess, schema: str, **options: Any) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=server.base_url, database="WAIT", schema=schema, poll_timeout=LIMIT_S, **options
    )


def _frame(text: str = "a short text") -> bytes:
    return build_forward_backward_payload({"texts": [text], "tokenizer": "byte", "max_length": 16})


@pytest.fixture(scope="module")
def training_job(server: InProcess) -> str:
    with _client(server, "TRAIN") as client:
        trainer = SubJobConfig.training_job(
            MODEL, optimizer={"name": "AdamW", "lr": 1e-3}, max_seq_len=64, train_batch_size=1, n_gpus=1
        )
        job_id = client.create_job([trainer])
        client.wait_for_job(job_id)
        return job_id


def test_a_service_gets_the_servers_waiter_before_it_starts(server: InProcess, service: Service) -> None:
    assert service.waiter == server.state.request_signals.wait
    assert service.started_with == server.base_url


def test_the_waiter_wakes_when_a_request_finishes_and_its_status_is_final(
    server: InProcess, training_job: str
) -> None:
    with _client(server, "TRAIN") as client:
        for _ in range(5):
            request_id = client.forward_backward(training_job, _frame())
            assert server.state.request_signals.wait(request_id, LIMIT_S) is True
            # The signal comes after the final status is committed: one read sees it.
            assert client.get_request_status(training_job, request_id)["status"] == "done"
    assert len(server.state.request_signals) == 0


def test_a_request_this_process_does_not_hold_in_flight_is_not_waited_on(server: InProcess) -> None:
    # Unknown here (another process's, or finished before a restart): the caller reads its status.
    assert server.state.request_signals.wait("req-never-seen", LIMIT_S) is True


def test_a_client_with_the_waiter_reads_each_result_once(
    server: InProcess, training_job: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A 1 ms poll interval: without the waiter, a fwd-bwd taking longer than that is read again
    # and again; with it, its status is read once, when it has ended.
    with (
        _client(
            server,
            "TRAIN",
            poll_interval=0.001,
            poll_max_interval=5.0,
            request_waiter=server.state.request_signals.wait,
        ) as client,
        caplog.at_level(logging.DEBUG, logger="ct_core"),
    ):
        losses = [
            client.poll_request(training_job, client.forward_backward(training_job, _frame()))
            for _ in range(4)
        ]
    assert all("loss" in str(result) for result in losses), losses
    # One line per status read, naming the state it read.
    reads = [
        r.getMessage()
        for r in caplog.records
        if "phase=poll" in r.getMessage() and " state=" in r.getMessage()
    ]
    assert len(reads) == 4 and all(" poll=1 state=done" in line for line in reads), reads


def _generate(http: httpx.Client, url: str, prompt: str) -> str:
    logical = {"prompts": [prompt], "sampling_params": {"max_tokens": 3, "temperature": 0}}
    answer = http.post(
        f"{url}/generate", content=wire.dumps(logical), headers={"content-type": "application/octet-stream"}
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["request_id"])


def _held(http: httpx.Client) -> list[str]:
    rules = http.get("/_ct/faults").json()["rules"]
    return [request_id for rule in rules for request_id in rule.get("held", [])]


@dataclass
class Held:
    """A sampling job whose first generation is parked by a hold fault and second queued behind it."""

    job_id: str
    held: str
    queued: str


@contextlib.contextmanager
def held_generation(server: InProcess, client: CortexTrainingClient) -> Iterator[Held]:
    """Yields once the first generation is parked; the hold is released when the block ends."""
    schema = client.schema
    with httpx.Client(base_url=server.base_url, timeout=30.0) as http:
        job_id = client.create_job([SubJobConfig.sampling_job(MODEL, n_gpus=1, max_seq_len=64)])
        client.wait_for_job(job_id)
        url = f"/api/v2/databases/WAIT/schemas/{schema}/cortex-training/{job_id}"
        http.post("/_ct/faults", json=[{"path": f"/{job_id}/generate$", "method": "POST", "action": "hold"}])
        try:
            held, queued = _generate(http, url, "ab"), _generate(http, url, "cd")
            wait_until(lambda: held in _held(http), timeout=LIMIT_S, message="the generation never held")
            yield Held(job_id, held, queued)
        finally:
            http.delete("/_ct/faults")


def test_a_running_request_times_the_waiter_out_and_its_end_wakes_it(server: InProcess) -> None:
    signals = server.state.request_signals
    with _client(server, "GEN") as client:
        with held_generation(server, client) as parked:
            started = time.monotonic()
            assert signals.wait(parked.held, 0.2) is False
            assert time.monotonic() - started >= 0.2
            assert signals.wait(parked.queued, 0.05) is False
        assert signals.wait(parked.held, LIMIT_S) is True and signals.wait(parked.queued, LIMIT_S) is True
        for request_id in (parked.held, parked.queued):
            assert client.get_request_status(parked.job_id, request_id)["status"] == "done"


def test_cancelling_a_job_releases_the_waiters_of_its_requests(server: InProcess) -> None:
    signals = server.state.request_signals
    woken: list[bool] = []
    with _client(server, "CANCEL") as client:
        with held_generation(server, client) as parked:
            waiting = threading.Thread(target=lambda: woken.append(signals.wait(parked.queued, LIMIT_S)))
            waiting.start()
            client.cancel_job(parked.job_id)
            waiting.join(LIMIT_S)
            assert woken == [True]
            assert client.get_request_status(parked.job_id, parked.queued)["status"] == "cancelled"
        assert signals.wait(parked.held, LIMIT_S) is True


def test_the_signals_forget_what_they_released(tmp_path: Path) -> None:
    from ct_local.storage.requests import DataPlaneStore, RequestSignals
    from ct_local.storage.store import Store

    signals = RequestSignals()
    store = DataPlaneStore(Store(tmp_path / "state"), signals)
    store.add_request("req-a", "job-1", "sub-1", "forward_backward")
    store.add_request("req-b", "job-1", "sub-1", "forward_backward")
    store.add_request("req-c", "job-2", "sub-2", "forward_backward")
    assert len(signals) == 3 and signals.wait("req-a", 0.01) is False
    assert store.start_request("req-a") and store.finish_request("req-a", "done", result_json="{}")
    assert signals.wait("req-a", 0.01) is True and len(signals) == 2
    # A second finish of the same request changes nothing and signals nothing.
    assert not store.finish_request("req-a", "failed", error="late")
    assert store.cancel_pending(job_id="job-1", error="cancelled") == 1
    assert signals.wait("req-b", 0.01) is True and len(signals) == 1
    assert store.fail_unfinished("req-c", "lost")
    assert len(signals) == 0
