"""Shared pytest fixtures: a running ct_local server and an isolated configuration home.

pytest loads this module on its own wherever the ct-testing distribution is installed (its
pytest11 entry point), so the repository's tests, every plugin's tests and a third party's plugin
tests share the same fixtures with no conftest line. Fixtures:

- ``local_server``: one server per test session (per xdist worker), no auth, fast lifecycle.
- ``local_server_factory``: start servers with tokens, settings or a given state dir; each
  has ``.stop()`` and ``.restart()``, and all are stopped when the test ends
  (``module_local_server_factory`` / ``session_local_server_factory``: the same, stopped when the
  module / the session ends).
- ``ct_home``: HOME, XDG dirs and the Snowflake config dir pointed at a temp folder, and every
  ``CORTEX_TRAINING_*`` / ``CT_*`` / ``SNOWFLAKE_*`` variable cleared.

Helpers for HTTP tests: ``create_job`` posts a create-job body and returns the id;
``wait_for_job_status`` polls a job until it reaches one of some statuses (failing the test on a
terminal one it was not waiting for, or after a time limit).
``ct_testing.wait_until`` (module ``ct_testing.wait``) waits for any condition the same way.

Helpers for test suites that drive the CLI: ``run_ct`` runs the installed ``ct`` console script
with only the plugins asked for and returns a ``CtResult``; ``ct_runner(plugins)`` binds those.

Servers run as subprocesses (``python -m ct_local serve --port 0 --ready-file ...``), so tests
talk real HTTP over loopback and a restart really is a new process on the same state dir.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from ct_testing.wait import wait_until

# How long a server may take to start before the fixture gives up (imports dominate, and a loaded
# 2-core machine running two test workers can take a minute), and how long a graceful stop may take
# before it becomes a SIGKILL (a stop snapshots the training state). Both only bound a hang.
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0
DEFAULT_DATABASE = "CT_TEST_DB"
DEFAULT_SCHEMA = "PUBLIC"
DEFAULT_ENDPOINT = "cortex-training"

# Settings of the session server: every lifecycle step short, so jobs run in well under a second.
#: The GPU ceiling of the session's shared server (see `local_server`).
SHARED_SERVER_GPUS = 999
FAST_SETTINGS: dict[str, Any] = {
    "pending_delay_s": 0.02,
    "placing_delay_s": 0.02,
    "initializing_delay_s": 0.02,
    "cancelling_delay_s": 0.02,
    "tick_s": 0.01,
}


def _token_args(tokens: Mapping[str, str] | Sequence[str] | None) -> tuple[list[str], dict[str, str]]:
    from ct_local.settings import parse_token_specs

    if not tokens:
        return [], {}
    specs = [f"{t}={r}" for t, r in tokens.items()] if isinstance(tokens, Mapping) else list(tokens)
    return [arg for spec in specs for arg in ("--token", spec)], parse_token_specs(specs)


@dataclass
class LocalServer:
    """A ct_local server subprocess; ``base_url`` stays the same across :meth:`restart`."""

    state_dir: Path
    tokens: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = 0
    base_url: str = ""
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    # --- process control ----------------------------------------------------------------------

    def start(self) -> LocalServer:
        if self.process is not None and self.process.poll() is None:
            return self
        ready = self.state_dir.parent / f"{self.state_dir.name}.ready.json"
        ready.unlink(missing_ok=True)
        token_args, _ = _token_args(self.tokens)
        command = [
            sys.executable,
            "-m",
            "ct_local",
            "serve",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--state-dir",
            str(self.state_dir),
            "--ready-file",
            str(ready),
            "--settings-json",
            json.dumps(self.settings),
            *token_args,
            *self.extra_args,
        ]
        self.log_path = self.state_dir.parent / f"{self.state_dir.name}.log"
        env = {k: v for k, v in os.environ.items() if k != "CT_LOCAL_SETTINGS"}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"ct_local server exited with {self.process.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"ct_local server did not start within {START_TIMEOUT_S}s:\n{self.log()}")
            time.sleep(0.02)
        info = json.loads(ready.read_text(encoding="utf-8"))
        self.base_url = info["base_url"]
        # Keep the port for restarts so clients built on base_url keep working.
        self.port = int(self.base_url.rsplit(":", 1)[1])
        self._wait_healthy(deadline)
        return self

    def _wait_healthy(self, deadline: float) -> None:
        while True:
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"ct_local server never answered /healthz:\n{self.log()}")
            time.sleep(0.02)

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        """Stop the server with ``sig`` and return its exit code (None if it was not running)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.process = None
        return code

    def restart(self) -> LocalServer:
        self.stop()
        return self.start()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    def log_mark(self) -> int:
        """Where the log ends now: pass it to :meth:`log_since` to read only what comes after.

        Tests sharing one server check the lines written while they ran, not what earlier tests
        left in the log."""
        if self.log_path is None or not self.log_path.exists():
            return 0
        return self.log_path.stat().st_size

    def log_since(self, mark: int) -> str:
        """Everything the server logged after ``mark`` (a :meth:`log_mark`), whole."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as handle:
            handle.seek(mark)
            return handle.read().decode("utf-8", errors="replace")

    # --- conveniences for tests ---------------------------------------------------------------

    def prefix(
        self, database: str = DEFAULT_DATABASE, schema: str = DEFAULT_SCHEMA, endpoint: str = DEFAULT_ENDPOINT
    ) -> str:
        """The per-schema URL prefix (`/api/v2/databases/{db}/schemas/{schema}/{endpoint}`) on this server."""
        return f"{self.base_url}/api/v2/databases/{database}/schemas/{schema}/{endpoint}"

    def http(self, token: str | None = None, **kwargs: Any) -> httpx.Client:
        """A plain httpx client for this server, sending ``token`` as a bearer token when given."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30.0, **kwargs)

    @property
    def admin_headers(self) -> dict[str, str]:
        """Headers for the ``/_ct/`` admin routes: the server's first token, when it has tokens."""
        return self._admin_headers(None)

    def _admin_headers(self, token: str | None) -> dict[str, str]:
        # The levers on one job act only for the job's own role: ``token`` signs as that role.
        chosen = token or next(iter(self.tokens), None)
        return {"Authorization": f"Bearer {chosen}"} if chosen else {}

    def set_faults(self, *rules: Mapping[str, Any]) -> None:
        """Add fault rules at runtime (see ct_local.http.faults for the rule keys)."""
        response = httpx.post(
            f"{self.base_url}/_ct/faults", json=list(rules), headers=self.admin_headers, timeout=10.0
        )
        response.raise_for_status()

    def clear_faults(self) -> None:
        httpx.delete(
            f"{self.base_url}/_ct/faults", headers=self.admin_headers, timeout=10.0
        ).raise_for_status()

    def force_status(
        self,
        job_id: str,
        status: str,
        reason: str = "",
        reason_details: str = "",
        *,
        token: str | None = None,
    ) -> dict[str, Any]:
        """Put a job in any status (for example failed or terminated), bypassing the lifecycle.

        On a server with tokens, ``token`` must be one of the job's role (the first token when
        not given): another role's job answers 404."""
        response = httpx.post(
            f"{self.base_url}/_ct/jobs/{job_id}/status",
            json={"status": status, "reason": reason, "reason_details": reason_details},
            headers=self._admin_headers(token),
            timeout=10.0,
        )
        response.raise_for_status()
        return response.json()

    def add_checkpoint(self, job_id: str, *, token: str | None = None, **fields: Any) -> dict[str, Any]:
        """Record a checkpoint for a job (``checkpoint_id``, ``global_steps``, ``checkpoint_type``,
        ``avg_loss``, ``files`` as a name -> text mapping written under the state dir), signed with
        ``token`` as :meth:`force_status` is."""
        response = httpx.post(
            f"{self.base_url}/_ct/jobs/{job_id}/checkpoints",
            json=fields,
            headers=self._admin_headers(token),
            timeout=10.0,
        )
        response.raise_for_status()
        return response.json()


ServerFactory = Callable[..., LocalServer]


@pytest.fixture(scope="session")
def local_server(session_local_server_factory: ServerFactory) -> LocalServer:
    """One running server for the whole session: no auth, fast lifecycle, shared state.

    Many modules leave jobs running on it, so its account holds 999 GPUs of every hardware type
    rather than 64: later modules' jobs still start, and a 1000-GPU job still never fits.
    """
    from ct_local.settings import KNOWN_HARDWARE

    shared = {name: {"max_total_gpus": SHARED_SERVER_GPUS} for name in KNOWN_HARDWARE}
    return session_local_server_factory(settings={"capacity": shared})


@contextlib.contextmanager
def _server_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerFactory]:
    started: list[LocalServer] = []

    def factory(
        tokens: Mapping[str, str] | Sequence[str] | None = None,
        settings: Mapping[str, Any] | None = None,
        state_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        start: bool = True,
    ) -> LocalServer:
        _, token_map = _token_args(tokens)
        server = LocalServer(
            state_dir=state_dir or tmp_path_factory.mktemp("ct-local") / "state",
            tokens=token_map,
            settings={**FAST_SETTINGS, **(settings or {})},
            extra_args=list(extra_args),
        )
        started.append(server)
        return server.start() if start else server

    try:
        yield factory
    finally:
        for server in started:
            server.stop()


@pytest.fixture
def local_server_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerFactory]:
    """Start servers shaped for one test; every one started is stopped at teardown.

    ``factory(tokens=None, settings=None, state_dir=None, extra_args=(), start=True)``: tokens is a
    ``{token: role}`` mapping or a list of ``TOKEN`` / ``TOKEN=ROLE`` strings; settings are JSON
    overrides layered on the fast defaults.
    """
    with _server_factory(tmp_path_factory) as factory:
        yield factory


@pytest.fixture(scope="module")
def module_local_server_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerFactory]:
    """Like ``local_server_factory``, but the servers live for the whole test module (fewer starts)."""
    with _server_factory(tmp_path_factory) as factory:
        yield factory


@pytest.fixture(scope="session")
def session_local_server_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerFactory]:
    """Like ``local_server_factory``, for session-wide servers of a test folder (model imports paid once)."""
    with _server_factory(tmp_path_factory) as factory:
        yield factory


# Prefixes of environment variables that change how ct and the Snowflake connector resolve a
# connection; none may leak from the developer's shell into a test.
_ISOLATED_ENV_PREFIXES = ("CORTEX_TRAINING_", "SNOWFLAKE_", "CT_")


@pytest.fixture
def ct_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME with its own XDG and Snowflake config dirs; connection env vars cleared."""
    home = tmp_path / "home"
    for sub in (".config", ".local/share", ".cache", ".snowflake"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    for name in list(os.environ):
        if name.startswith(_ISOLATED_ENV_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("SNOWFLAKE_HOME", str(home / ".snowflake"))
    return home


# --- jobs over plain HTTP ------------------------------------------------------------------------------

#: Statuses a job never leaves.
TERMINAL_STATUSES = frozenset({"failed", "cancelled", "terminated", "succeeded", "completed"})


def create_job(http: httpx.Client, prefix: str, sub_jobs: Sequence[Mapping[str, Any]], **fields: Any) -> str:
    """POST a create-job body under ``prefix``; the new job's id (asserts a 200 answer)."""
    response = http.post(prefix, json={"sub_job_configs": list(sub_jobs), **fields})
    assert response.status_code == 200, response.text
    return str(response.json()["job_id"])


def wait_for_job_status(
    http: httpx.Client, url: str, statuses: set[str] | frozenset[str], *, limit_s: float = 120.0
) -> dict[str, Any]:
    """Poll ``GET url`` until the job's status is in ``statuses``; the record. Fails the test when
    the job ends in another status, or after ``limit_s`` (only a hang gets near it)."""
    last = ""

    def reached() -> dict[str, Any] | None:
        nonlocal last
        record = http.get(url).raise_for_status().json()
        last = status = record["status"]
        if status in statuses:
            return dict(record)
        if status in TERMINAL_STATUSES:
            pytest.fail(f"job ended {status!r} while waiting for {sorted(statuses)}: {record}")
        return None

    return wait_until(
        reached,
        timeout=limit_s,
        interval=0.01,
        message=lambda: f"job stayed {last!r}, expected one of {sorted(statuses)}",
    )


# --- running the `ct` console script ----------------------------------------------------------------

CT_SCRIPT = str(Path(sys.executable).with_name("ct"))


class CtResult:
    """A finished `ct` run: exit code, stdout, stderr, and stdout parsed as JSON on demand."""

    def __init__(self, completed: subprocess.CompletedProcess[str]) -> None:
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.args = completed.args

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    def __repr__(self) -> str:
        return (
            f"CtResult(rc={self.returncode}, args={self.args!r}, stdout={self.stdout[-1500:]!r}, "
            f"stderr={self.stderr[-2000:]!r})"
        )


def run_ct(
    *args: str,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    plugins: str = "",
    columns: str = "120",
    timeout: float = 120,
) -> CtResult:
    """Run ``ct ARGS...`` in a subprocess with only ``plugins`` (a CT_PLUGINS value) loaded."""
    environment = {**os.environ, "COLUMNS": columns, "CT_PLUGINS": plugins, **(env or {})}
    completed = subprocess.run(
        [CT_SCRIPT, *args],
        input=input,
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
        check=False,
    )
    return CtResult(completed)


def ct_runner(plugins: str, *, timeout: float = 120) -> Callable[..., CtResult]:
    """``run_ct`` with a plugin selection bound: the `run_ct` fixture of a plugin's own tests."""

    def run(*args: str, input: str | None = None, plugins: str = plugins) -> CtResult:
        return run_ct(*args, input=input, plugins=plugins, timeout=timeout)

    return run
