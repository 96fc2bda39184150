"""When to ask for a training client's next result.

A training client's requests run on its training sub-job one after another, in the order they were
submitted, and the service reads their results in that order too (one polling thread per client).
So a request starts when the one before it finished, or when it was submitted if that was later, and
a request like the last ones (same kind, about the same batch size) takes about as long as the
quickest of them took. Each status poll is a request to the server: on the local server, its
parsing, routing and database read run in the interpreter the training runs in, so asking every
few milliseconds from the start slows the very work it waits for. `Pacer` holds the first poll of a
request back until just before the quickest recent duration has passed; from there the client's own
schedule (short intervals) takes over, so a result is still read within one short interval of its
end, and the polls a forward-backward took while it ran are saved.

Only requests whose durations repeat are paced (forward-backward and forward, by batch size, and
optimizer steps); sampling, saves, loads and weight syncs are polled on the client's schedule from
the start.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: The share of the quickest recent duration the first poll waits, so that a request as quick as
#: the last ones is polled just before its end, and a result is never read late by the holding.
DUE_SHARE = 0.9
#: How many recent durations per key are kept (the quickest of them is the expectation).
WINDOW = 8
#: How many durations of a key are seen before its requests are held: the first request of a
#: training client or of a new batch size is often much slower than the next (warm-up), and holding
#: on it alone would read the next ones late.
MIN_SAMPLES = 2
#: The longest the first poll of a request is held back, whatever the expectation.
MAX_HOLD_S = 2.0
#: How fast the estimate of one poll's round trip follows the observed ones (a moving average).
ROUND_TRIP_WEIGHT = 0.3


def batch_key(kind: str, rows: int, width: int) -> tuple[str, int]:
    """The pacing key of a forward or forward-backward: its kind and its padded token count, to the
    next power of two (batches of about the same size take about the same time)."""
    tokens = max(1, rows * width)
    return kind, 1 << (tokens - 1).bit_length()


class Pacer:
    """Holds back the first poll of a training client's next result until it is due.

    On the polling thread, in submission order: `begin(submitted_at)` as it starts reading a call's
    results (`submitted_at`: the `now()` time the call's requests were submitted), then
    `poll(key, read, interval)` around each read of one of them (`read` polls it until it is done).
    `key` names what the request is; with None it is not paced, and it is not taken for a request of
    the training sub-job's queue (its end says nothing about when the next one starts).
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        #: When the call whose results are being read was submitted.
        self._submitted_at = 0.0
        #: When the last paced request ended, as seen by its last poll.
        self._last_done = 0.0
        #: Recent durations in seconds per key, newest last.
        self.durations: dict[Any, collections.deque[float]] = {}
        #: How long one poll takes; a request seen done was done about half of it before the read
        #: returned.
        self.round_trip = 0.0

    def now(self) -> float:
        return self._clock()

    def begin(self, submitted_at: float) -> None:
        """The polling thread moves on to the results of the call submitted at `submitted_at`."""
        self._submitted_at = submitted_at

    def hold(self, key: Any) -> float:
        """How long the first poll of a `key` request starting now would be held back."""
        recent = self.durations.get(key)
        if recent is None or len(recent) < MIN_SAMPLES:
            return 0.0
        started = max(self._submitted_at, self._last_done)
        return max(0.0, min(started + min(recent) * DUE_SHARE - self._clock(), MAX_HOLD_S))

    def poll(self, key: Any, read: Callable[[], T], interval: float) -> T:
        """`read()`, first waiting until the request is due when `key` requests were seen before.

        `interval`: the client's first poll interval; a read that returns sooner was answered by
        its first poll."""
        if key is None:
            return read()
        started = max(self._submitted_at, self._last_done)
        hold = self.hold(key)
        if hold > 0:
            self._sleep(hold)
        reading = self._clock()
        try:
            value = read()
        finally:
            done = self._clock()
            if done - reading < interval:
                self.round_trip += ROUND_TRIP_WEIGHT * (done - reading - self.round_trip)
            # When the request ended, about: the poll that saw it done was answered half a round
            # trip before it returned. The next request started then, not when this one was read.
            ended = max(reading, done - self.round_trip / 2)
            self._last_done = ended
        recent = self.durations.setdefault(key, collections.deque(maxlen=WINDOW))
        recent.append(max(0.0, ended - started))
        return value
