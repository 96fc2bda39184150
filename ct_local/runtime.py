"""Running the local server in the foreground: bind, serve with uvicorn, stop cleanly on a signal.

The socket is bound here rather than by uvicorn so ``--port 0`` works: the real port is known
before serving and is written, with the base URL and pid, to the optional ready file once the
server accepts connections (the pytest fixtures wait for it). SIGINT and SIGTERM stop the server
gracefully and the process exits 0, instead of uvicorn's re-raising of the signal after shutdown.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from types import FrameType

import uvicorn

from ct_core.fs import atomic_write
from ct_local.app import create_app
from ct_local.settings import ServerSettings

log = logging.getLogger("ct_local")


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, ready_file: Path | None, base_url: str) -> None:
        super().__init__(config)
        self._ready_file = ready_file
        self._base_url = base_url

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # A second SIGINT forces the exit, as uvicorn does; the signal is not re-raised afterwards.
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            self.should_exit = True

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self._ready_file is not None and self.started:
            info = {"base_url": self._base_url, "pid": os.getpid()}
            # Atomic: the fixture polling for this file never reads half of it.
            atomic_write(self._ready_file, json.dumps(info), durable=False)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def serve(settings: ServerSettings, *, ready_file: Path | None = None, log_level: str = "warning") -> int:
    """Serve until SIGINT/SIGTERM; return the process exit code."""
    sock = _bind(settings.host, settings.port)
    port = sock.getsockname()[1]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    base_url = f"http://{host}:{port}"
    from ct_local.dataplane.training_plane import TrainingDataPlane

    app, _ = create_app(settings, data_plane_factory=TrainingDataPlane)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    server = _Server(config, ready_file, base_url)
    log.warning("ct local server listening on %s (state dir %s)", base_url, settings.state_dir)
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
