"""Inside `ct local serve` the translation calls the server through its app, not over loopback.

The server is the real app with its training data plane and this plugin's embedded service, served
by ct_local's own uvicorn server in a thread of this process. Uvicorn serves the app behind a
layer that notes the path of every request that came over a socket, while the in-process road
gets the app itself: the SDK's requests (Tinker routes) come over the socket, and none of the
translation's own (Cortex Training routes), which the road counts.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from ct_testing import wait_until
from ct_testing.plugin import FAST_SETTINGS
from ct_tinker.embedded import EmbeddedTinker

from ct_local.app import create_app
from ct_local.dataplane.training_plane import TrainingDataPlane
from ct_local.runtime import _Server
from ct_local.settings import ServerSettings

BASE_MODEL = "Qwen/Qwen3-0.6B"
LIMIT_S = 120.0
STEPS = 5


class SocketPaths:
    """ASGI layer noting the path of each HTTP request uvicorn hands over."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.paths: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SocketPaths, EmbeddedTinker, str]]:
    state_dir = tmp_path_factory.mktemp("tinker-in-process") / "state"
    settings = ServerSettings(state_dir=state_dir, **FAST_SETTINGS)
    tinker_service = EmbeddedTinker(Path(state_dir), settings)
    app, state = create_app(settings, data_plane_factory=TrainingDataPlane, services=[tinker_service])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    over_socket = SocketPaths(app)
    config = uvicorn.Config(over_socket, log_level="warning", lifespan="on")
    runner = _Server(config, None, base_url, state, app)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: runner.started, timeout=LIMIT_S, message="the in-process server never started")
    try:
        yield over_socket, tinker_service, base_url
    finally:
        runner.should_exit = True
        thread.join(LIMIT_S)
        sock.close()


def test_the_translation_sends_its_requests_without_a_socket(
    served: tuple[SocketPaths, EmbeddedTinker, str],
    tinker_env: Any,
    next_token_datum: Callable[[list[int]], Any],
) -> None:
    import tinker
    from tinker import types

    over_socket, embedded, base_url = served
    tinker_env(base_url)
    with tinker.ServiceClient() as service:
        training = service.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
        road = embedded.road
        assert road is not None and road.usable()
        batch = [next_token_datum(list(b"a tiny text to learn"))]
        adam = types.AdamParams(learning_rate=1e-3)
        training.forward_backward(batch, "cross_entropy").result()  # the first call sets things up
        training.optim_step(adam).result()
        first_socket, in_process = len(over_socket.paths), road.requests
        for _ in range(STEPS):
            fb, step = training.forward_backward(batch, "cross_entropy"), training.optim_step(adam)
            assert fb.result().loss_fn_outputs
            step.result()
    paths = over_socket.paths[first_socket:]
    # The SDK's own: a submission and a future read for each call (and its heartbeats).
    assert (
        sum(p.endswith(("/forward_backward", "/optim_step", "/retrieve_future")) for p in paths) == 4 * STEPS
    )
    assert all(p.startswith("/api/v1/") for p in paths), paths
    # The translation's: for each call a submission to the data plane and a read of its result.
    assert road.requests - in_process == 4 * STEPS
