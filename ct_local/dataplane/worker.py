"""One worker thread per running sub-job: executes its requests one at a time, in arrival order.

The HTTP side stores a request and hands its id to :meth:`SubJobWorker.submit`; the worker takes
ids off a queue, moves each request ``pending -> running`` (a conditional update, so a cancelled
or already-run request is skipped), runs it on the sub-job's backend and stores the result. A
client can therefore pipeline: submit ``step`` before polling the forward-backward it follows.

The backend (model, optimizer) is built inside the thread, so a slow first import of torch and
transformers never blocks the event loop; requests queue up meanwhile. It is built when the first
request arrives, or at once when the sub-job has weights to load (a source checkpoint, or a state
snapshot), so a job that never sees a data-plane call never imports torch. After a request that
changes a training sub-job's state, the backend snapshots that state before the request is marked
done (``state_kinds``; see ct_local.model.training_backend), so a server killed at any point
restarts with the state of the last request it reported done, or of the one it was finishing.
Backends are chosen by sub-job type (:data:`BACKENDS`): training and sampling. Each backend gets
the data plane's :class:`~ct_local.dataplane.boards.SamplingBoards`, the in-memory channel through
which stream events, cancel flags and synced weights pass between threads.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from ct_local.dataplane.boards import SamplingBoards
from ct_local.storage import console_logs
from ct_local.storage.requests import DataPlaneStore, RequestRow
from ct_local.storage.snapshots import STATE_SNAPSHOT_MAX_BYTES
from ct_local.storage.store import JobRow, Store

log = logging.getLogger(__name__)

# How long stop() waits for a request in progress before giving up on the thread.
STOP_JOIN_S = 30.0


class Backend(Protocol):
    kinds: tuple[str, ...]

    def execute(self, row: RequestRow, frame: bytes | None) -> tuple[dict[str, Any], dict[str, Any]]: ...

    def snapshot(self) -> None: ...


BackendFactory = Callable[[Store, Path, JobRow, dict[str, Any], Callable[..., None], SamplingBoards], Backend]


def _training_backend(
    store: Store,
    state_dir: Path,
    job: JobRow,
    sub_job: dict[str, Any],
    say: Callable[..., None],
    boards: SamplingBoards,
) -> Backend:
    # The training backend plus weight-sync into this server's samplers.
    from ct_local.model.sampler import SyncingTrainingBackend

    return SyncingTrainingBackend(store, state_dir, job, sub_job, say, boards)


def _sampling_backend(
    store: Store,
    state_dir: Path,
    job: JobRow,
    sub_job: dict[str, Any],
    say: Callable[..., None],
    boards: SamplingBoards,
) -> Backend:
    from ct_local.model.sampler import SamplingBackend

    return SamplingBackend(store, state_dir, job, sub_job, say, boards)


# Sub-job types that run requests; other types get no worker (their calls answer "not supported").
BACKENDS: Mapping[str, BackendFactory] = MappingProxyType(
    {"training": _training_backend, "sampling": _sampling_backend}
)
# Which request kinds each sub-job type runs (known without building the backend).
KINDS_BY_TYPE: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "training": ("forward-backward", "step", "save", "load", "forward", "weight-sync"),
        "sampling": ("generate", "generate-stream"),
    }
)

_torch_configured = threading.Lock()
# One backend builds at a time: concurrent first imports of transformers from several threads can
# fail, and model construction seeds torch's global generator.
_BUILD_LOCK = threading.Lock()
_torch_threads_set = False


def configure_torch(threads: int) -> None:
    """Few intra-op threads: the model is tiny and the machine is shared with the test runner."""
    global _torch_threads_set
    with _torch_configured:
        if _torch_threads_set:
            return
        import torch

        torch.set_num_threads(max(1, threads))
        _torch_threads_set = True


#: Called with a result's encoded form (delivery, result_json, result_path) before its row is done.
BeforeDone = Callable[[dict[str, Any]], None]


class ResultSink(Protocol):
    def __call__(
        self,
        row: RequestRow,
        result: dict[str, Any],
        options: dict[str, Any],
        before_done: BeforeDone | None = None,
    ) -> None: ...


class SubJobWorker:
    """Runs one sub-job's requests on a private thread."""

    def __init__(
        self,
        *,
        store: Store,
        dp: DataPlaneStore,
        state_dir: Path,
        job: JobRow,
        sub_job: dict[str, Any],
        factory: BackendFactory,
        store_result: ResultSink,
        on_backend_failure: Callable[[JobRow, str], None],
        torch_threads: int,
        boards: SamplingBoards,
        eager: bool = False,
        snapshot_max_bytes: int = STATE_SNAPSHOT_MAX_BYTES,
    ) -> None:
        self.store = store
        self.dp = dp
        self.state_dir = state_dir
        self.job = job
        self.sub_job = sub_job
        self.sub_job_id = str(sub_job["sub_job_id"])
        self.factory = factory
        self.store_result = store_result
        self.on_backend_failure = on_backend_failure
        self.torch_threads = torch_threads
        self.boards = boards
        self.eager = eager
        self.snapshot_max_bytes = snapshot_max_bytes
        self.log_path = console_logs.log_path(state_dir, job.job_id, self.sub_job_id)
        self.backend: Backend | None = None
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._snapshot_on_stop = False
        self._thread = threading.Thread(target=self._run, name=f"ct-worker-{self.sub_job_id}", daemon=True)

    def say(self, message: str, level: str = "INFO") -> None:
        console_logs.append(self.log_path, f"{level} [{self.sub_job_id}] {message}")

    def start(self) -> None:
        # Work accepted before a restart goes first, in its original order.
        for row in self.dp.pending_requests(self.sub_job_id):
            self._queue.put(row.request_id)
        self._thread.start()

    def submit(self, request_id: str) -> None:
        self._queue.put(request_id)

    def stop(self, *, snapshot: bool) -> None:
        """Ask the thread to finish after the request in progress (no wait; see :meth:`join`)."""
        self._snapshot_on_stop = snapshot
        self._queue.put(None)

    def join(self, timeout: float = STOP_JOIN_S) -> None:
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            # A backend still being built has no state worth waiting for (the thread is a daemon).
            self._thread.join(timeout if self.backend is not None else min(timeout, 1.0))

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # --- the thread ---------------------------------------------------------------------------

    def _build(self, *, fail_job: bool = True) -> bool:
        try:
            with _BUILD_LOCK:
                configure_torch(self.torch_threads)
                self.backend = self.factory(
                    self.store, self.state_dir, self.job, self.sub_job, self.say, self.boards
                )
            self.say("ready for requests")
            return True
        except Exception as exc:
            log.exception("sub-job %s failed to start", self.sub_job_id)
            self.say(f"failed to start: {exc}", "ERROR")
            if fail_job:
                self.on_backend_failure(self.job, f"{self.sub_job_id} failed to start: {exc}")
            return False

    def _run(self) -> None:
        try:
            self._serve()
        finally:
            self._let_go()

    def _let_go(self) -> None:
        """Drop the backend (its model, optimizer and caches) once the thread is done with it, so
        an ended sub-job's memory goes back to the device now, not whenever a collection runs."""
        if self.backend is None:
            return
        self.backend = None
        from ct_local.model import hf  # torch is loaded already: a backend was built

        hf.free_memory()

    def _serve(self) -> None:
        if self.eager and not self._build():
            return
        while True:
            request_id = self._queue.get()
            if request_id is None:
                break
            if self.backend is None and not self._build():
                return
            self._execute(request_id)
        if not self._snapshot_on_stop:
            return
        if self.backend is None and self.boards.weights.latest(self.sub_job_id) is not None:
            # A sampler sent weights it never sampled with: build it so it can keep them.
            self._build(fail_job=False)
        if self.backend is not None:
            try:
                self.backend.snapshot()
            except Exception:
                log.exception("could not snapshot sub-job %s", self.sub_job_id)

    def _execute(self, request_id: str) -> None:
        if not self.dp.start_request(request_id):
            return
        row = self.dp.get_request(request_id)
        if row is None:
            return
        assert self.backend is not None
        began = time.perf_counter()
        self.say(f"request {request_id} {row.kind} started")
        try:
            frame = Path(row.input_path).read_bytes() if row.input_path else None
            result, options = self.backend.execute(row, frame)
            self.store_result(row, result, options, self._persist_hook(row, result))
        except Exception as exc:
            message = str(exc) or type(exc).__name__
            if not isinstance(exc, ValueError):
                # Not a refused request but a fault in the backend: keep the traceback in the log.
                log.error("request %s failed:\n%s", request_id, traceback.format_exc())
                message = f"{type(exc).__name__}: {message}"
            self.dp.finish_request(request_id, "failed", error=message)
            self.say(f"request {request_id} {row.kind} failed: {message}", "ERROR")
        else:
            elapsed_ms = (time.perf_counter() - began) * 1000
            summary = ""
            if "avg_loss" in result:
                summary = f" avg_loss={result['avg_loss']:.6f}"
            elif "global_steps" in result:
                summary = f" global_steps={result['global_steps']}"
            self.say(f"request {request_id} {row.kind} done in {elapsed_ms:.1f} ms{summary}")
        finally:
            if row.input_path:
                Path(row.input_path).unlink(missing_ok=True)

    def _persist_hook(self, row: RequestRow, result: dict[str, Any]) -> BeforeDone | None:
        """For a request that changed the training state: snapshot it, then let the row be done."""
        backend = self.backend
        if row.kind not in getattr(backend, "state_kinds", ()):
            return None

        def persist(encoded: dict[str, Any]) -> None:
            try:
                backend.persist(row, encoded, result, self.snapshot_max_bytes)  # type: ignore[union-attr]
            except Exception as exc:
                # The request did run; only the snapshot is missing, which start-up notices after a crash.
                log.exception(
                    "could not snapshot sub-job %s after request %s", self.sub_job_id, row.request_id
                )
                self.say(
                    f"could not snapshot the training state after request {row.request_id}: {exc}", "WARNING"
                )

        return persist
