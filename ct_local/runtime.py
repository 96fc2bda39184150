"""Running the local server in the foreground: bind, serve with uvicorn, stop cleanly on a signal.

The socket is bound here rather than by uvicorn so ``--port 0`` works: the real port is known
before serving and is written, with the base URL and pid, to the optional ready file once the
server accepts connections (the pytest fixtures wait for it). SIGINT and SIGTERM stop the server
gracefully and the process exits 0, instead of uvicorn's re-raising of the signal after shutdown.

One state dir serves one process: :func:`serve` takes an exclusive OS lock (``flock``, through
``ct_core.fs.exclusive_lock``) on ``<state_dir>/server.lock`` before anything else touches the dir
and holds it for the life of the process, which the OS releases however the process ends (kill -9
included). A second server on the same dir stops with :class:`StateDirInUse`, naming the pid that
holds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import FrameType

import uvicorn
from starlette.types import ASGIApp

from ct_core.fs import atomic_write, exclusive_lock
from ct_local.app import create_app, plugin_services, start_services
from ct_local.http.inprocess import InProcessRoad
from ct_local.http.protocol import BoundedHeadProtocol
from ct_local.settings import ServerSettings
from ct_local.state import ServerState

log = logging.getLogger("ct_local")

#: The file in the state dir that the serving process holds locked (it contains that process's pid).
LOCK_FILE = "server.lock"


class StateDirInUse(RuntimeError):
    """Another process serves this state dir; ``holder`` is its pid when it could be read."""

    def __init__(self, state_dir: Path, holder: int | None) -> None:
        who = f"another ct local server (pid {holder})" if holder is not None else "another ct local server"
        super().__init__(
            f"the state dir {state_dir} is in use by {who}; stop that server, or serve another "
            "--state-dir (two servers on one state dir would train the same jobs apart)"
        )
        self.state_dir = state_dir
        self.holder = holder


@contextlib.contextmanager
def state_dir_lock(state_dir: Path) -> Iterator[None]:
    """Hold the state dir's lock (``ct_core.fs.exclusive_lock``, not waiting) while the block runs.

    Raises :class:`StateDirInUse` at once when another process holds it. The lock file says which
    process holds it: its pid, written in place (the lock belongs to the file, so the file is never
    replaced). The OS releases the lock however the process ends.
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / LOCK_FILE
    with contextlib.ExitStack() as held:
        try:
            descriptor = held.enter_context(exclusive_lock(path, blocking=False))
        except BlockingIOError:
            raise StateDirInUse(state_dir, _holder(path)) from None
        os.ftruncate(descriptor, 0)
        os.lseek(descriptor, 0, os.SEEK_SET)
        os.write(descriptor, f"{os.getpid()}\n".encode("ascii"))
        yield


def _holder(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class _Server(uvicorn.Server):
    def __init__(
        self,
        config: uvicorn.Config,
        ready_file: Path | None,
        base_url: str,
        state: ServerState | None = None,
        app: ASGIApp | None = None,
    ) -> None:
        super().__init__(config)
        self._app = app
        self._ready_file = ready_file
        self._base_url = base_url
        self._state = state
        self._road: InProcessRoad | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # A second SIGINT forces the exit, as uvicorn does; the signal is not re-raised afterwards.
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            self.should_exit = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets=sockets)
        if self._road is not None:
            self._road.close()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self._state is not None and self.started:
            if self._app is not None:
                # The app as served, on this loop, for the services' requests that skip the socket.
                host, port = sockets[0].getsockname()[:2] if sockets else (self.config.host, self.config.port)
                self._road = InProcessRoad.on_this_loop(self._app, (host, port))
            # Plugin services (the runs service) start once the server answers: they may call it.
            await asyncio.to_thread(start_services, self._state, self._base_url, self._road)
        if self._ready_file is not None and self.started:
            info = {"base_url": self._base_url, "pid": os.getpid()}
            # Atomic: the fixture polling for this file never reads half of it.
            atomic_write(self._ready_file, json.dumps(info), durable=False)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without, a small answer written in two parts waits for the
    # client's delayed ACK (about 40 ms on Linux).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def serve(
    settings: ServerSettings,
    *,
    ready_file: Path | None = None,
    log_level: str = "warning",
    snapshot_max_bytes: int | None = None,
) -> int:
    """Serve until SIGINT/SIGTERM; return the process exit code.

    Raises :class:`StateDirInUse` when another server holds the state dir. ``snapshot_max_bytes``
    bounds the training states snapshotted after each request (ct_local.storage.snapshots).
    """
    with state_dir_lock(settings.state_dir):
        return _serve(settings, ready_file, log_level, snapshot_max_bytes)


def _serve(
    settings: ServerSettings, ready_file: Path | None, log_level: str, snapshot_max_bytes: int | None
) -> int:
    sock = _bind(settings.host, settings.port)
    port = sock.getsockname()[1]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    base_url = f"http://{host}:{port}"
    from ct_local.dataplane.training_plane import TrainingDataPlane
    from ct_local.storage.snapshots import STATE_SNAPSHOT_MAX_BYTES

    limit = STATE_SNAPSHOT_MAX_BYTES if snapshot_max_bytes is None else snapshot_max_bytes
    app, state = create_app(
        settings,
        data_plane_factory=partial(TrainingDataPlane, snapshot_max_bytes=limit),
        services=plugin_services(settings),
    )
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
        # llhttp parses requests (uvicorn's httptools road), the head bounded as h11's is.
        http=BoundedHeadProtocol,
    )
    server = _Server(config, ready_file, base_url, state, app)
    # The folder in full: without --state-dir it is the platform's data folder, not the current one.
    log.warning("ct local server listening on %s (state dir %s)", base_url, settings.state_dir.resolve())
    server.run(sockets=[sock])
    return 0 if server.started else 1


def exit_now(code: int) -> None:
    """End the serving process at once once the server has stopped.

    Interpreter teardown with torch and transformers loaded takes seconds and has nothing left to
    do: SQLite committed every write and the store is closed. Only for the process entry point.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)
