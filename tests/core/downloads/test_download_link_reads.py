"""How a link's body is read: straight from the socket into one buffer, or through urllib3.

A body with a Content-Length and no chunked framing is read from the socket reader under urllib3
into the caller's buffer; anything else (chunked encoding) goes through urllib3's own read1. Either
way the bytes are the ones on the wire (a gzip body stays gzip), bytes that came with the headers
are handed over without waiting for more, and a body cut short is a retryable transport error.
"""

from __future__ import annotations

import gzip
import http.server
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ct_core.downloads.checkpoint import CheckpointDownloader
from ct_core.downloads.link_client import (
    BLOCK_BYTES,
    LOOPBACK_READ_AT_LEAST,
    LinkClient,
    LinkTimeouts,
    LinkTransportError,
)

DEADLINE_S = 30.0


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[Any], None]], str]]:
    """``serve(handle)``: a loopback HTTP/1.1 server calling ``handle(handler)`` per GET; its URL."""
    servers: list[http.server.ThreadingHTTPServer] = []
    stop = threading.Event()

    def start(handle: Callable[[Any], None]) -> str:
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        servers.append(server)
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        return f"http://127.0.0.1:{server.server_address[1]}/blob"

    start.stop = stop  # type: ignore[attr-defined]
    try:
        yield start
    finally:
        stop.set()
        for server in servers:
            server.shutdown()
            server.server_close()


def _chunked(data: bytes, piece: int = 300_000) -> Callable[[Any], None]:
    def handle(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for start in range(0, len(data), piece):
            part = data[start : start + piece]
            handler.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()

    return handle


def test_a_chunked_body_is_read_through_urllib3_without_its_framing(serve: Any, tmp_path: Path) -> None:
    data = os.urandom(2 * 1024 * 1024 + 11)
    url = serve(_chunked(data))
    client = LinkClient()
    with client.get(url) as response:
        blocks = list(response.iter_blocks())
    client.close()
    assert b"".join(blocks) == data
    assert max(len(block) for block in blocks) <= BLOCK_BYTES

    answer = {"files": [{"filename": "w.bin", "url": url, "size_bytes": len(data)}]}
    downloader = CheckpointDownloader(lambda: answer, tmp_path)
    try:
        downloader.run()
    finally:
        downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == data


@pytest.mark.parametrize("chunked", [False, True])
def test_a_gzip_body_is_kept_as_served(serve: Any, tmp_path: Path, chunked: bool) -> None:
    wire = gzip.compress(os.urandom(400_000))

    def plain(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(wire)))
        handler.end_headers()
        handler.wfile.write(wire)

    chunks = _chunked(wire)

    def encoded(handler: Any) -> None:
        # The chunked answer with the same Content-Encoding header.
        original = handler.end_headers

        def end_headers() -> None:
            handler.send_header("Content-Encoding", "gzip")
            original()

        handler.end_headers = end_headers
        chunks(handler)

    url = serve(encoded if chunked else plain)
    answer = {"files": [{"filename": "w.gz", "url": url, "size_bytes": len(wire)}]}
    downloader = CheckpointDownloader(lambda: answer, tmp_path)
    try:
        downloader.run()
    finally:
        downloader.close()
    assert (tmp_path / "w.gz").read_bytes() == wire


def test_bytes_that_came_with_the_headers_are_handed_over_at_once(serve: Any) -> None:
    # Headers and the first bytes in one write, then silence: the first read must return those
    # bytes rather than wait for more (which would only come at the read timeout).
    def stall(handler: Any) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"a" * 500)
        handler.wfile.flush()
        serve.stop.wait(DEADLINE_S * 4)

    url = serve(stall)
    client = LinkClient()
    got: list[int] = []
    buffer = memoryview(bytearray(BLOCK_BYTES))

    def read() -> None:
        with client.get(url) as response:
            got.append(response.readinto1(buffer))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(DEADLINE_S)
    assert got == [500], "the first read waited for more than what had arrived"
    assert bytes(buffer[:500]) == b"a" * 500
    client.close()


def test_a_body_cut_short_is_a_retryable_transport_error(serve: Any) -> None:
    def cut(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "100000")
        handler.end_headers()
        handler.wfile.write(b"b" * 30_000)
        handler.wfile.flush()
        handler.close_connection = True

    url = serve(cut)
    client = LinkClient()
    buffer = memoryview(bytearray(BLOCK_BYTES))
    total = 0
    with pytest.raises(LinkTransportError) as caught, client.get(url) as response:
        while got := response.readinto1(buffer):
            total += got
    client.close()
    assert caught.value.retryable is True
    assert total == 30_000


def _in_thread(work: Callable[[], Any]) -> list[Any]:
    """Run ``work`` on a thread, waiting up to the deadline; [result] or [exception], [] on a hang."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    return outcome


def _reads_until_the_timeout(url: str) -> list[int]:
    """Read `url` block by block under a 1 s read timeout; the sizes read before it fired, once
    it has fired as a retryable LinkTransportError.

    The bytes that do come must each arrive within that timeout, so it is not cut much finer.
    """
    client = LinkClient(timeouts=LinkTimeouts(connect=5.0, read=1.0))
    buffer = memoryview(bytearray(BLOCK_BYTES))
    reads: list[int] = []

    def read() -> None:
        with client.get(url) as response:
            while True:
                reads.append(response.readinto1(buffer))

    outcome = _in_thread(read)
    client.close()
    assert outcome, "the read never timed out"
    assert isinstance(outcome[0], LinkTransportError) and outcome[0].retryable is True
    return reads


def test_a_link_that_falls_silent_midway_times_out_as_retryable(serve: Any) -> None:
    def stall(handler: Any) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"a" * 500)
        handler.wfile.flush()
        serve.stop.wait(DEADLINE_S * 4)

    url = serve(stall)
    assert _reads_until_the_timeout(url) == [500]


def _paced(data: bytes, piece: int = 64 * 1024) -> Callable[[Any], None]:
    """A Content-Length answer written ``piece`` bytes at a time (a server that sends 64 KiB writes)."""

    def handle(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        for start in range(0, len(data), piece):
            handler.wfile.write(data[start : start + piece])
        handler.wfile.flush()

    return handle


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads wait for bytes on Linux only")
def test_loopback_reads_wait_for_a_mebibyte_until_the_tail_then_take_what_comes(serve: Any) -> None:
    data = os.urandom(6 * 1024 * 1024 + 12345)
    tiny = b"0123456789"
    bodies = {"/blob": data, "/tiny": tiny}
    url = serve(lambda handler: _paced(bodies[handler.path])(handler))
    # A read timeout far past the deadline: a read left waiting for bytes that never come hangs
    # the test (it fails on the deadline) instead of returning them late.
    client = LinkClient(timeouts=LinkTimeouts(connect=5.0, read=DEADLINE_S * 10))
    buffer = memoryview(bytearray(BLOCK_BYTES))
    reads: list[tuple[int, int]] = []

    def read() -> tuple[bytes, bytes]:
        parts = bytearray()
        with client.get(url) as response:
            while got := response.readinto1(buffer):
                reads.append((len(data) - len(parts), got))
                parts += buffer[:got]
        # The next answer on the same client is read as soon as it is there, whatever the
        # connection it comes on waited for before.
        with client.get(url.replace("/blob", "/tiny")) as response:
            small = bytes(buffer[: response.readinto1(buffer)])
        return bytes(parts), small

    outcome = _in_thread(read)
    client.close()
    assert outcome and not isinstance(outcome[0], BaseException), outcome
    body, small = outcome[0]
    assert body == data and small == tiny
    # After the first read (what came with the headers), every read while at least 2 MiB were to
    # come took 1 MiB or more; the last ones took what was left.
    waited = [got for left, got in reads[1:] if left >= 2 * LOOPBACK_READ_AT_LEAST]
    assert waited and min(waited) >= LOOPBACK_READ_AT_LEAST
    assert all(got <= BLOCK_BYTES for _, got in reads)


def _then_silent(data: bytes, sent: int, went_quiet: threading.Event, stop: threading.Event) -> Any:
    """Announce all of ``data``, send its first ``sent`` bytes, then nothing until the test ends."""

    def handle(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data[:sent])
        handler.wfile.flush()
        went_quiet.set()
        stop.wait(DEADLINE_S * 4)

    return handle


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads wait for bytes on Linux only")
def test_a_large_loopback_body_falling_silent_still_times_out_as_retryable(serve: Any) -> None:
    # Reads of this body wait for a mebibyte at a time; a link that goes quiet with less than that
    # queued must still end in the read timeout, not hang.
    data = os.urandom(8 * 1024 * 1024)
    sent = 2 * 1024 * 1024 + 300_000
    url = serve(_then_silent(data, sent, threading.Event(), serve.stop))
    assert sum(_reads_until_the_timeout(url)) == sent


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads wait for bytes on Linux only")
def test_a_loopback_read_waiting_for_bytes_ends_at_once_on_abort(serve: Any) -> None:
    data = os.urandom(8 * 1024 * 1024)
    went_quiet = threading.Event()
    url = serve(_then_silent(data, 1_500_000, went_quiet, serve.stop))
    # A read timeout far past the deadline: only the abort can end the read in time.
    client = LinkClient(timeouts=LinkTimeouts(connect=5.0, read=DEADLINE_S * 10))
    buffer = memoryview(bytearray(BLOCK_BYTES))
    opened: list[Any] = []
    is_open = threading.Event()
    reads: list[int] = []

    def read() -> None:
        with client.get(url) as response:
            opened.append(response)
            is_open.set()
            while True:
                reads.append(response.readinto1(buffer))

    thread_outcome: list[Any] = []
    reader = threading.Thread(target=lambda: thread_outcome.extend(_in_thread(read)), daemon=True)
    reader.start()
    assert is_open.wait(DEADLINE_S) and went_quiet.wait(DEADLINE_S)
    opened[0].abort()
    reader.join(DEADLINE_S * 2)
    client.close()
    assert thread_outcome, "the read kept waiting after the abort"
    assert isinstance(thread_outcome[0], LinkTransportError)
    assert sum(reads) <= 1_500_000


def test_a_link_that_never_answers_times_out_as_retryable(serve: Any) -> None:
    url = serve(lambda handler: serve.stop.wait(DEADLINE_S * 4))
    client = LinkClient(timeouts=LinkTimeouts(connect=5.0, read=0.3))

    def get() -> None:
        with client.get(url):
            pass

    outcome = _in_thread(get)
    client.close()
    assert outcome, "the GET never timed out"
    assert isinstance(outcome[0], LinkTransportError) and outcome[0].retryable is True


def test_a_large_body_over_tls_is_read_intact(tls_server: Any, act: Any, tmp_path) -> None:
    # Megabytes of body arrive in many TLS records, well past what came with the headers: most of
    # it is read by the direct path, from the TLS socket itself.
    server, cert = tls_server
    data = os.urandom(3 * 1024 * 1024 + 3)
    server.script(act(200, data))
    answer = {"files": [{"filename": "w.bin", "url": server.base_url + "/x", "size_bytes": len(data)}]}
    reads: list[int] = []
    downloader = CheckpointDownloader(
        lambda: answer, tmp_path, verify=str(cert), on_bytes=lambda name, done, total: reads.append(done)
    )
    try:
        downloader.run()
    finally:
        downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == data
    assert len(reads) > 2


def _whole(data: bytes) -> Callable[[Any], None]:
    """Headers and body in one write, so part of the body waits in http.client's buffer."""

    def handle(handler: Any) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(data) + data)
        handler.wfile.flush()

    return handle


@pytest.mark.parametrize("size", [1000, 4096, 8192, 8193, 65536, BLOCK_BYTES])
def test_any_buffer_size_reads_the_body_intact(serve: Any, size: int) -> None:
    # A small buffer can leave bytes in http.client's buffer after a read; the socket is only read
    # directly once that buffer is known to be empty, whatever size the caller reads with.
    data = os.urandom(300_000)
    url = serve(_whole(data))
    client = LinkClient()
    buffer = memoryview(bytearray(size))
    parts: list[bytes] = []
    with client.get(url) as response:
        while got := response.readinto1(buffer):
            parts.append(bytes(buffer[:got]))
    client.close()
    assert b"".join(parts) == data


@pytest.mark.parametrize(("chunked", "direct"), [(False, True), (True, False)])
def test_the_socket_is_read_directly_only_for_a_body_as_sent(
    serve: Any, monkeypatch: pytest.MonkeyPatch, chunked: bool, direct: bool
) -> None:
    from ct_core.downloads import link_client

    chosen: list[bool] = []
    original = link_client._socket_reader

    def spy(raw: Any) -> Any:
        reader = original(raw)
        chosen.append(reader[0] is not None)
        return reader

    monkeypatch.setattr(link_client, "_socket_reader", spy)
    data = os.urandom(2 * 1024 * 1024)
    url = serve(_chunked(data) if chunked else _whole(data))
    client = LinkClient()
    with client.get(url) as response:
        assert b"".join(response.iter_blocks()) == data
    client.close()
    assert chosen == [direct]
