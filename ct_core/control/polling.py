"""Status normalization (job and request states) and the poll schedule of waits.

The schedule: sleep `min(delay, time left)`, starting at `poll_interval`, multiplying by the backoff
factor after each sleep and never exceeding `poll_max_interval`; give up at `poll_timeout` measured
on a monotonic clock. `wait_for_job` uses it now; request polling (the data plane) reuses it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Job states a job never leaves, including legacy and alternative spellings.
TERMINAL_JOB_STATES = frozenset(
    {"failed", "cancelled", "canceled", "terminated", "done", "completed", "succeeded"}
)
SUCCESS_REQUEST_STATES = frozenset({"done", "completed", "succeeded"})
#: With a request waiter, the longest a status goes unread while the waiter says nothing (a net for
#: an end the waiter is not told of; see PollSchedule.until_done).
SIGNALLED_RECHECK_S = 1.0
CANCELLED_REQUEST_STATES = frozenset({"cancelled", "canceled"})


def normalize_job_status(status: Any) -> str:
    """`JOB_STATE_RUNNING` -> `running`; None -> ``; an unknown integer enum stays its digits."""
    return str(status if status is not None else "").strip().lower().removeprefix("job_state_")


def normalize_request_status(status: Any) -> str:
    """`REQUEST_STATE_DONE` -> `done`; a missing or non-string status reads as `pending` (in flight)."""
    if not isinstance(status, str) or not status.strip():
        return "pending"
    return status.strip().lower().removeprefix("request_state_")


@dataclass
class PollSchedule:
    """Delays between polls and the overall deadline."""

    interval: float
    timeout: float
    multiplier: float
    max_interval: float
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    #: `until_done(seconds)` blocks up to `seconds` and returns True early once what is polled may
    #: have finished (a request waiter of the server's own process; see CortexTrainingClient's
    #: `request_waiter`). While set, each wait is one such call of up to `max_interval`, or
    #: `SIGNALLED_RECHECK_S` when that is longer (the waiter ends it when the request does, so a
    #: long request is not read again and again); after it answered True once, waits are plain
    #: sleeps again, so a poll that still finds the request running never turns into a busy loop.
    until_done: Callable[[float], bool] | None = None

    def __post_init__(self) -> None:
        self.deadline = self.clock() + self.timeout
        self._delay = self.interval

    def expired(self) -> bool:
        return self.clock() >= self.deadline

    def wait(self) -> None:
        """Sleep before the next poll (never past the deadline) and grow the next delay."""
        remaining = self.deadline - self.clock()
        if remaining > 0 and self.until_done is not None:
            if self.until_done(min(max(self.max_interval, SIGNALLED_RECHECK_S), remaining)):
                self.until_done = None
            return
        if remaining > 0:
            self.sleep(min(self._delay, remaining))
        self._delay = min(self._delay * self.multiplier, self.max_interval)
