"""Fixtures of the ct_core tests: a small threaded HTTP(S) server that misbehaves on purpose.

`misbehaving_server` answers each request with the next scripted action (a status and body, a
connection reset, a slow answer, a redirect) and records what it received, so retry and error tests
run over real sockets. `tls_server` is the same server behind a freshly made self-signed certificate.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import ssl
import struct
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Action:
    """What the server does with one request."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    reset: bool = False
    delay: float = 0.0


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class ScriptedServer:
    def __init__(self, tls_context: ssl.SSLContext | None = None) -> None:
        self.actions: deque[Action] = deque()
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with owner.lock:
                    owner.requests.append(Seen(self.command, self.path, dict(self.headers), body))
                    action = owner.actions.popleft() if owner.actions else Action(200, {})
                if action.delay:
                    time.sleep(action.delay)
                if action.reset:
                    # SO_LINGER 0 makes close() send a RST instead of a polite FIN.
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                payload = b""
                if action.body is not None:
                    payload = (
                        action.body if isinstance(action.body, bytes) else json.dumps(action.body).encode()
                    )
                self.send_response(action.status)
                for key, value in action.headers.items():
                    self.send_header(key, value)
                if action.body is not None and not isinstance(action.body, bytes):
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = do_PUT = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        scheme = "http"
        if tls_context is not None:
            self.httpd.socket = tls_context.wrap_socket(self.httpd.socket, server_side=True)
            scheme = "https"
        self.base_url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def script(self, *actions: Action) -> None:
        with self.lock:
            self.actions.extend(actions)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def act() -> type[Action]:
    """The Action class, to script a server: `server.script(act(503), act(200, {...}))`."""
    return Action


@pytest.fixture
def misbehaving_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    try:
        yield server
    finally:
        server.close()


def _self_signed(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[ScriptedServer, Path]]:
    pytest.importorskip("cryptography")
    cert, key = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ScriptedServer(tls_context=context)
    try:
        yield server, cert
    finally:
        server.close()


@pytest.fixture
def closed_port() -> int:
    """A loopback port with nothing listening (connection refused)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


class SleepRecorder:
    """Stands in for time.sleep in the retry loop, so retry tests take no wall time."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def no_sleep() -> SleepRecorder:
    return SleepRecorder()
