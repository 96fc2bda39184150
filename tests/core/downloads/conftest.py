"""Fixtures for download tests: a scriptable presigned-link server over real loopback HTTP.

`LinkServer` serves byte blobs the way an object store serves presigned links, and can be told to
misbehave in the ways a checkpoint download must survive: ignore Range, refuse a link as expired,
drop the connection midway, or stall after some bytes (so a test can SIGKILL a downloader).
"""

from __future__ import annotations

import http.server
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ct_testing
import pytest


@dataclass
class LinkServer:
    blobs: dict[str, bytes] = field(default_factory=dict)
    ignore_range: bool = False
    #: Link "generations" refused with 403: a link carries ?gen=N and a re-export hands out N+1.
    expired_generations: set[int] = field(default_factory=set)
    #: Drop the connection after this many body bytes, for the next N GETs.
    drop_after: int | None = None
    drops_left: int = 0
    #: Stall forever (until stop) after this many body bytes.
    stall_after: int | None = None
    generation: int = 0
    exports: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    _server: Any = None
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def export(self, names: dict[str, Any] | None = None, expires_at: str = "2999-01-01T00:00:00Z") -> dict:
        """An export answer for every blob; ``names`` overrides listed file entries."""
        self.exports += 1
        files = [
            {"filename": name, "url": f"{self.base}/f/{name}?gen={self.generation}", "size_bytes": len(data)}
            for name, data in self.blobs.items()
        ]
        self.generation += 1
        return {
            "checkpoint_id": "cp",
            "files": names if names is not None else files,
            "expires_at": expires_at,
        }

    def handle(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        match = re.fullmatch(r"/f/([^?]+)\?gen=(\d+)", handler.path)
        self.requests.append({"path": handler.path, "range": handler.headers.get("Range")})
        if match is None or match.group(1) not in self.blobs:
            handler.send_response(404)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if int(match.group(2)) in self.expired_generations:
            handler.send_response(403)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        data = self.blobs[match.group(1)]
        start = 0
        wanted = handler.headers.get("Range")
        if wanted and not self.ignore_range:
            start = int(re.fullmatch(r"bytes=(\d+)-", wanted).group(1))  # type: ignore[union-attr]
            if start >= len(data):
                handler.send_response(416)
                handler.send_header("Content-Range", f"bytes */{len(data)}")
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            handler.send_response(206)
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            handler.send_response(200)
        body = data[start:]
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        limit = len(body)
        if self.drops_left > 0 and self.drop_after is not None:
            self.drops_left -= 1
            limit = min(limit, self.drop_after)
        stall = self.stall_after
        sent = 0
        while sent < limit:
            piece = body[sent : min(limit, sent + 4096)]
            if stall is not None and sent + len(piece) > stall:
                piece = piece[: max(0, stall - sent)]
                handler.wfile.write(piece)
                handler.wfile.flush()
                while not self._stop.wait(0.05):
                    pass
                return
            handler.wfile.write(piece)
            sent += len(piece)
        handler.wfile.flush()
        if limit < len(body):
            handler.close_connection = True

    def start(self) -> LinkServer:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                owner.handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def link_server() -> Iterator[LinkServer]:
    server = LinkServer().start()
    try:
        yield server
    finally:
        server.stop()


def _wait_until(predicate: Any, limit_s: float = 60.0) -> None:
    ct_testing.wait_until(predicate, timeout=limit_s, message="condition not reached")


@pytest.fixture
def wait_until() -> Any:
    """``wait_until(predicate, limit_s=60)``: poll until true; fail after the limit (only on a hang)."""
    return _wait_until


class FakeCursor:
    """Follows the Connector cursor interface ct uses: execute(sql) -> self, fetchall(), close()."""

    def __init__(self, connection: FakeConnection) -> None:
        self.connection = connection
        self._rows: list[tuple[Any, ...]] = []

    def execute(self, statement: str) -> FakeCursor:
        connection = self.connection
        with connection.lock:
            connection.statements.append(statement)
            connection.active += 1
            connection.peak = max(connection.peak, connection.active)
        try:
            if connection.latency_s:
                time.sleep(connection.latency_s)
            with connection.lock:
                planned = next((f for f in connection.failures if statement.startswith(f[0])), None)
                if planned is not None:
                    connection.failures.remove(planned)
            if planned is not None:
                raise planned[1]
            literals = [m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", statement)]
            prefix = f"snow://experiment/{connection.experiment}/versions/{connection.run}/"
            if statement.startswith("LIST "):
                rel = literals[0][len(prefix) :]
                base = connection.tree / rel
                self._rows = [
                    (
                        f"/versions/{connection.run}/{p.relative_to(connection.tree).as_posix()}",
                        p.stat().st_size,
                        "md5",
                        "",
                    )
                    for p in sorted(base.rglob("*"))
                    if p.is_file()
                ]
            elif statement.startswith("GET "):
                rel = literals[0][len(prefix) :]
                source = connection.tree / rel
                target_dir = Path(literals[1].removeprefix("file://"))
                if source.is_file():
                    (target_dir / source.name).write_bytes(source.read_bytes())
                self._rows = [(source.name, "DOWNLOADED")]
            else:
                raise ValueError(f"unexpected statement {statement!r}")
            return self
        finally:
            with connection.lock:
                connection.active -= 1

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def close(self) -> None:
        self.connection.cursors_closed += 1


@dataclass
class FakeConnection:
    """A Connector session over a real directory laid out like a run's stage."""

    tree: Path
    experiment: str = "DB.SCHEMA.EXP"
    run: str = "RUN_1"
    latency_s: float = 0.0
    statements: list[str] = field(default_factory=list)
    active: int = 0
    peak: int = 0
    cursors_closed: int = 0
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: (statement prefix, error): the next statement starting with the prefix raises the error.
    failures: list[tuple[str, BaseException]] = field(default_factory=list)

    def cursor(self) -> FakeCursor:
        assert not self.closed, "cursor() on a closed session"
        return FakeCursor(self)

    def close(self) -> None:
        self.closed = True

    def is_closed(self) -> bool:
        return self.closed


@pytest.fixture
def fake_connection(tmp_path: Path) -> FakeConnection:
    tree = tmp_path / "stage"
    tree.mkdir()
    return FakeConnection(tree)


# --------------------------------------------------------------------------------------------------
# A job on a real local server whose run folder a test fills with chunks of its own
# --------------------------------------------------------------------------------------------------

ARTIFACTS_DB = "CT_DOWNLOADS_DB"
ARTIFACTS_TRAINING = {
    "job_type": "training",
    "model_name": "Qwen/Qwen3-0.6B",
    "training_config": {"n_gpus": 1},
}


@dataclass
class RunJob:
    """A running training job, its client, and the folder its run's artifacts live in."""

    client: Any
    job_id: str
    root: Path

    @property
    def sub(self) -> str:
        return f"{self.job_id}:training:0"

    def stage(self, folder: str, name: str, text: str) -> Path:
        """Stage ``text`` gzipped as ``<folder>/<training sub-job>/<name>`` in the run."""
        import gzip

        target = self.root / folder / self.sub / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.compress(text.encode()))
        return target


@pytest.fixture(scope="module")
def artifacts_server(module_local_server_factory: Any) -> Any:
    """A local server whose uploader runs once an hour: a run holds only what a test stages."""
    return module_local_server_factory(settings={"artifact_upload_interval_s": 3600})


@pytest.fixture
def run_job(artifacts_server: Any) -> Iterator[RunJob]:
    """A running training job (its own schema) with nothing in its run yet."""
    import uuid

    from ct_core import CortexTrainingClient
    from ct_local.http.artifacts import run_root

    schema = "S_" + uuid.uuid4().hex[:10].upper()
    with CortexTrainingClient(
        base_url=artifacts_server.base_url,
        database=ARTIFACTS_DB,
        schema=schema,
        poll_interval=0.02,
        poll_timeout=60,
    ) as client:
        job_id = str(client.create_job_from_body({"sub_job_configs": [ARTIFACTS_TRAINING]})["job_id"])
        client.wait_for_job(job_id)
        run = client.get_experiment_run(job_id)
        root = run_root(Path(artifacts_server.state_dir), run["experiment_name"], run["experiment_run_name"])
        yield RunJob(client, job_id, root)
