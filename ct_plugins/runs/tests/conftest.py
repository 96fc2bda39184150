"""Shared pieces of the runs-service tests: a corpus built in code, a webhook receiver, specs, a
module's own server and SDK client of it, `ct runs serve` processes."""

from __future__ import annotations

import http.server
import json
import os
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ct_testing import wait_until

#: Words the synthetic corpus draws from; random 14-word rows share no 5-word shingle in practice,
#: so the leakage gates pass unless a test plants a duplicate.
WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "red",
    "green",
    "blue",
    "black",
    "white",
    "amber",
    "cyan",
    "river",
    "stone",
    "cloud",
    "field",
    "forest",
    "ocean",
    "mountain",
    "valley",
    "desert",
    "island",
)

#: Settings of every server these tests start: runs train one at a time, lifecycles are fast.
RUNS_SETTINGS: dict[str, Any] = {"runs_concurrency": 1}

WEBHOOK_SECRET = "whsec-test-0123456789"

#: How the tests' SDK clients poll a run or a build: often, so a wait ends soon after its end.
FAST_POLLS: dict[str, float] = {"poll_interval": 0.02, "poll_max_interval": 0.25}


def corpus_lines(rows: int = 120, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    lines = []
    for _ in range(rows):
        text = " ".join(rng.choice(WORDS) for _ in range(14))
        lines.append({"text": text, "topic": rng.choice(["sky", "sea"])})
    return lines


def write_corpus(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def small_spec(dataset_id: str, **trainer: Any) -> dict[str, Any]:
    """A short run on the tiny local model: 128-token rows, 4 rows per step."""
    return {
        "dataset_id": dataset_id,
        "overrides": {"max_seq_len": 128},
        "trainer": {"epochs": 2, "batch_tokens": 512, "checkpoint_every_steps": 5, **trainer},
    }


def fast_client(base_url: str, database: str, schema: str = "PUBLIC", **options: Any) -> Any:
    """An SDK client of the server at ``base_url`` in ``database.schema`` that polls with
    :data:`FAST_POLLS` (``options`` add to them or replace them); close it, or use it in ``with``."""
    from ct_core import CortexTrainingClient

    return CortexTrainingClient(
        base_url=base_url, database=database, schema=schema, **{**FAST_POLLS, **options}
    )


def fault_hit(server: Any) -> bool:
    """Whether a fault rule set on ``server`` (``server.set_faults``) has acted on a request yet."""
    import httpx

    answer = httpx.get(f"{server.base_url}/_ct/faults", headers=server.admin_headers, timeout=10)
    answer.raise_for_status()
    return any(rule["hits"] for rule in answer.json()["rules"])


#: How long a server holds the step a test cancels at: ample time to send the cancel, which the run
#: then reads at its next step boundary (the test waits for the hold to begin, not a time).
CANCEL_HOLD_S = 10.0


def hold_past_checkpoint(server: Any, client: Any, run_id: str, delay_s: float) -> None:
    """Once run ``run_id`` (read through ``client``) has saved a checkpoint, ``server`` holds each
    training step for ``delay_s``; returns when the run's next step is held, inside a segment past
    its first checkpoint. The hold lasts until ``server.clear_faults()``."""
    wait_until(
        lambda: client.runs.get(run_id)["checkpoints"],
        timeout=300,
        interval=0.05,
        message=f"run {run_id} saved no checkpoint",
    )
    server.set_faults({"path": "/step$", "method": "POST", "action": "delay", "delay_s": delay_s})
    wait_until(
        lambda: fault_hit(server),
        timeout=300,
        interval=0.01,
        message=lambda: str(client.runs.get(run_id)),
    )


def cancel_mid_run(server: Any, client: Any, run_id: str) -> dict[str, Any]:
    """Cancel run ``run_id`` inside a segment past its first checkpoint (``server`` trains it,
    ``client`` reads and cancels it); the cancelled run."""
    hold_past_checkpoint(server, client, run_id, CANCEL_HOLD_S)
    client.runs.cancel(run_id)
    server.clear_faults()
    run = client.runs.wait(run_id, timeout=600)
    assert run["status"] == "cancelled", run
    return dict(run)


@pytest.fixture(scope="module")
def server(module_local_server_factory: Any) -> Iterator[Any]:
    """The module's own local server with the runs service embedded (:data:`RUNS_SETTINGS`).

    CT_PLUGINS is unset while the module runs, so the server and the SDK in this process load every
    plugin whatever the shell says. A module that needs other settings defines its own ``server``.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("CT_PLUGINS", raising=False)
        yield module_local_server_factory(settings=RUNS_SETTINGS)


@pytest.fixture(scope="module")
def client(request: pytest.FixtureRequest, server: Any) -> Iterator[Any]:
    """A :func:`fast_client` of ``server`` in the module's ``DATABASE`` and ``SCHEMA`` (PUBLIC when
    the module names none), for the whole module."""
    database = getattr(request.module, "DATABASE", None)
    if not isinstance(database, str):
        pytest.fail(f"{request.module.__name__} uses the client fixture: it must set DATABASE")
    with fast_client(server.base_url, database, getattr(request.module, "SCHEMA", "PUBLIC")) as made:
        yield made


@pytest.fixture(scope="module")
def client_for(server: Any) -> Iterator[Any]:
    """``client_for(owner, database, schema)``: the module's :func:`fast_client` of ``server`` in that
    database and schema, one a database and schema (as a runs engine or finalizer asks for them)."""
    clients: dict[tuple[str, str], Any] = {}
    lock = threading.Lock()

    def make(owner: str, database: str, schema: str) -> Any:
        with lock:
            key = (database.upper(), schema.upper())
            if key not in clients:
                clients[key] = fast_client(server.base_url, database, schema)
            return clients[key]

    yield make
    for made in clients.values():
        made.close()


@pytest.fixture(scope="module")
def trained(server: Any, client: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The record and state (as the service's store holds them) of a run that ``server``'s own
    service trained to its end, validating every 4 steps: a copy of it stands for a run a test
    finalizes or registers."""
    from ct_runs.store import Store

    path = write_corpus(tmp_path_factory.mktemp("corpus") / "corpus.jsonl", corpus_lines())
    dataset = client.datasets.build(path, label_fields=["topic"], seed=1, wait=True, timeout=600)
    assert dataset["status"] == "succeeded", dataset
    spec = small_spec(dataset["dataset_id"], epochs=1, val_every_steps=4)
    run = client.runs.wait(client.runs.start(spec)["run_id"], timeout=600)
    assert run["status"] == "succeeded", run.get("error")
    service_store = Store(f"sqlite:///{server.state_dir / 'runs-service' / 'runs.sqlite3'}")
    try:
        row = service_store.run_row(run["run_id"])
        return {"record": json.loads(row.record), "state": json.loads(row.state)}
    finally:
        service_store.close()


@dataclass
class Receiver:
    """A real HTTP server that records every webhook it receives."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def received(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.requests)


@pytest.fixture(scope="module")
def webhook_receiver() -> Iterator[Receiver]:
    receiver: Receiver

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            with receiver.lock:
                receiver.requests.append({"headers": dict(self.headers.items()), "body": body})
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}/hooks/ct")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Seen:
    """One request a :class:`LossyProxy` received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


#: Headers of one hop, which the proxy does not pass on (it sends the body on as it was read).
_HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host"})


class LossyProxy:
    """A real HTTP server in front of another one that passes each request on and its answer back,
    except that it can lose answers: a request for which ``lose(seen)`` is true does reach the
    server behind, but its caller gets the connection closed instead of the answer, as when a
    gateway or the network drops it. ``before(seen)`` runs before a request is passed on, so a test
    can make something happen between two attempts of one call. ``requests`` holds what came in."""

    def __init__(self, upstream: str) -> None:
        import httpx

        self.upstream = upstream.rstrip("/")
        self.requests: list[Seen] = []
        self.lose: Any = lambda seen: False
        self.before: Any = lambda seen: None
        self.lock = threading.Lock()
        self._http = httpx.Client(timeout=120.0)
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _relay(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                seen = Seen(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length) if length else b"",
                )
                with proxy.lock:
                    proxy.requests.append(seen)
                proxy.before(seen)
                headers = {k: v for k, v in seen.headers.items() if k not in _HOP_HEADERS}
                answer = proxy._http.request(
                    seen.method, proxy.upstream + seen.path, headers=headers, content=seen.body
                )
                if proxy.lose(seen):
                    # The server behind has answered; the caller gets a closed connection instead.
                    self.close_connection = True
                    return
                self.send_response(answer.status_code)
                for key, value in answer.headers.items():
                    if key.lower() not in _HOP_HEADERS and key.lower() != "content-encoding":
                        self.send_header(key, value)
                self.send_header("content-length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_DELETE = do_PUT = _relay

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def seen(self, method: str, path_end: str) -> list[Seen]:
        with self.lock:
            return [
                r for r in self.requests if r.method == method and r.path.split("?")[0].endswith(path_end)
            ]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._http.close()


@pytest.fixture
def lossy_proxy() -> Iterator[Any]:
    """``lossy_proxy(upstream_base_url)``: a :class:`LossyProxy` in front of that server."""
    proxies: list[LossyProxy] = []

    def start(upstream: str) -> LossyProxy:
        proxies.append(LossyProxy(upstream))
        return proxies[-1]

    try:
        yield start
    finally:
        for proxy in proxies:
            proxy.close()


# --- `ct runs serve` processes ------------------------------------------------------------------------

#: Only bounds a hang: a `ct runs serve` process imports DBOS and the service before it is ready.
SERVE_START_TIMEOUT_S = 120


def ct_command() -> list[str]:
    """The `ct` console script of this environment (``python -m ct_cli`` where there is none)."""
    script = Path(sys.executable).with_name("ct")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ct_cli"]


class ServeProcess:
    """One `ct runs serve` process, its ready file and its log in ``folder``.

    ``args`` is its command line but ``--ready-file``; it loads every plugin and takes ``token`` as
    its service token (CT_RUNS_SERVICE_TOKEN)."""

    def __init__(self, name: str, args: list[str], folder: Path, *, token: str) -> None:
        self.name = name
        self.ready = folder / f"{name}.ready.json"
        self.log = folder / f"{name}.log"
        env = {**os.environ, "CT_RUNS_SERVICE_TOKEN": token}
        env.pop("CT_PLUGINS", None)
        with self.log.open("ab") as log:
            self.popen = subprocess.Popen(
                [*args, "--ready-file", str(self.ready)], stdout=log, stderr=subprocess.STDOUT, env=env
            )

    def wait_ready(self) -> dict[str, Any]:
        """Until the process has written its ready file; what it wrote (``base_url``, ``pid``)."""

        def started() -> bool:
            assert self.popen.poll() is None, f"{self.name} exited:\n{self.log.read_text()}"
            return self.ready.exists()

        wait_until(
            started,
            timeout=SERVE_START_TIMEOUT_S,
            interval=0.05,
            message=lambda: f"{self.name} did not start:\n{self.log.read_text()}",
        )
        return dict(json.loads(self.ready.read_text()))

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
            self.popen.wait(timeout=30)

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass(frozen=True)
class Kit:
    """The helpers above as one fixture (test modules cannot import conftest under importlib mode)."""

    settings: dict[str, Any]
    secret: str

    corpus_lines = staticmethod(corpus_lines)
    write_corpus = staticmethod(write_corpus)
    small_spec = staticmethod(small_spec)
    client = staticmethod(fast_client)
    fault_hit = staticmethod(fault_hit)
    hold_past_checkpoint = staticmethod(hold_past_checkpoint)
    cancel_mid_run = staticmethod(cancel_mid_run)
    ct = staticmethod(ct_command)
    ServeProcess = ServeProcess


@pytest.fixture(scope="session")
def kit() -> Kit:
    return Kit(settings=dict(RUNS_SETTINGS), secret=WEBHOOK_SECRET)


# --- a real Postgres, started from the Debian binaries in a temp dir -------------------------------------


#: Starts of the throwaway cluster, each on a newly probed port, before the fixture gives up.
PG_START_ATTEMPTS = 5


def _postgres_bin() -> Path | None:
    import glob

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A throwaway Postgres cluster; its URL. Run as the `postgres` user when the tests run as root
    (initdb refuses root)."""
    import os
    import pwd
    import shutil
    import socket
    import subprocess
    import tempfile

    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("the PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are not installed")
    user: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
            user = "postgres"
        except KeyError:
            user = "nobody"
    # Under /tmp itself: pytest's own temp folders are private to root, out of the server user's reach.
    root = Path(tempfile.mkdtemp(prefix="ct-runs-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in (root, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    run: dict[str, Any] = {"user": user} if user is not None else {}
    subprocess.run(
        [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "ct", "--no-sync", "-E", "UTF8"],
        check=True,
        capture_output=True,
        **run,
    )
    log = root / "server.log"
    # A probed port is free when the probe lets it go, yet another process may bind it before the
    # server does: start again on another port when that happened.
    for attempt in range(1, PG_START_ATTEMPTS + 1):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        before = log.stat().st_size if log.exists() else 0
        options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        start = [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-t", "180"]
        started = subprocess.run(
            [*start, "-w", "start"],
            capture_output=True,
            text=True,
            **run,
        )
        if started.returncode == 0:
            break
        said = ""
        if log.exists():
            with log.open("rb") as file:
                file.seek(before)
                said = file.read().decode(errors="replace")
        if "already in use" not in said or attempt == PG_START_ATTEMPTS:
            output = started.stdout + started.stderr
            raise RuntimeError(f"PostgreSQL did not start on port {port}:\n{output}{said}")
    try:
        yield f"postgresql://ct@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            **run,
        )
        shutil.rmtree(root, ignore_errors=True)
