"""The way in without a socket: services inside `ct local serve` call the server through its app.

`ct_local.runtime` builds an `InProcessRoad` on the server's event loop once it listens and hands
it to each service with the optional `use_in_process_road`; a ct_core client made with
`road=...` sends through it while it is usable. These tests serve the real app (training data
plane, middleware, token checks) with the runtime's own uvicorn server in a thread of this process,
and compare what a road client gets with what a socket client gets, uvicorn's request count
telling which way each request went.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from ct_testing import wait_until
from ct_testing.plugin import FAST_SETTINGS
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from ct_core import CortexTrainingClient, SubJobConfig
from ct_core.data.payloads import build_forward_backward_payload
from ct_core.errors import AuthenticationError, CTConnectionError, CTTimeoutError, NotFoundError
from ct_local.app import create_app
from ct_local.dataplane.training_plane import TrainingDataPlane
from ct_local.http.inprocess import InProcessRoad
from ct_local.runtime import _Server
from ct_local.settings import ServerSettings
from ct_local.state import ServerState

MODEL = "Qwen/Qwen3-0.6B"
LIMIT_S = 120.0
TOKEN = "road-token-0123456789"


class Service:
    """A `ct_local_services` object keeping what the server hands it, with one streaming route
    that sends blocks until its caller goes away."""

    def __init__(self) -> None:
        self.road: InProcessRoad | None = None
        self.started = threading.Event()
        self.disconnected = threading.Event()

    def routes(self) -> list[Any]:
        async def ticks(request: Request) -> StreamingResponse:
            async def blocks() -> AsyncIterator[bytes]:
                try:
                    for number in range(10_000):
                        yield f"tick {number}\n".encode()
                        await asyncio.sleep(0.01)
                finally:
                    self.disconnected.set()

            return StreamingResponse(blocks(), media_type="text/plain")

        async def slow(request: Request) -> StreamingResponse:
            await asyncio.sleep(2.0)
            return StreamingResponse(iter([b"late"]))

        async def echo(request: Request) -> JSONResponse:
            client = request.client.host if request.client else None
            return JSONResponse(
                {"host": request.headers.get("host"), "url": str(request.url), "client": client}
            )

        async def boom(request: Request) -> JSONResponse:
            raise RuntimeError("a bug in a handler")

        return [
            Route("/_test/ticks", ticks),
            Route("/_test/slow", slow),
            Route("/_test/echo", echo),
            Route("/_test/boom", boom),
        ]

    def use_in_process_road(self, road: InProcessRoad) -> None:
        self.road = road

    def start(self, base_url: str) -> None:
        self.started.set()

    def stop(self) -> None:
        pass


@dataclass
class Served:
    runner: uvicorn.Server
    base_url: str
    road: InProcessRoad
    state: ServerState

    def client(self, *, road: bool, token: str | None = TOKEN, **options: Any) -> CortexTrainingClient:
        return CortexTrainingClient(
            base_url=self.base_url,
            database="ROAD",
            schema="PUBLIC",
            token=token,
            poll_timeout=LIMIT_S,
            road=self.road if road else None,
            **options,
        )

    @property
    def socket_requests(self) -> int:
        return int(self.runner.server_state.total_requests)


@pytest.fixture(scope="module")
def service() -> Service:
    return Service()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, service: Service) -> Iterator[Served]:
    settings = ServerSettings(
        state_dir=tmp_path_factory.mktemp("road") / "state",
        tokens={TOKEN: "ENGINEER"},
        **FAST_SETTINGS,
    )
    app, state = create_app(settings, data_plane_factory=TrainingDataPlane, services=[service])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    runner = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"), None, base_url, state, app)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    assert service.started.wait(LIMIT_S), "the in-process server never started its services"
    assert service.road is not None
    try:
        yield Served(runner, base_url, service.road, state)
    finally:
        runner.should_exit = True
        thread.join(LIMIT_S)
        sock.close()


def test_the_runtime_hands_services_a_road_that_is_usable_off_the_event_loop(served: Served) -> None:
    assert served.road.usable()

    async def on_the_loop() -> bool:
        return served.road.usable()

    # The loop's own thread would wait on itself: the road refuses it and the client takes its socket.
    assert asyncio.run_coroutine_threadsafe(on_the_loop(), served.road.loop).result(LIMIT_S) is False


def test_a_road_client_gets_the_answers_a_socket_client_gets_without_a_socket(served: Served) -> None:
    with served.client(road=False) as plain, served.client(road=True) as inside:
        trainer = SubJobConfig.training_job(
            MODEL, optimizer={"name": "AdamW", "lr": 1e-3}, max_seq_len=64, train_batch_size=1, n_gpus=1
        )
        before_socket, before_road = served.socket_requests, served.road.requests
        job_id = inside.create_job([trainer])
        inside.wait_for_job(job_id)
        frame = build_forward_backward_payload(
            {"texts": ["a short text"], "tokenizer": "byte", "max_length": 16}
        )
        result = inside.poll_request(job_id, inside.forward_backward(job_id, frame))
        assert served.socket_requests == before_socket, "a road client's request went over the socket"
        assert served.road.requests - before_road >= 4  # create, status, submit, result
        assert plain.get_job(job_id) == inside.get_job(job_id)
        assert plain.list_jobs() == inside.list_jobs()
        assert "loss" in str(result)
        assert served.socket_requests > before_socket  # the plain client's went over the socket


def test_the_road_keeps_the_servers_token_checks_and_error_answers(served: Served) -> None:
    with served.client(road=True, token="not-a-token") as stranger, served.client(road=True) as inside:
        with pytest.raises(AuthenticationError):
            stranger.list_jobs()
        with pytest.raises(NotFoundError) as missing:
            inside.get_job("no-such-job")
    with served.client(road=False) as plain, pytest.raises(NotFoundError) as over_socket:
        plain.get_job("no-such-job")
    same = ("status_code", "code", "server_message")
    assert [getattr(missing.value, a) for a in same] == [getattr(over_socket.value, a) for a in same]
    assert missing.value.request_id  # the server's request-id header came through too


def test_a_stream_gets_blocks_as_sent_and_leaving_early_disconnects_the_app(
    served: Served, service: Service
) -> None:
    with served.client(road=True) as inside, inside.stream("listJobs") as answer:
        assert b"".join(answer.iter_bytes()).startswith(b"{")
    target = "/_test/ticks"
    with served.road.stream("GET", target, [(b"host", b"local")], None, {"read": LIMIT_S}) as (
        status,
        headers,
        blocks,
    ):
        assert status == 200
        assert (b"content-type", b"text/plain; charset=utf-8") in headers
        first = [next(blocks) for _ in range(3)]
    assert first == [b"tick 0\n", b"tick 1\n", b"tick 2\n"]
    assert service.disconnected.wait(LIMIT_S), "the app never heard that its caller went away"


def test_no_answer_in_the_read_timeout_raises_a_timeout(served: Served) -> None:
    with pytest.raises(CTTimeoutError, match="ReadTimeout"):
        served.road.send("GET", "/_test/slow", [], None, {"read": 0.2})


def test_an_app_that_hangs_up_is_a_dropped_connection(served: Served) -> None:
    faults = served.state.faults
    faults.add([{"path": "/jobs$", "method": "GET", "action": "drop", "count": 1}])
    try:
        with pytest.raises(CTConnectionError, match="broke off its answer"):
            served.road.send("GET", "/api/v2/databases/ROAD/schemas/PUBLIC/jobs", [], None, {"read": LIMIT_S})
    finally:
        faults.clear()


def test_once_the_server_stopped_the_road_is_not_used(served: Served) -> None:
    async def another_road() -> InProcessRoad:
        return InProcessRoad.on_this_loop(served.runner.config.app, ("127.0.0.1", 0))

    road = asyncio.run_coroutine_threadsafe(another_road(), served.road.loop).result(LIMIT_S)
    road.close()
    assert not road.usable()
    with served.client(road=False) as plain:
        before = served.socket_requests
        client = CortexTrainingClient(
            base_url=served.base_url, database="ROAD", schema="PUBLIC", token=TOKEN, road=road
        )
        with client:
            assert client.list_jobs() == plain.list_jobs()
        assert served.socket_requests >= before + 1
    assert road.requests == 0


def test_a_handler_sees_the_host_url_and_client_a_loopback_caller_would_show(served: Served) -> None:
    import httpx

    over_socket = httpx.get(f"{served.base_url}/_test/echo?x=1", timeout=LIMIT_S).json()
    status, _, body = served.road.send("GET", "/_test/echo?x=1", [], None, {"read": LIMIT_S})
    assert status == 200
    assert json.loads(body) == over_socket


def test_a_failing_handler_answers_500_and_is_logged(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="ct_local.http.inprocess"):
        status, _, _ = served.road.send("GET", "/_test/boom", [], None, {"read": LIMIT_S})
        assert status == 500
        # Logged on the server's loop once the handler's error has gone through the middleware.
        wait_until(
            lambda: any(r.exc_info for r in caplog.records),
            timeout=LIMIT_S,
            message="the handler's failure was not logged",
        )
    record = next(r for r in caplog.records if r.exc_info)
    assert "in-process request GET /_test/boom" in record.getMessage()
    assert "a bug in a handler" in str(record.exc_info[1])
