"""One client per caller role of a server, for the services that run inside `ct local serve`.

A service embedded in the local server (the runs service, the Tinker API) acts on that very server
as the role of whoever called it: it needs a `CortexTrainingClient` holding that role's token, per
database and schema. `RoleClients` makes each on first use, keeps it, and closes them all when the
service stops. The server's address is known only once it listens (`start`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ct_core.constants import DEFAULT_POLL_INTERVAL, DEFAULT_POLL_MAX_INTERVAL
from ct_core.errors import CTConnectionError

if TYPE_CHECKING:
    from ct_core.client import CortexTrainingClient
    from ct_core.http.pool import Road


class RoleClients:
    """`get(role, database, schema)`: the client acting as `role` on the server `start` named.

    `token_of(role)` is the token that authenticates as the role (None on a server without
    tokens); `poll_interval` and `poll_max_interval` are the clients' result-polling cadence.
    """

    def __init__(
        self,
        token_of: Callable[[str], str | None],
        *,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        poll_max_interval: float = DEFAULT_POLL_MAX_INTERVAL,
    ) -> None:
        self._token_of = token_of
        self._poll_interval = poll_interval
        self._poll_max_interval = poll_max_interval
        self._base_url: str | None = None
        self._request_waiter: Callable[[str, float], bool] | None = None
        self._road: Road | None = None
        self._clients: dict[tuple[str, str, str], CortexTrainingClient] = {}
        self._lock = threading.Lock()

    def start(
        self,
        base_url: str,
        *,
        request_waiter: Callable[[str, float], bool] | None = None,
        road: Road | None = None,
    ) -> None:
        """Clients are made for the server at `base_url` from now on; `request_waiter`: the
        server's own (its `ct_local_services` object got it), which they wait on for results;
        `road`: the server's way in without a socket, which they send through."""
        self._base_url = base_url
        self._request_waiter = request_waiter
        self._road = road

    def get(self, role: str, database: str, schema: str) -> CortexTrainingClient:
        from ct_core.client import CortexTrainingClient

        if self._base_url is None:
            raise CTConnectionError("the local server has not started listening yet")
        key = (role, database.upper(), schema.upper())
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = CortexTrainingClient(
                    base_url=self._base_url,
                    database=database,
                    schema=schema,
                    token=self._token_of(role),
                    poll_interval=self._poll_interval,
                    poll_max_interval=self._poll_max_interval,
                    request_waiter=self._request_waiter,
                    road=self._road,
                )
                self._clients[key] = client
            return client

    def close(self) -> None:
        with self._lock:
            clients = list(self._clients.values())
            self._clients.clear()
        for client in clients:
            client.close()
