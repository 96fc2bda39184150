"""The artifact session's identity look-up goes to the client's own REST host (hyphen form).

A PAT client for a Snowflake host with `_` in its account label sends REST calls to the `-` form,
because Snowflake's wildcard certificates cannot match a name with `_`. The identity statement that
precedes an artifact login (`SELECT CURRENT_USER(), CURRENT_ROLE()`) must take the same road. The
test routes the client through a recording HTTPS proxy (the environment's HTTPS_PROXY, as the pool
honours it) that tunnels every CONNECT to a local TLS server answering the SQL API: the proxy sees
which host the client asked for, and the server sees the statement and its token.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ct_core.client import CortexTrainingClient
from ct_core.downloads.snowflake_store import connector_for

PAT = "pat-for-artifacts-0123456789"
UNDERSCORE_HOST = "my_org-acct.snowflakecomputing.com"
HYPHEN_HOST = "my-org-acct.snowflakecomputing.com"
IDENTITY = {
    "resultSetMetaData": {"rowType": [{"name": "CURRENT_USER()"}, {"name": "CURRENT_ROLE()"}]},
    "data": [["ALICE", "TRAINER"]],
}


class TunnelProxy:
    """An HTTP CONNECT proxy that records each requested target and tunnels it to one local port."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.targets: list[str] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._tunnel, args=(client,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _tunnel(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            block = client.recv(4096)
            if not block:
                client.close()
                return
            head += block
        method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
        self.targets.append(target if method == "CONNECT" else f"{method} {target}")
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")

        def pipe(source: socket.socket, sink: socket.socket) -> None:
            try:
                while block := source.recv(65536):
                    sink.sendall(block)
            except OSError:
                pass
            finally:
                for end in (source, sink):
                    try:
                        end.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
        back.start()
        pipe(client, upstream)
        back.join(timeout=5)
        client.close()
        upstream.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def proxied_sql_api(tls_server: Any, act: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    server, _cert = tls_server
    server.responder = lambda seen: (
        act(200, IDENTITY) if seen.path == "/api/v2/statements" else act(404, {"message": "no route"})
    )
    proxy = TunnelProxy(int(server.base_url.rsplit(":", 1)[1]))
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("https_proxy", proxy.url)
    try:
        yield server, proxy
    finally:
        proxy.close()


def test_identity_lookup_uses_the_clients_hyphenated_rest_host(
    proxied_sql_api: Any, fake_connector: ModuleType, ct_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, proxy = proxied_sql_api
    monkeypatch.setenv("CT_FAKE_SNOWFLAKE_SERVER_URL", "https://unused.invalid")
    fake_connector.SESSIONS[:] = ["artifact-session"]
    with CortexTrainingClient.from_pat(
        host=UNDERSCORE_HOST, pat=PAT, database="DB", schema="PUBLIC", verify_ssl=False, max_retries=0
    ) as client:
        session = connector_for(client)()
    assert proxy.targets == [f"{HYPHEN_HOST}:443"]
    [statement] = server.requests
    assert statement.method == "POST" and statement.path == "/api/v2/statements"
    assert statement.header("Host") == HYPHEN_HOST
    assert statement.header("Authorization") == f"Bearer {PAT}"
    assert json.loads(statement.body) == {
        "statement": "SELECT CURRENT_USER(), CURRENT_ROLE()",
        "database": "DB",
        "schema": "PUBLIC",
    }
    # The Connector's own sign-in keeps the host as the user gave it, with the identity found.
    [login] = fake_connector.CALLS
    assert login["host"] == UNDERSCORE_HOST and login["account"] == UNDERSCORE_HOST
    assert (login["user"], login["role"], login["token"]) == ("ALICE", "TRAINER", PAT)
    session.close()
