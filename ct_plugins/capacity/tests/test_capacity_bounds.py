"""The time bound of a capacity lookup: one attempt, at most 10 s to
connect and 30 s to read, and a shorter request timeout configured on the client still wins.

`ct capacity` asks each hardware type through these SDK calls, so a silent hop must fail the command
instead of hanging it. The stalled peer is a real socket that accepts, reads the request and never
answers; the pytest timeout below turns "waited for the 30 s cap instead of the configured 0.3 s"
into a failure, without asserting any duration.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from ct_testing import wait_until

from ct_core import errors
from ct_core.client import CortexTrainingClient
from ct_core.constants import CAPACITY_CONNECT_TIMEOUT, CAPACITY_READ_TIMEOUT
from ct_core.http.transport import capacity_timeout


class StalledPeer:
    """Accepts connections and reads what arrives, but never writes a byte back."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        self.listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections.append(connection)

    def accepted_after(self, marker: socket.socket, timeout: float = 15.0) -> list[socket.socket]:
        """The connections accepted before `marker`, a connection the caller opened last.

        The listener accepts in arrival order, so once the marker is accepted every connection
        made before it has been accepted too, however late the accept thread got to run.
        """
        name = marker.getsockname()

        def accepted() -> list[int]:
            return [i for i, c in enumerate(list(self.connections)) if c.getpeername() == name]

        found = wait_until(
            accepted,
            timeout=timeout,
            interval=0.01,
            message="the stalled peer never accepted the marker connection",
        )
        return self.connections[: found[0]]

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for connection in self.connections:
            connection.close()
        self.listener.close()


@pytest.fixture
def stalled_peer() -> Iterator[StalledPeer]:
    peer = StalledPeer()
    try:
        yield peer
    finally:
        peer.close()


def test_the_bound_is_ten_seconds_to_connect_and_thirty_to_read() -> None:
    assert (CAPACITY_CONNECT_TIMEOUT, CAPACITY_READ_TIMEOUT) == (10.0, 30.0)
    # A client configured with longer timeouts is cut down to the bound for capacity...
    assert capacity_timeout((60.0, 600.0)) == (10.0, 30.0)
    # ... and a shorter configured value wins, side by side.
    assert capacity_timeout((2.0, 5.0)) == (2.0, 5.0)
    assert capacity_timeout((20.0, 5.0)) == (10.0, 5.0)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("call", ["get_capacity", "get_capacity_breakdown"])
def test_a_silent_peer_fails_the_lookup_once_within_the_configured_timeout(
    stalled_peer: StalledPeer, call: str
) -> None:
    client = CortexTrainingClient(
        base_url=f"http://127.0.0.1:{stalled_peer.port}",
        database="CAP_DB",
        schema="PUBLIC",
        request_timeout=(2.0, 0.3),
    )
    method: Any = getattr(client, call)
    with client, pytest.raises(errors.CTTimeoutError):
        method("H200")
    # One attempt: a read timeout on a capacity lookup is not retried. (Counted behind a marker
    # connection: the accept thread may not have run yet when the lookup gives up.)
    with socket.create_connection(("127.0.0.1", stalled_peer.port)) as marker:
        assert len(stalled_peer.accepted_after(marker)) == 1
