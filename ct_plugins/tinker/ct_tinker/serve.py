"""`ct tinker serve`: the Tinker API on its own, in front of any Cortex Training endpoint.

Every call runs on the one ct_core client of the global connection options (a Snowflake account
or a local server), in its database and schema. The caller's Tinker API key is checked against the
service's own key and never forwarded: the service uses its own connection, and all callers share
one owner, "service".
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import Request

from ct_core.fs import atomic_write, kept_secret
from ct_tinker.embedded import POLL_INTERVAL_S, POLL_MAX_INTERVAL_S
from ct_tinker.service import TinkerRefusal, TinkerService

log = logging.getLogger("ct_tinker.serve")

KEY_ENV = "CT_TINKER_SERVICE_KEY"
OWNER = "service"


def service_key(state_dir: Path) -> str:
    """The key callers present: from the environment, else the one kept in the state dir (0600)."""
    key = os.environ.get(KEY_ENV, "").strip()
    if key:
        return key
    path = state_dir / "service-key"
    # The SDK accepts only keys with this prefix.
    key, made = kept_secret(path, lambda: "tml-" + secrets.token_urlsafe(32))
    if made:
        log.warning("generated the Tinker service key in %s (callers set it as TINKER_API_KEY)", path)
    return key


def key_authenticator(key: str) -> Any:
    def authenticate(request: Request) -> str:
        given = request.headers.get("x-api-key", "").strip()
        if not hmac.compare_digest(given.encode(), key.encode()):
            raise TinkerRefusal(401, "this service needs its key as the Tinker API key (X-API-Key)")
        return OWNER

    return authenticate


def run_service(
    client: Any,
    *,
    host: str,
    port: int,
    state_dir: Path,
    ready_file: Path | None = None,
    byte_tokenizer: bool = False,
) -> int:
    """Serve until SIGINT/SIGTERM; returns the exit code."""
    import uvicorn
    from starlette.applications import Starlette

    state_dir = Path(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    polling = client.with_polling(POLL_INTERVAL_S, POLL_MAX_INTERVAL_S)
    service = TinkerService(
        client_for=lambda owner: polling,
        authenticate=key_authenticator(service_key(state_dir)),
        state_dir=state_dir,
        database=None,
        schema=None,
        # The SDK loads the base model's own tokenizer by its name, unless the endpoint serves the
        # local server's tiny byte model.
        tokenizer_for=None if byte_tokenizer else (lambda base_model: base_model),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            service.stop()

    app = Starlette(routes=service.routes(), lifespan=lifespan)
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
            if self.started and ready_file is not None:
                atomic_write(
                    ready_file, json.dumps({"base_url": base_url, "pid": os.getpid()}), durable=False
                )

    server = Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", http="h11"))
    log.warning("Tinker API listening on %s (state dir %s)", base_url, state_dir)
    server.run(sockets=[sock])
    return 0 if server.started else 1
