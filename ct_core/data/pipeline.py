"""Pipelined training loops: a future-like handle per submitted request.

Every data-plane call returns as soon as the service accepted the work, and a training sub-job runs
its requests in arrival order, so a loop may submit the step before it polls the forward/backward.
`TrainingPipeline` submits and hands back a `RequestHandle`; `.result()` polls that request once and
keeps its outcome (the value, or the exception, raised again on every call). With `workers=N` the
polls start at once on N background threads, so waiting overlaps the next submissions::

    pipe = client.pipeline(job_id)
    fb = pipe.forward_backward(frame)
    st = pipe.step(learning_rate=1e-4)
    loss = fb.result()["avg_loss"]
    steps = st.result()["global_steps"]
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Protocol


class Submitter(Protocol):
    """What a pipeline submits and polls through: the data plane (or the client, which forwards to it)."""

    def forward_backward(self, job_id: str, data: bytes | bytearray | memoryview) -> str: ...

    def step(self, job_id: str, learning_rate: float | None = None) -> str: ...

    def save(
        self, job_id: str, checkpoint_id: str | None = None, checkpoint_type: str | None = None
    ) -> str: ...

    def load(
        self,
        job_id: str,
        checkpoint_id: str,
        source_job_id: str | None = None,
        *,
        target_sub_job_id: str | None = None,
    ) -> str: ...

    def poll_request(self, job_id: str, request_id: str) -> Any: ...


_UNSET: Any = object()


class RequestHandle:
    """A submitted request: `.request_id`, `.result()` (polls once, thread-safe), `.done()`."""

    def __init__(
        self, client: Submitter, job_id: str, request_id: str, future: Future[Any] | None = None
    ) -> None:
        self.client = client
        self.job_id = job_id
        self.request_id = request_id
        self._future = future
        self._lock = threading.Lock()
        self._value: Any = _UNSET
        self._error: BaseException | None = None

    def done(self) -> bool:
        """True once the outcome is known (no request is made here)."""
        if self._future is not None and self._future.done():
            return True
        return self._value is not _UNSET or self._error is not None

    def result(self) -> Any:
        """Poll until the request finishes and return its result; later calls return the same."""
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._value is _UNSET:
                try:
                    if self._future is not None:
                        self._value = self._future.result()
                    else:
                        self._value = self.client.poll_request(self.job_id, self.request_id)
                except BaseException as error:
                    self._error = error
                    raise
            return self._value

    def __repr__(self) -> str:
        state = "done" if self.done() else "pending"
        return f"RequestHandle(job_id={self.job_id!r}, request_id={self.request_id!r}, {state})"


class TrainingPipeline:
    """Submits data-plane requests for one job without waiting; each call returns a handle.

    `workers=0` polls when `.result()` is called; `workers=N` polls in the background on a pool of N
    threads (close the pipeline, or use it as a context manager, to release them). The sub-job runs
    its requests in arrival order, so a background poll of a request starts once the request ahead
    of it has finished: polling it earlier could only hear "running", at the cost of a request to
    the service each time (a loop with two steps in flight made about three times the polls).
    """

    def __init__(self, client: Submitter, job_id: str, *, workers: int = 0) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise ValueError("workers must be an integer >= 0")
        self.client = client
        self.job_id = job_id
        self._pending: deque[RequestHandle] = deque()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="ct-poll") if workers else None
        #: The background poll of the newest request submitted (the next one waits for it).
        self._newest: Future[Any] | None = None

    def _poll_after(self, ahead: Future[Any] | None, request_id: str) -> Any:
        # The pool runs polls in submission order, so `ahead` is running or finished: no deadlock.
        if ahead is not None:
            wait([ahead])
        return self.client.poll_request(self.job_id, request_id)

    def _track(self, request_id: str) -> RequestHandle:
        future = None
        if self._pool is not None:
            future = self._pool.submit(self._poll_after, self._newest, request_id)
            self._newest = future
        handle = RequestHandle(self.client, self.job_id, request_id, future)
        self._pending.append(handle)
        return handle

    def forward_backward(self, frame: bytes | bytearray | memoryview) -> RequestHandle:
        return self._track(self.client.forward_backward(self.job_id, frame))

    def step(self, learning_rate: float | None = None) -> RequestHandle:
        return self._track(self.client.step(self.job_id, learning_rate))

    def save(self, checkpoint_type: str | None = None) -> RequestHandle:
        return self._track(self.client.save(self.job_id, checkpoint_type=checkpoint_type))

    def load(
        self, checkpoint_id: str, source_job_id: str | None = None, *, target_sub_job_id: str | None = None
    ) -> RequestHandle:
        return self._track(
            self.client.load(self.job_id, checkpoint_id, source_job_id, target_sub_job_id=target_sub_job_id)
        )

    @property
    def pending(self) -> int:
        """How many handed-out handles have not been collected by `drain` or `wait_pending` yet."""
        return len(self._pending)

    def wait_pending(self, limit: int) -> list[Any]:
        """Collect the oldest handles until at most `limit` remain; returns their results, oldest first.

        Bounds how far a loop runs ahead of the service: with `limit=2` after each step's
        forward_backward + step, step i's results are read while step i + 1 is already queued.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError("limit must be an integer >= 0")
        results = []
        while len(self._pending) > limit:
            results.append(self._pending.popleft().result())
        return results

    def drain(self) -> list[Any]:
        """Wait for every handle this pipeline handed out, oldest first; returns their results."""
        results = []
        while self._pending:
            results.append(self._pending.popleft().result())
        return results

    def close(self) -> None:
        """Stop the background pollers (waiting for the polls already running)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> TrainingPipeline:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        # On a clean exit finish what was submitted; after an error leave the rest unpolled.
        try:
            if exc_type is None:
                self.drain()
            else:
                self._pending.clear()
        finally:
            self.close()
