"""Fixtures of the ct_core tests: a small threaded HTTP(S) server that misbehaves on purpose.

`misbehaving_server` answers each request with the next scripted action (a status and body, a
connection reset, a slow answer, a redirect) and records what it received, so retry and error tests
run over real sockets. `tls_server` is the same server behind a freshly made self-signed certificate.
A server can also be given a `responder`: a function of the request that answers whenever no scripted
action is queued, so a data-plane test can run a small stateful service (chunk groups, polling).
`relay` makes a recording server whose responder passes every request on to another server (a
ct_local one) and its answer back: what a client really sent can then be read off `server.requests`.
"""

from __future__ import annotations

import datetime
import importlib
import importlib.util
import ipaddress
import json
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, cast

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

    def header(self, name: str) -> str | None:
        """The value of header `name` as it arrived, whatever case the client spelled it in."""
        wanted = name.lower()
        return next((value for key, value in self.headers.items() if key.lower() == wanted), None)


class ScriptedServer:
    def __init__(self, tls_context: ssl.SSLContext | None = None) -> None:
        self.actions: deque[Action] = deque()
        self.requests: list[Seen] = []
        self.responder: Callable[[Seen], Action] | None = None
        self.lock = threading.Lock()
        #: Set when the server closes; ends every answer still held back by its `delay`.
        self.closing = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Seen(self.command, self.path, dict(self.headers), body)
                with owner.lock:
                    owner.requests.append(seen)
                    scripted = owner.actions.popleft() if owner.actions else None
                    responder = owner.responder
                if scripted is not None:
                    action = scripted
                elif responder is not None:
                    action = responder(seen)
                else:
                    action = Action(200, {})
                # A delay ends early when the server closes: a test can hold an answer back for as
                # long as it runs (a timeout that must fire) without a thread left asleep.
                if action.delay and owner.closing.wait(action.delay):
                    self.close_connection = True
                    return  # the test is over; its client is long gone
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
        self.closing.set()
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
    """A certificate for 127.0.0.1 (and its key), from `cryptography`, else the openssl command."""
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither the cryptography package nor the openssl command is here")
        command = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        command += [
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ]
        subprocess.run(
            [*command, "-keyout", str(key_path), "-out", str(cert_path)],
            check=True,
            capture_output=True,
        )
        return cert_path, key_path
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@pytest.fixture
def self_signed_cert(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh self-signed certificate for 127.0.0.1 and its key, as PEM files in ``tmp_path``."""
    return _self_signed(tmp_path)


@pytest.fixture
def tls_server(self_signed_cert: tuple[Path, Path]) -> Iterator[tuple[ScriptedServer, Path]]:
    cert, key = self_signed_cert
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ScriptedServer(tls_context=context)
    try:
        yield server, cert
    finally:
        server.close()


#: The stand-in of the Snowflake Connector (tests/core/fake_snowflake/snowflake/connector).
FAKE_SNOWFLAKE_ROOT = Path(__file__).parent / "fake_snowflake"


def _drop_snowflake_modules() -> None:
    for name in [n for n in sys.modules if n == "snowflake" or n.startswith("snowflake.")]:
        del sys.modules[name]


@pytest.fixture
def fake_connector(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """`snowflake.connector` resolved to the stand-in for this test, the real one again after."""
    for name in [n for n in sys.modules if n == "snowflake" or n.startswith("snowflake.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(FAKE_SNOWFLAKE_ROOT))
    module = importlib.import_module("snowflake.connector")
    assert Path(module.__file__ or "").is_relative_to(FAKE_SNOWFLAKE_ROOT)
    try:
        yield module
    finally:
        _drop_snowflake_modules()  # monkeypatch then puts back whatever was imported before


#: Material shared by the wire tests (tests/fixtures/wire): golden-frame cases, `assert_same`.
WIRE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wire"


@pytest.fixture(scope="session")
def assert_same() -> Callable[..., None]:
    """``assert_same(actual, expected)`` of tests/fixtures/wire/cases.py (loaded by path: tests are not
    packages): equal values with equal container types; tensors by kind, dtype, shape and bytes."""
    spec = importlib.util.spec_from_file_location("ct_wire_cases_for_core_tests", WIRE_FIXTURES / "cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return cast("Callable[..., None]", module.assert_same)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port with nothing listening (connection refused).

    The port stays bound, never listening, until the test ends: no other process can take it in
    the meantime, and a client's own connection cannot land on it (a connect to a free port of the
    ephemeral range can, rarely, connect the socket to itself).
    """
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
    finally:
        sock.close()


#: Headers the relay never passes on: those of one hop (the body is passed on decoded) and those the
#: scripted server writes itself.
_HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "content-encoding",
        "host",
        "date",
        "server",
    }
)


def relay_to(upstream: str) -> Callable[[Seen], Action]:
    """A responder that sends each request on to `upstream` and answers with what came back."""
    import httpx

    def relay(seen: Seen) -> Action:
        headers = {key: value for key, value in seen.headers.items() if key.lower() not in _HOP_HEADERS}
        # The relay reads the whole answer itself: ask upstream for it uncompressed.
        headers = {key: value for key, value in headers.items() if key.lower() != "accept-encoding"}
        try:
            answer = httpx.request(
                seen.method, upstream + seen.path, headers=headers, content=seen.body, timeout=30.0
            )
        except httpx.TransportError:
            # Upstream dropped the connection (a `drop` fault): drop this one too.
            return Action(reset=True)
        kept = {key: value for key, value in answer.headers.items() if key.lower() not in _HOP_HEADERS}
        return Action(answer.status_code, answer.content, headers=kept)

    return relay


@pytest.fixture
def relay() -> Iterator[Callable[[str], ScriptedServer]]:
    """`relay(upstream_base_url)`: a recording server that passes every request on to upstream."""
    servers: list[ScriptedServer] = []

    def start(upstream: str) -> ScriptedServer:
        server = ScriptedServer()
        server.responder = relay_to(upstream.rstrip("/"))
        servers.append(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.close()


class SleepRecorder:
    """Stands in for time.sleep in the retry loop, so retry tests take no wall time."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def no_sleep() -> SleepRecorder:
    return SleepRecorder()


# --------------------------------------------------------------------------------------------------
# A small stateful data-plane service over the scripted server
# --------------------------------------------------------------------------------------------------


class FakeDataPlane:
    """Just enough of the data plane to drive the SDK: chunk groups, requests, polling pages, logs.

    - forward-backward keeps chunk groups by id, refuses a group whose first chunk is not 0 with
      `chunk_group_restart_required` (or when told to forget a group), a reused id with another hash
      with `chunk_group_conflict`, and counts executions per (group, hash);
    - every scheduling call creates a request whose status pages come from `pages[request_id]`
      (a list consumed front to back, the last page repeating) or a plain `done` page;
    - `operation` answers `operation_answers[type]` (a dict, or a callable of the body).
    """

    def __init__(self) -> None:
        self.groups: dict[str, dict[str, Any]] = {}
        self.executions: dict[tuple[str, str], int] = {}
        self.frames: list[bytes] = []
        self.forget_at: list[int] = []
        self.always_forget_at: int | None = None
        self.pages: dict[str, list[dict[str, Any]]] = {}
        self.results: dict[str, Any] = {}
        self.bodies: list[tuple[str, Any]] = []
        self.operation_answers: dict[str, Any] = {}
        self.default_result: Any = None
        self.counter = 0
        self.job_reads = 0
        self.job: dict[str, Any] = {
            "status": "running",
            "sub_jobs": [
                {"sub_job_id": "job:training:0", "job_type": "training"},
                {"sub_job_id": "job:sampling:0", "job_type": "sampling"},
            ],
        }
        self.lock = threading.Lock()

    def _new_request(self, kind: str, result: Any = None) -> str:
        self.counter += 1
        request_id = f"req-{kind}-{self.counter}"
        self.results[request_id] = result
        return request_id

    def __call__(self, seen: Seen) -> Action:
        with self.lock:
            return self._route(seen)

    def _route(self, seen: Seen) -> Action:
        path = seen.path.split("?", 1)[0]
        parts = path.rstrip("/").split("/")
        if seen.method == "GET" and "requests" in parts:
            return self._status(parts[-1], seen.path)
        if seen.method == "GET":
            self.job_reads += 1
            return Action(200, {**self.job, "job_id": parts[-1]})
        tail = parts[-1]
        job_id = parts[-2]
        if tail == "forward-backward":
            return self._chunk(job_id, seen.body)
        body = json.loads(seen.body) if seen.body else None
        self.bodies.append((tail, body))
        if tail in ("step", "save", "load"):
            return Action(200, {"request_id": self._new_request(tail), "job_id": job_id})
        if tail == "operation":
            answer = self.operation_answers.get(body["operation_type"])
            if callable(answer):
                produced = answer(body)
                return produced if isinstance(produced, Action) else Action(200, produced)
            if answer is not None:
                return Action(200, answer)
            return Action(200, {"request_id": self._new_request(body["operation_type"]), "job_id": job_id})
        return Action(404, {"message": f"no route {path}"})

    def _chunk(self, job_id: str, frame: bytes) -> Action:
        from ct_core import wire

        desc = wire.read_byte_chunk_metadata(frame)
        assert desc is not None, "forward-backward bodies are always request chunks"
        payload = bytes(wire.loads(frame, backend="numpy")["payload"])
        group_id = desc["chunk_group_id"]
        self.bodies.append(("forward-backward", desc))
        # A server restart between chunks: the group's state is gone when this index arrives.
        index = desc["chunk_idx"]
        if index in self.forget_at or self.always_forget_at == index:
            if index in self.forget_at:
                self.forget_at.remove(index)
            self.groups.pop(group_id, None)
        group = self.groups.get(group_id)
        if group is None:
            if desc["chunk_idx"] != 0:
                return Action(409, {"code": "chunk_group_restart_required", "message": "unknown group"})
            group = {"sha": desc["frame_sha256"], "total": desc["total_chunks"], "parts": {}}
            self.groups[group_id] = group
        if group["sha"] != desc["frame_sha256"] or group["total"] != desc["total_chunks"]:
            return Action(
                409,
                {
                    "error": {
                        "code": "chunk_group_conflict",
                        "message": "chunk group reused",
                        "chunk_group_id": group_id,
                    }
                },
            )
        group["parts"][desc["chunk_idx"]] = payload
        if desc["chunk_idx"] < desc["total_chunks"] - 1:
            return Action(200, {"accepted": desc["chunk_idx"]})
        whole = b"".join(group["parts"][i] for i in range(group["total"]))
        key = (group_id, desc["frame_sha256"])
        self.executions[key] = self.executions.get(key, 0) + 1
        self.frames.append(whole)
        return Action(
            200, {"request_id": self._new_request("fwd-bwd", self.default_result), "job_id": job_id}
        )

    def _status(self, request_id: str, raw_path: str) -> Action:
        queue = self.pages.get(request_id)
        if queue:
            page = queue.pop(0) if len(queue) > 1 else queue[0]
            return Action(200, page)
        result = self.results.get(request_id, {"ok": True})
        return Action(200, {"request_id": request_id, "status": "done", "result": result, "events": []})


@pytest.fixture
def dataplane() -> Iterator[tuple[ScriptedServer, FakeDataPlane]]:
    """(server, service): a scripted server whose unscripted requests go to a FakeDataPlane."""
    server = ScriptedServer()
    service = FakeDataPlane()
    server.responder = service
    try:
        yield server, service
    finally:
        server.close()


@pytest.fixture
def make_dp_client(
    dataplane: tuple[ScriptedServer, FakeDataPlane], no_sleep: SleepRecorder
) -> Iterator[Callable[..., Any]]:
    """`make_dp_client(**options)`: a CortexTrainingClient on the fake data plane, built with these
    constructor options over the defaults (three retries, `no_sleep` for retries and polls)."""
    from ct_core import CortexTrainingClient

    server, _ = dataplane
    clients: list[Any] = []

    def make(**options: Any) -> Any:
        settings: dict[str, Any] = {"max_retries": 3, "sleep": no_sleep, **options}
        client = CortexTrainingClient(base_url=server.base_url, database="DB", schema="PUBLIC", **settings)
        clients.append(client)
        return client

    try:
        yield make
    finally:
        for client in clients:
            client.close()


@pytest.fixture
def dp_client(make_dp_client: Callable[..., Any]) -> Any:
    """A CortexTrainingClient on the fake data plane; retries and polls never sleep for real."""
    return make_dp_client()
