"""`ct runs serve`: the runs service on its own, against any Cortex Training endpoint.

The Cortex Training side is the client the global connection options give (`ct --profile ...
runs serve`); every run's jobs are created with it, in its database and schema. Callers of the
REST routes present the service token (``CT_RUNS_SERVICE_TOKEN``, or the token generated into
``<state dir>/service-token`` on first start, mode 0600) as a bearer token.

With ``--database-url postgresql://...`` several processes share one Postgres: each executes
workflows (the queue's global concurrency bounds how many runs train at once across all of
them), ``--worker`` ones serve no HTTP, and a worker that stops answering has its runs taken
over by another (ct_runs.service).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import threading
from pathlib import Path
from typing import Any

from ct_core.fs import atomic_write, kept_secret
from ct_runs.service import (
    TRAINING_POLL_INTERVAL_S,
    TRAINING_POLL_MAX_INTERVAL_S,
    RunsService,
    token_authenticator,
)

log = logging.getLogger("ct_runs.serve")

TOKEN_ENV = "CT_RUNS_SERVICE_TOKEN"


def service_token(state_dir: Path) -> str:
    """The token callers must present: from the environment, else the one kept in the state dir."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
    path = state_dir / "service-token"
    token, made = kept_secret(path, lambda: "ctr_" + secrets.token_urlsafe(32))
    if made:
        log.warning("generated the runs service token in %s (callers send it as a bearer token)", path)
    return token


def run_service(
    client: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8085,
    state_dir: Path,
    database_url: str | None = None,
    worker_only: bool = False,
    concurrency: int = 1,
    webhook_urls: list[str] | None = None,
    webhook_secret: str | None = None,
    executor_id: str | None = None,
    ready_file: Path | None = None,
    execute: bool = True,
) -> int:
    """Serve until SIGINT/SIGTERM; returns the exit code.

    ``execute=False`` makes an HTTP front that runs no workflow itself (it enqueues and cancels
    through DBOS's client); it needs the shared ``database_url`` of the workers that do.
    """
    if not execute and worker_only:
        raise ValueError("a worker that executes nothing would do nothing: drop one of the two options")
    if not execute and not database_url:
        raise ValueError("an HTTP front that executes nothing needs the workers' --database-url")
    state_dir = Path(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    from ct_runs import webhooks

    for url in webhook_urls or []:
        webhooks.check_url(url)
    # A run waits on every fwd-bwd and step it sends: poll them on a short schedule.
    trainer_client = client.with_polling(TRAINING_POLL_INTERVAL_S, TRAINING_POLL_MAX_INTERVAL_S)
    service = RunsService(
        state_dir=state_dir,
        client_for=lambda owner, database, schema: trainer_client,
        authenticate=token_authenticator(service_token(state_dir)),
        database_url=database_url,
        concurrency=concurrency,
        executor_id=executor_id,
        webhook_urls=webhook_urls,
        webhook_secret=webhook_secret,
        execute=execute,
    )
    if worker_only:
        return _run_worker(service, ready_file)
    return _run_http(service, host, port, ready_file)


def _write_ready(ready_file: Path | None, info: dict[str, Any]) -> None:
    if ready_file is not None:
        atomic_write(ready_file, json.dumps({**info, "pid": os.getpid()}), durable=False)


def _run_worker(service: RunsService, ready_file: Path | None) -> int:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    service.start()
    log.warning("runs worker %s started", service.executor_id)
    _write_ready(ready_file, {"executor_id": service.executor_id})
    try:
        stop.wait()
    finally:
        service.stop()
    return 0


def _run_http(service: RunsService, host: str, port: int, ready_file: Path | None) -> int:
    import contextlib
    import socket
    from collections.abc import AsyncIterator

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        import asyncio

        await asyncio.to_thread(service.start)
        try:
            yield
        finally:
            await asyncio.to_thread(service.stop)

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(
            {"message": f"No route for {request.method} {request.url.path}", "code": "not_found"},
            status_code=404,
        )

    app = Starlette(
        routes=service.routes(), lifespan=lifespan, exception_handlers={404: not_found, 405: not_found}
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    base_url = f"http://{shown}:{bound}"

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                _write_ready(ready_file, {"base_url": base_url, "executor_id": service.executor_id})

    server = Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", http="h11"))
    log.warning("runs service listening on %s (state dir %s)", base_url, service.state_dir)
    server.run(sockets=[sock])
    return 0 if server.started else 1
