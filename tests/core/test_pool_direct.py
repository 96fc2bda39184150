"""The standard-library connection layer (`ct_core.http.direct`) under every unproxied client.

A raw-socket server in this file counts connections and can misbehave at the socket level: close
an idle keep-alive connection, reset it, hang up without answering, answer before reading a body,
never read at all. The tests check keep-alive reuse, that a stale connection is replaced without
resending a request whose fate is unknown, the timeout and error mapping (with `never_sent`), TLS
verification on by default, bodies held to their Content-Length, streaming, and that a proxy named
by the environment sends the client down httpcore's road instead.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ct_testing import wait_until

from ct_core import errors
from ct_core.client import CortexTrainingClient
from ct_core.http import direct
from ct_core.http.pool import Pool

PREFIX = "/api/v2/databases/DB/schemas/S/cortex-training"
TIMEOUTS = {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}
#: Longest a test waits for something a working client and server reach at once (only a hang fails).
DEADLINE_S = 30.0


def wait_for(condition: Callable[[], bool], what: str) -> None:
    wait_until(condition, timeout=DEADLINE_S, interval=0.01, message=f"timed out waiting for {what}")


# --- a raw-socket server ---------------------------------------------------------------------------


@dataclass
class Answer:
    """What the server does with one request."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Close the connection right after the answer, without saying so (a server's idle timeout).
    close_after: bool = False
    #: Close it with a reset (SO_LINGER 0) instead of a polite FIN, after the answer.
    reset_after: bool = False
    #: Read the request, then close the connection without a word.
    hang_up: bool = False
    #: Answer at once, before reading the body, then close while the client is still writing.
    early: bool = False
    #: Never read the body nor answer (the connection stays open until the server stops).
    stall: bool = False
    delay: float = 0.0
    #: Wait for this event after the request is recorded, before answering.
    hold: threading.Event | None = None
    #: Send the body as these chunks (Transfer-Encoding: chunked).
    chunks: list[bytes] | None = None
    #: Send these bytes as the whole answer, as they are.
    raw: bytes | None = None
    #: Write the answer in pieces of this many bytes, a moment apart (one read each, most likely).
    pieces: int = 0


@dataclass
class Request:
    connection: int
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


class RawServer:
    """HTTP/1.1 over plain sockets, one thread per connection; each request gets `respond(request)`."""

    def __init__(self, respond: Callable[[Request], Answer] | None = None, tls: ssl.SSLContext | None = None):
        self.respond = respond or (lambda request: Answer(200, {"ok": True}))
        self.tls = tls
        self.requests: list[Request] = []
        self.connections = 0
        self.closed = 0
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.base_url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                number = self.connections
            threading.Thread(target=self._serve, args=(sock, number), daemon=True).start()

    def _serve(self, sock: socket.socket, number: int) -> None:
        reader = None
        try:
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_side=True)
            reader = sock.makefile("rb")
            while self._one(sock, reader, number):
                pass
        except OSError:
            pass  # the client went away (or refused the certificate): this connection is over
        finally:
            # The file object holds the socket open: close both, and only then count the close,
            # since a test that waits for the count next expects the client to see the end.
            for end in (reader, sock):
                try:
                    if end is not None:
                        end.close()
                except OSError:
                    pass
            with self.lock:
                self.closed += 1

    def _one(self, sock: socket.socket, reader: Any, number: int) -> bool:
        """Serve one request; False when the connection is to end."""
        line = reader.readline()
        if not line:
            return False
        method, target, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (header := reader.readline()) not in (b"\r\n", b""):
            name, _, value = header.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        answer = self.respond(Request(number, method, target, headers, b""))
        if answer.early:
            self._record(Request(number, method, target, headers, b""))
            self._write_answer(sock, answer, close=True)
            time.sleep(0.3)
            # Unread body bytes are left behind: the close becomes a reset.
            return False
        if answer.stall:
            self._record(Request(number, method, target, headers, b""))
            self.stopping.wait(DEADLINE_S)
            return False
        body = reader.read(length) if length else b""
        if len(body) < length:
            return False
        self._record(Request(number, method, target, headers, body))
        # Cut short when the server stops, so a test can hold an answer back for as long as it runs;
        # an answer held that long is never sent.
        if answer.delay and self.stopping.wait(answer.delay):
            return False
        if answer.hold is not None:
            answer.hold.wait(DEADLINE_S)
        if answer.hang_up:
            return False
        self._write_answer(sock, answer, close=False)
        if answer.reset_after:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        return not answer.close_after and "close" not in answer.headers.get("Connection", "").lower()

    def _record(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    @staticmethod
    def _write_answer(sock: socket.socket, answer: Answer, *, close: bool) -> None:
        if answer.raw is not None:
            if answer.pieces:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for start in range(0, len(answer.raw), answer.pieces):
                    sock.sendall(answer.raw[start : start + answer.pieces])
                    time.sleep(0.001)
                return
            sock.sendall(answer.raw)
            return
        lines = [f"HTTP/1.1 {answer.status} X"]
        lines += [f"{key}: {value}" for key, value in answer.headers.items()]
        if close:
            lines.append("Connection: close")
        if answer.chunks is not None:
            lines.append("Transfer-Encoding: chunked")
            payload = (
                b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in answer.chunks) + b"0\r\n\r\n"
            )
        else:
            raw = answer.body
            payload = raw if isinstance(raw, bytes) else b"" if raw is None else json.dumps(raw).encode()
            lines.append("Content-Type: application/json")
            lines.append(f"Content-Length: {len(payload)}")
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)

    def close(self) -> None:
        self.stopping.set()
        self.listener.close()


@pytest.fixture
def raw_server() -> Iterator[Callable[..., RawServer]]:
    servers: list[RawServer] = []

    def start(
        respond: Callable[[Request], Answer] | None = None, tls: ssl.SSLContext | None = None
    ) -> RawServer:
        server = RawServer(respond, tls)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def scripted(*answers: Answer) -> Callable[[Request], Answer]:
    """The answers in order, one per request; the last one repeats."""
    queue = list(answers)
    lock = threading.Lock()

    def respond(request: Request) -> Answer:
        with lock:
            return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond


def make_client(server: RawServer, sleep: Any, **options: Any) -> CortexTrainingClient:
    return CortexTrainingClient(base_url=server.base_url, database="DB", schema="S", sleep=sleep, **options)


DONE = Answer(200, {"request_id": "r", "status": "done", "result": {"ok": 1}})
ACCEPTED = Answer(200, {"request_id": "r"})


def dataplane(request: Request) -> Answer:
    return DONE if request.method == "GET" else ACCEPTED


# --- keep-alive ----------------------------------------------------------------------------------


def test_the_raw_server_counts_a_connection_closed_only_once_its_socket_is(raw_server):
    # Tests wait for `closed` and then expect the client to find the connection dead: the count
    # must come after the socket's close, never before it. Holding the server's lock keeps the
    # count from moving; the end of the stream must arrive all the same.
    release = threading.Event()
    server = raw_server(lambda request: Answer(200, {}, close_after=True, hold=release))
    with socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE_S) as sock:
        sock.sendall(b"GET /once HTTP/1.1\r\nHost: x\r\n\r\n")
        wait_for(lambda: len(server.requests) == 1, "the request to be recorded")
        received = b""
        with server.lock:
            release.set()
            try:
                while block := sock.recv(65536):
                    received += block
            except TimeoutError:
                pytest.fail("the connection was still open while the server could not count it closed")
    assert received.startswith(b"HTTP/1.1 200")
    wait_for(lambda: server.closed == 1, "the close to be counted")


def test_unproxied_clients_take_the_standard_library_road(raw_server, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server = raw_server(dataplane)
    pool = Pool(server.base_url, verify=True, max_connections=2)
    try:
        assert pool.uses_standard_library
        assert pool.send("GET", "/x", [], None, TIMEOUTS).status == 200
    finally:
        pool.close()


def test_step_and_poll_pairs_share_one_kept_alive_connection(raw_server, no_sleep):
    server = raw_server(dataplane)
    with make_client(server, no_sleep) as client:
        for _ in range(5):
            assert client.poll_request("j", client.step("j")) == {"ok": 1}
    assert len(server.requests) == 10
    assert {request.connection for request in server.requests} == {1}
    assert server.connections == 1


def test_threads_share_the_pool_within_its_size(raw_server, no_sleep):
    server = raw_server(dataplane)
    failures: list[BaseException] = []
    with make_client(server, no_sleep, pool_maxsize=2) as client:

        def work() -> None:
            try:
                for _ in range(10):
                    client.poll_request("j", client.step("j"))
            except BaseException as error:  # reported below
                failures.append(error)

        threads = [threading.Thread(target=work) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(DEADLINE_S)
    assert failures == []
    assert len(server.requests) == 120
    assert server.connections <= 2


def test_an_answer_that_says_close_is_followed_by_a_new_connection(raw_server, no_sleep):
    server = raw_server(lambda request: Answer(200, {"request_id": "r"}, headers={"Connection": "close"}))
    with make_client(server, no_sleep) as client:
        for _ in range(3):
            assert client.step("j") == "r"
    assert [request.connection for request in server.requests] == [1, 2, 3]
    assert no_sleep.calls == []


def test_an_idle_connection_the_server_closed_is_replaced_before_anything_is_sent(raw_server, no_sleep):
    server = raw_server(scripted(Answer(200, {"request_id": "a"}, close_after=True), ACCEPTED))
    with make_client(server, no_sleep) as client:
        assert client.step("j") == "a"
        wait_for(lambda: server.closed == 1, "the server to close the first connection")
        # A step must never run twice: it goes out once, on a fresh connection, with no retry.
        assert client.step("j") == "r"
    assert [request.connection for request in server.requests] == [1, 2]
    assert no_sleep.calls == []


def test_a_reset_idle_connection_is_replaced_too(raw_server, no_sleep):
    server = raw_server(scripted(Answer(200, {"request_id": "a"}, reset_after=True), ACCEPTED))
    with make_client(server, no_sleep) as client:
        assert client.step("j") == "a"
        wait_for(lambda: server.closed == 1, "the server to reset the first connection")
        assert client.step("j") == "r"
    assert [request.connection for request in server.requests] == [1, 2]
    assert no_sleep.calls == []


def test_a_write_refused_by_a_dead_reused_socket_goes_out_once_on_a_new_one(
    raw_server, no_sleep, monkeypatch
):
    server = raw_server(scripted(Answer(200, {"request_id": "a"}, reset_after=True), ACCEPTED))
    with make_client(server, no_sleep) as client:
        assert client.step("j") == "a"
        wait_for(lambda: server.closed == 1, "the server to reset the first connection")
        # The reset lands between the idle check and the write (a race no test can time): the first
        # write fails before the socket took a byte, so the step provably never left.
        monkeypatch.setattr(direct._Connection, "is_dead", lambda self: False)
        assert client.step("j") == "r"
    assert [request.connection for request in server.requests] == [1, 2]
    assert no_sleep.calls == []


def test_a_step_whose_answer_is_lost_on_a_reused_connection_is_not_resent(raw_server, no_sleep):
    server = raw_server(scripted(DONE, Answer(hang_up=True), ACCEPTED))
    with make_client(server, no_sleep, max_retries=3) as client:
        assert client.poll_request("j", "r") == {"ok": 1}
        with pytest.raises(errors.RequestOutcomeUnknown) as caught:
            client.step("j")
    assert isinstance(caught.value, errors.CTConnectionError) and not caught.value.never_sent
    assert [request.method for request in server.requests] == ["GET", "POST"]
    assert no_sleep.calls == []


def test_a_poll_whose_answer_is_lost_is_asked_again(raw_server, no_sleep):
    server = raw_server(scripted(DONE, Answer(hang_up=True), DONE))
    with make_client(server, no_sleep, max_retries=3) as client:
        assert client.poll_request("j", "r") == {"ok": 1}
        assert client.poll_request("j", "r") == {"ok": 1}
    assert [request.method for request in server.requests] == ["GET"] * 3
    assert len(no_sleep.calls) == 1


# --- timeouts and errors -------------------------------------------------------------------------


def test_a_slow_answer_is_a_read_timeout_that_may_have_been_sent(raw_server):
    # The answer is held until the server stops: however late the client starts reading, it waits.
    server = raw_server(lambda request: Answer(200, {}, delay=DEADLINE_S))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        with pytest.raises(errors.CTTimeoutError) as caught:
            pool.send("GET", "/slow", [], None, {**TIMEOUTS, "read": 0.2, "write": 0.2})
    finally:
        pool.close()
    assert not caught.value.never_sent
    assert str(caught.value).startswith("ReadTimeout for url: " + server.base_url + "/slow")


def test_a_connect_timeout_was_never_sent():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    # Fill the accept queue so that the next handshake is never answered.
    fillers = []
    try:
        for _ in range(4):
            filler = socket.socket()
            filler.settimeout(0.2)
            try:
                filler.connect(("127.0.0.1", port))
            except TimeoutError:
                fillers.append(filler)
                break
            fillers.append(filler)
        else:
            pytest.skip("this system answers every handshake; no connect timeout to provoke")
        pool = Pool(f"http://127.0.0.1:{port}", verify=True, max_connections=1)
        with pytest.raises(errors.CTTimeoutError) as caught:
            pool.send("GET", "/", [], None, {**TIMEOUTS, "connect": 0.2})
        pool.close()
    finally:
        for filler in fillers:
            filler.close()
        listener.close()
    assert caught.value.never_sent and str(caught.value).startswith("ConnectTimeout")


def test_waiting_for_a_free_connection_is_a_pool_timeout_that_was_never_sent(raw_server):
    server = raw_server(lambda request: Answer(200, chunks=[b"a", b"b"]))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        with pool.stream("GET", "/held", [], None, TIMEOUTS), pytest.raises(errors.CTTimeoutError) as caught:
            pool.send("GET", "/next", [], None, {**TIMEOUTS, "pool": 0.1})
    finally:
        pool.close()
    assert caught.value.never_sent and str(caught.value).startswith("PoolTimeout")
    assert [request.target for request in server.requests] == ["/held"]


def test_a_server_that_never_reads_is_a_write_timeout(raw_server):
    server = raw_server(lambda request: Answer(stall=True))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    body = b"x" * (64 * 1024 * 1024)
    headers = [(b"Content-Length", str(len(body)).encode())]
    try:
        with pytest.raises(errors.CTTimeoutError) as caught:
            pool.send("POST", "/up", headers, [memoryview(body)], {**TIMEOUTS, "write": 0.3})
    finally:
        pool.close()
    assert not caught.value.never_sent and str(caught.value).startswith("WriteTimeout")


def test_an_answer_sent_before_the_body_was_read_is_returned(raw_server, no_sleep):
    server = raw_server(lambda request: Answer(413, {"message": "too big"}, early=True))
    with make_client(server, no_sleep) as client, pytest.raises(errors.APIError) as caught:
        client.request("forwardBackward", params={"job_id": "j"}, content=b"x" * (64 * 1024 * 1024))
    assert caught.value.status_code == 413 and "too big" in str(caught.value)


def test_a_refused_connection_was_never_sent(closed_port):
    pool = Pool(f"http://127.0.0.1:{closed_port}", verify=True, max_connections=1)
    with pytest.raises(errors.CTConnectionError) as caught:
        pool.send("GET", "/", [], None, TIMEOUTS)
    assert caught.value.never_sent and not isinstance(caught.value, errors.CTTimeoutError)
    assert "could not connect" in str(caught.value)


@pytest.mark.parametrize(
    ("headers", "target"),
    [
        ([(b"X-Bad", b"a\r\nInjected: yes")], "/ok"),
        ([(b"Bad Name", b"v")], "/ok"),
        ([], "/a b"),
    ],
)
def test_a_head_that_could_smuggle_a_line_is_refused_before_sending(raw_server, headers, target):
    server = raw_server()
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        with pytest.raises(errors.CTConnectionError) as caught:
            pool.send("GET", target, headers, None, TIMEOUTS)
    finally:
        pool.close()
    assert caught.value.never_sent
    assert server.requests == [] and server.connections == 0


FINAL = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"


def test_a_100_continue_before_the_answer_is_skipped(raw_server):
    server = raw_server(scripted(Answer(raw=b"HTTP/1.1 100 Continue\r\n\r\n" + FINAL), Answer(200, {})))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        assert pool.send("GET", "/a", [], None, TIMEOUTS).content == b"{}"
        assert pool.send("GET", "/b", [], None, TIMEOUTS).status == 200
    finally:
        pool.close()
    assert server.connections == 1


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\n" + FINAL,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nshort",
        b"SMTP ready\r\n\r\n",
    ],
    ids=["interim-103", "bad-chunk-size", "short-body", "not-http"],
)
def test_an_answer_that_breaks_http_is_a_connection_error_and_drops_the_connection(raw_server, raw):
    # A body cut short is only seen as such when the server closes; the others break at once.
    server = raw_server(scripted(Answer(raw=raw, close_after=b"short" in raw), Answer(200, {"ok": True})))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        with pytest.raises(errors.CTConnectionError) as caught:
            pool.send("GET", "/broken", [], None, TIMEOUTS)
        assert not caught.value.never_sent and "/broken" in str(caught.value)
        # The next request never reads what was left of the broken answer.
        assert json.loads(pool.send("GET", "/next", [], None, TIMEOUTS).content) == {"ok": True}
    finally:
        pool.close()
    assert [request.connection for request in server.requests] == [1, 2]


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-Endless: " + b"a" * (direct.MAX_HEAD_BYTES + 10),
        b"HTTP/1.1 200 OK\r\n"
        + b"".join(b"X-F%d: v\r\n" % n for n in range(direct.MAX_HEADER_FIELDS + 1))
        + b"Content-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    ],
    ids=["upgrade-101", "endless-head", "too-many-fields", "two-lengths"],
)
def test_an_answer_the_client_may_not_take_is_refused_and_its_connection_dropped(raw_server, raw):
    server = raw_server(scripted(Answer(raw=raw, close_after=True), Answer(200, {"ok": True})))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        with pytest.raises(errors.CTConnectionError) as caught:
            pool.send("GET", "/refused", [], None, TIMEOUTS)
        assert not caught.value.never_sent and "/refused" in str(caught.value)
        assert json.loads(pool.send("GET", "/next", [], None, TIMEOUTS).content) == {"ok": True}
    finally:
        pool.close()
    assert [request.connection for request in server.requests] == [1, 2]


def test_a_body_without_length_runs_to_the_close_and_the_connection_is_not_kept(raw_server):
    unframed = Answer(raw=b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it", close_after=True)
    server = raw_server(scripted(unframed, Answer(200, {"ok": True})))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        answer = pool.send("GET", "/unframed", [], None, TIMEOUTS)
        assert (answer.status, answer.content) == (200, b"all of it")
        assert (b"Content-Type", b"text/plain") in answer.headers
        assert pool.send("GET", "/next", [], None, TIMEOUTS).status == 200
    finally:
        pool.close()
    assert [request.connection for request in server.requests] == [1, 2]


def test_an_answer_cut_into_small_writes_reads_whole_and_keeps_the_connection(raw_server):
    body = json.dumps({"request_id": "r", "status": "done", "text": "é" * 300}).encode()
    raw = b"HTTP/1.1 201 Created\r\nX-Trace: a b  c\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    server = raw_server(scripted(Answer(raw=raw, pieces=7), Answer(200, {"ok": True})))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        answer = pool.send("GET", "/pieces", [], None, TIMEOUTS)
        assert (answer.status, answer.content) == (201, body)
        assert answer.headers == [(b"X-Trace", b"a b  c"), (b"Content-Length", str(len(body)).encode())]
        assert pool.send("GET", "/next", [], None, TIMEOUTS).status == 200
    finally:
        pool.close()
    assert [request.connection for request in server.requests] == [1, 1]


def test_a_chunked_answers_trailer_is_not_taken_for_its_head(raw_server):
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
        b"3\r\nabc\r\n2\r\nde\r\n0\r\nX-Sum: 5\r\n\r\n"
    )
    server = raw_server(scripted(Answer(raw=raw), Answer(200, {"ok": True})))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        answer = pool.send("GET", "/chunked", [], None, TIMEOUTS)
        assert answer.content == b"abcde"
        assert [name for name, _ in answer.headers] == [b"Transfer-Encoding", b"Trailer"]
        assert pool.send("GET", "/next", [], None, TIMEOUTS).status == 200
    finally:
        pool.close()
    assert [request.connection for request in server.requests] == [1, 1]


def test_bytes_after_the_answer_keep_the_answer_and_drop_the_connection(raw_server):
    # The server wrote more than its answer: whatever it is, it must never pass for the next answer.
    raw = FINAL + b'HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{"x":1}'
    server = raw_server(scripted(Answer(raw=raw), Answer(200, {"ok": True})))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        assert pool.send("GET", "/extra", [], None, TIMEOUTS).content == b"{}"
        assert json.loads(pool.send("GET", "/next", [], None, TIMEOUTS).content) == {"ok": True}
    finally:
        pool.close()
    assert [request.connection for request in server.requests] == [1, 2]


def test_a_large_answer_arrives_whole(raw_server):
    body = bytes(range(256)) * (3 * 1024 * 1024 // 256 + 7)
    server = raw_server(lambda request: Answer(200, body))
    pool = Pool(server.base_url, verify=True, max_connections=1)
    try:
        for _ in range(2):
            assert pool.send("GET", "/large", [], None, TIMEOUTS).content == body
    finally:
        pool.close()
    assert server.connections == 1


# --- bodies --------------------------------------------------------------------------------------


def test_a_body_of_views_arrives_whole_and_the_connection_is_kept(raw_server):
    server = raw_server()
    pool = Pool(server.base_url, verify=True, max_connections=1)
    frame = bytes(range(256)) * 1000
    pieces = [memoryview(frame)[i : i + 7777] for i in range(0, len(frame), 7777)]
    try:
        for _ in range(2):
            answer = pool.send(
                "POST", "/up", [(b"Content-Length", str(len(frame)).encode())], pieces, TIMEOUTS
            )
            assert answer.status == 200
    finally:
        pool.close()
    assert [request.body for request in server.requests] == [frame, frame]
    assert server.connections == 1


@pytest.mark.parametrize("declared", [10, 30])
def test_a_body_that_does_not_match_its_length_fails_and_drops_the_connection(raw_server, declared):
    server = raw_server()
    pool = Pool(server.base_url, verify=True, max_connections=1)
    pieces = [memoryview(b"x" * 10), memoryview(b"y" * 10)]
    try:
        with pytest.raises(errors.CTConnectionError, match=r"Content-Length|declared"):
            pool.send("POST", "/up", [(b"Content-Length", str(declared).encode())], pieces, TIMEOUTS)
        assert pool.send("GET", "/after", [], None, TIMEOUTS).status == 200
    finally:
        pool.close()
    wait_for(lambda: server.closed >= 1, "the broken connection to be closed")
    # Each connection has its own server thread, so the two requests may be recorded in either order.
    after = [request for request in server.requests if request.target == "/after"]
    assert [request.connection for request in after] == [2]


# --- streaming -----------------------------------------------------------------------------------


def test_a_chunked_stream_reads_lines_and_keeps_the_connection(raw_server, no_sleep):
    server = raw_server(lambda request: Answer(200, chunks=[b"one\ntw", b"o\r\n", b"three"]))
    with make_client(server, no_sleep) as client:
        for _ in range(2):
            with client.stream("getJob", params={"job_id": "j"}) as response:
                assert list(response.iter_lines()) == ["one", "two", "three"]
    assert server.connections == 1


def test_server_sent_events_arrive_through_the_stream(raw_server, no_sleep):
    events = [b'data: {"a": 1}\n\n', b"event: end\ndata: done\n\n"]
    server = raw_server(
        lambda request: Answer(200, chunks=events, headers={"Content-Type": "text/event-stream"})
    )
    with make_client(server, no_sleep) as client, client.stream("getJob", params={"job_id": "j"}) as response:
        seen = [(event.event, event.data) for event in response.iter_sse()]
    assert seen == [("message", '{"a": 1}'), ("end", "done")]


def test_a_stream_left_early_closes_its_connection(raw_server, no_sleep):
    server = raw_server(lambda request: Answer(200, chunks=[b"a" * 70000, b"b" * 70000]))
    with make_client(server, no_sleep) as client:
        with client.stream("getJob", params={"job_id": "j"}) as response:
            next(iter(response.iter_bytes()))
        wait_for(lambda: server.closed == 1, "the abandoned connection to be closed")
        with client.stream("getJob", params={"job_id": "j"}) as response:
            assert b"".join(response.iter_bytes()) == b"a" * 70000 + b"b" * 70000
    assert [request.connection for request in server.requests] == [1, 2]


def test_an_error_answer_to_a_stream_is_the_api_error(raw_server, no_sleep):
    server = raw_server(lambda request: Answer(404, {"message": "no such job", "code": "1"}))
    with (
        make_client(server, no_sleep) as client,
        pytest.raises(errors.APIError) as caught,
        client.stream("getJob", params={"job_id": "j"}),
    ):
        pass
    assert caught.value.status_code == 404


# --- TLS -----------------------------------------------------------------------------------------


@pytest.fixture
def tls_raw_server(raw_server, self_signed_cert) -> tuple[RawServer, Path]:
    cert, key = self_signed_cert
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return raw_server(dataplane, tls=context), cert


def test_tls_is_verified_by_default_and_never_retried(tls_raw_server, no_sleep):
    server, _cert = tls_raw_server
    with (
        make_client(server, no_sleep, max_retries=3) as client,
        pytest.raises(errors.TLSVerificationError) as caught,
    ):
        client.poll_request("j", "r")
    assert caught.value.never_sent and no_sleep.calls == []
    assert server.requests == []


def test_a_trusted_certificate_carries_kept_alive_requests(tls_raw_server, no_sleep):
    server, cert = tls_raw_server
    with make_client(server, no_sleep, verify_ssl=str(cert)) as client:
        for _ in range(3):
            assert client.poll_request("j", client.step("j")) == {"ok": 1}
    assert len(server.requests) == 6 and server.connections == 1


def test_a_certificate_for_another_name_is_refused(tls_raw_server):
    server, cert = tls_raw_server
    pool = Pool(f"https://localhost:{server.port}", verify=str(cert), max_connections=1)
    try:
        with pytest.raises(errors.TLSVerificationError):
            pool.send("GET", "/", [], None, TIMEOUTS)
    finally:
        pool.close()
    assert server.requests == []


def test_verification_turned_off_talks_to_the_self_signed_server(tls_raw_server, no_sleep):
    server, _cert = tls_raw_server
    with make_client(server, no_sleep, verify_ssl=False) as client:
        assert client.poll_request("j", "r") == {"ok": 1}


# --- proxies -------------------------------------------------------------------------------------


def test_a_proxy_from_the_environment_takes_httpcores_road(raw_server, no_sleep, monkeypatch):
    proxy = raw_server(dataplane)
    monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    origin = "http://cortex.invalid:8084"
    pool = Pool(origin, verify=True, max_connections=1)
    pool.close()
    assert not pool.uses_standard_library
    with CortexTrainingClient(base_url=origin, database="DB", schema="S", sleep=no_sleep) as client:
        assert client.poll_request("j", client.step("j")) == {"ok": 1}
    assert [request.target for request in proxy.requests] == [
        f"{origin}{PREFIX}/j/step",
        f"{origin}{PREFIX}/j/requests/r",
    ]


def test_no_proxy_sends_the_client_straight_to_the_server(raw_server, no_sleep, monkeypatch):
    server = raw_server(dataplane)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.delenv("http_proxy", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with make_client(server, no_sleep) as client:
        assert client.poll_request("j", client.step("j")) == {"ok": 1}
    assert [request.target for request in server.requests] == [f"{PREFIX}/j/step", f"{PREFIX}/j/requests/r"]
