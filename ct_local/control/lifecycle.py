"""The job state machine of the local server: statuses, dwell times, timeouts and cancels.

``pending -> placing -> initializing -> running`` with a configurable dwell time in each state,
``cancelling -> cancelled`` after a cancel, ``failed`` with reason ``pending_timeout`` for a job
that waited too long for GPUs, and ``terminated`` with reason ``idle_timeout`` for a running job
left idle. Every transition is computed from timestamps stored in SQLite, so after a restart the
loop simply carries on from what the database says: nothing about a job lives only in memory.

Listeners registered with :meth:`Lifecycle.add_listener` hear every transition; the data plane
(ct_local.dataplane.training_plane) uses them to start a worker when a job runs and stop it when
the job ends.

The loop does not poll: each pass returns when a job next needs it (the end of a dwell time, a
pending timeout, an idle timeout), and the loop sleeps until then, or until :meth:`Lifecycle.wake`
(a job created, cancelled or moved, which may free GPUs for a pending one) calls it earlier. An idle
server thus costs nothing here however many jobs it holds; a pass every ``IDLE_RECHECK_S`` at most
covers a change nobody announced (a row written by hand).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from ct_local.control.capacity import HOLDING_STATUSES, fits
from ct_local.http.errors import conflict
from ct_local.settings import DEFAULT_IDLE_TIMEOUT_S, DEFAULT_PENDING_TIMEOUT_S, ServerSettings
from ct_local.storage.store import JobRow, Store

log = logging.getLogger(__name__)

ACTIVE_STATUSES = ("pending", "placing", "initializing", "running")
TERMINAL_STATUSES = ("cancelled", "terminated", "failed")
CANCELLABLE_STATUSES = (*ACTIVE_STATUSES,)

# Reasons reported in the job record (the service names a client cancel cancelled_by_client).
REASON_CANCELLED = "cancelled_by_client"
REASON_PENDING_TIMEOUT = "pending_timeout"
REASON_IDLE_TIMEOUT = "idle_timeout"

Listener = Callable[[JobRow, str], None]

#: The longest the loop sleeps with nothing due: a bound on how late an unannounced change is seen.
IDLE_RECHECK_S = 1.0


class Lifecycle:
    """Advances jobs through their states; :meth:`tick` is one pass, :meth:`run` loops it."""

    def __init__(
        self, store: Store, settings: ServerSettings, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self._listeners: list[Listener] = []
        #: The running loop's, set by wake(): its sleep ends early when it is (see run()).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup: asyncio.Event | None = None

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _move(self, job: JobRow, status: str, now: float, reason: str = "", details: str = "") -> bool:
        moved = self.store.set_status(
            job.job_id, status, now, reason=reason, reason_details=details, expect=[job.status]
        )
        if moved:
            self.wake()
            previous = job.status
            job.status, job.reason, job.reason_details, job.state_changed_at = status, reason, details, now
            for listener in self._listeners:
                try:
                    listener(job, previous)
                except Exception:  # a broken listener must not stop the state machine
                    log.exception("lifecycle listener failed for job %s", job.job_id)
        return moved

    def cancel(self, job: JobRow) -> None:
        """Start cancelling ``job``: idempotent while cancelling or cancelled."""
        if job.status in ("cancelling", "cancelled"):
            return
        if job.status not in CANCELLABLE_STATUSES:
            raise conflict(f"Training job {job.job_id} is {job.status} and cannot be cancelled")
        if not self._move(
            job, "cancelling", self.clock(), REASON_CANCELLED, "The job was cancelled by the caller."
        ):
            # The lifecycle moved it in between; decide again on the fresh state.
            fresh = self.store.get_job(job.job_id)
            if fresh is not None:
                self.cancel(fresh)

    def force(self, job: JobRow, status: str, reason: str = "", details: str = "") -> None:
        """Put a job in any status (admin route for tests: failed, terminated, ...)."""
        self._move(job, status, self.clock(), reason, details)

    def wake(self) -> None:
        """Have the loop look at the jobs now (a job was created or moved); safe from any thread."""
        loop, wakeup = self._loop, self._wakeup
        if loop is not None and wakeup is not None:
            try:
                loop.call_soon_threadsafe(wakeup.set)
            except RuntimeError:  # the loop has closed: nobody sleeps on it any more
                pass

    def tick(self) -> float | None:
        """One pass over the jobs; returns when one next needs a pass (None: none does)."""
        now = self.clock()
        s = self.settings
        jobs = self.store.jobs_with_status(("pending", "placing", "initializing", "running", "cancelling"))
        holding: dict[str, int] = {}
        for job in jobs:
            if job.status in HOLDING_STATUSES:
                holding[job.hardware] = holding.get(job.hardware, 0) + job.gpus
        for job in jobs:
            age = now - job.state_changed_at
            if job.status == "pending":
                limit = (job.pending_timeout_seconds or DEFAULT_PENDING_TIMEOUT_S) * s.timeout_scale
                capacity = s.capacity.get(job.hardware)
                if age >= limit:
                    waited = job.pending_timeout_seconds or DEFAULT_PENDING_TIMEOUT_S
                    details = f"The job waited more than {waited} seconds for {job.gpus} {job.hardware} GPUs."
                    self._move(job, "failed", now, REASON_PENDING_TIMEOUT, details)
                elif (
                    age >= s.pending_delay_s
                    and capacity is not None
                    and fits(job, capacity, holding.get(job.hardware, 0))
                    and self._move(job, "placing", now)
                ):
                    holding[job.hardware] = holding.get(job.hardware, 0) + job.gpus
            elif job.status == "placing" and age >= s.placing_delay_s:
                self._move(job, "initializing", now)
            elif job.status == "initializing" and age >= s.initializing_delay_s:
                self._move(job, "running", now)
            elif job.status == "running":
                idle = (
                    DEFAULT_IDLE_TIMEOUT_S if job.idle_timeout_seconds is None else job.idle_timeout_seconds
                )
                # An idle timeout of 0 disables idle reclamation.
                if idle > 0 and now - job.last_activity_at >= idle * s.timeout_scale:
                    self._move(
                        job,
                        "terminated",
                        now,
                        REASON_IDLE_TIMEOUT,
                        f"The job was idle for more than {idle} seconds and was reclaimed.",
                    )
            elif job.status == "cancelling" and age >= s.cancelling_delay_s:
                self._move(job, "cancelled", now, REASON_CANCELLED, job.reason_details)
        return min((due for job in jobs if (due := self._due(job, holding)) is not None), default=None)

    def _due(self, job: JobRow, holding: dict[str, int]) -> float | None:
        """When ``job``, in the state this pass left it in, next needs a pass (None: never by itself)."""
        s = self.settings
        dwell = {"placing": s.placing_delay_s, "initializing": s.initializing_delay_s}
        if job.status in dwell:
            return job.state_changed_at + dwell[job.status]
        if job.status == "cancelling":
            return job.state_changed_at + s.cancelling_delay_s
        if job.status == "pending":
            limit = (job.pending_timeout_seconds or DEFAULT_PENDING_TIMEOUT_S) * s.timeout_scale
            due = job.state_changed_at + limit
            capacity = s.capacity.get(job.hardware)
            if capacity is not None and fits(job, capacity, holding.get(job.hardware, 0)):
                due = min(due, job.state_changed_at + s.pending_delay_s)
            return due
        if job.status == "running":
            idle = DEFAULT_IDLE_TIMEOUT_S if job.idle_timeout_seconds is None else job.idle_timeout_seconds
            return job.last_activity_at + idle * s.timeout_scale if idle > 0 else None
        return None

    async def run(self) -> None:
        """Pass over the jobs whenever one is due or :meth:`wake` is called, until cancelled; an
        error in one pass is logged and the next pass tries again. Passes are at least ``tick_s``
        apart."""
        self._loop, self._wakeup = asyncio.get_running_loop(), asyncio.Event()
        while True:
            # Cleared before the pass: a wake during it starts the next pass at once.
            self._wakeup.clear()
            due: float | None = None
            try:
                due = self.tick()
            except Exception:
                log.exception("lifecycle tick failed")
            await asyncio.sleep(self.settings.tick_s)
            if self._wakeup.is_set():
                continue
            pause = IDLE_RECHECK_S if due is None else due - self.clock()
            if pause > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wakeup.wait(), min(pause, IDLE_RECHECK_S))
