"""The pacer of a training client's result polls (ct_tinker.pacing), on a clock the test moves."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from ct_tinker.pacing import DUE_SHARE, MAX_HOLD_S, MIN_SAMPLES, WINDOW, Pacer, batch_key

INTERVAL = 0.01


class Clock:
    """Time that passes only when slept through or spent reading."""

    def __init__(self) -> None:
        self.t = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


def reader(clock: Clock, done_at: float, round_trip: float = 0.002) -> Callable[[], str]:
    """A read that polls every INTERVAL until `done_at`, each poll taking `round_trip`."""

    def read() -> str:
        while True:
            clock.t += round_trip
            if clock.t >= done_at:
                return "result"
            clock.t += INTERVAL

    return read


def warm(pace: Pacer, clock: Clock, key: object, took: float) -> None:
    """MIN_SAMPLES requests of `key`, each taking `took`, so that the next ones are held."""
    for _ in range(MIN_SAMPLES):
        pace.begin(clock())
        pace.poll(key, reader(clock, clock.t + took), INTERVAL)


def test_the_first_requests_of_a_kind_are_polled_at_once_and_the_next_held_until_nearly_due() -> None:
    clock = Clock()
    pace = Pacer(clock=clock, sleep=clock.sleep)
    key = batch_key("forward_backward", 2, 40)
    # A slow first one (warm-up), then one as quick as the rest: neither is held.
    for took in (0.500, 0.050):
        pace.begin(clock())
        assert pace.poll(key, reader(clock, clock.t + took), INTERVAL) == "result"
    assert clock.slept == []
    warm_up, quick = pace.durations[key]
    assert 0.500 - 1e-9 <= warm_up <= 0.500 + INTERVAL + 0.002
    assert 0.050 - 1e-9 <= quick <= 0.050 + INTERVAL + 0.002
    # The next one starts as the last one ends, and its first poll is held for most of the
    # quicker duration.
    pace.begin(clock())
    started = clock.t
    pace.poll(key, reader(clock, clock.t + 0.050), INTERVAL)
    assert clock.slept == [pytest.approx(DUE_SHARE * quick)]
    assert clock.t >= started + 0.050


def test_the_quickest_recent_duration_sets_the_hold() -> None:
    clock = Clock()
    pace = Pacer(clock=clock, sleep=clock.sleep)
    for took in (0.030, 0.080, 0.090):
        pace.begin(clock())
        pace.poll("step", reader(clock, clock.t + took), INTERVAL)
    quickest = pace.durations["step"][0]
    assert len(pace.durations["step"]) == 3
    assert min(pace.durations["step"]) == quickest
    pace.begin(clock())
    assert pace.hold("step") == pytest.approx(DUE_SHARE * quickest)
    # A window later, the quick one is forgotten.
    for _ in range(WINDOW):
        pace.begin(clock())
        pace.poll("step", reader(clock, clock.t + 0.080), INTERVAL)
    pace.begin(clock())
    assert pace.hold("step") > DUE_SHARE * 0.080 - 1e-9


def test_a_request_quicker_than_the_hold_lowers_the_next_hold() -> None:
    clock = Clock()
    pace = Pacer(clock=clock, sleep=clock.sleep)
    warm(pace, clock, "step", 0.100)
    holds = []
    for _ in range(5):
        pace.begin(clock())
        holds.append(pace.hold("step"))
        # Done long before the held first poll, which answers it: only an upper bound is learnt.
        pace.poll("step", reader(clock, clock.t + 0.001), INTERVAL)
    assert holds[0] > 0
    assert all(later < earlier for earlier, later in itertools.pairwise(holds))
    assert pace.round_trip > 0


def test_a_request_submitted_after_the_last_one_ended_is_held_from_its_submission() -> None:
    clock = Clock()
    pace = Pacer(clock=clock, sleep=clock.sleep)
    warm(pace, clock, "step", 0.040)
    clock.t += 1.0  # the queue was empty for a second; then the next call was submitted
    pace.begin(clock())
    assert pace.hold("step") == pytest.approx(DUE_SHARE * min(pace.durations["step"]))
    # Reading it later than that (the poller was busy with another result): no hold at all.
    pace.begin(clock.t - 0.5)
    assert pace.hold("step") == 0.0


def test_kinds_and_batch_sizes_are_paced_apart_and_unkeyed_reads_are_never_held() -> None:
    clock = Clock()
    pace = Pacer(clock=clock, sleep=clock.sleep)
    small, large = batch_key("forward_backward", 1, 10), batch_key("forward_backward", 8, 1000)
    assert small != large
    assert batch_key("forward_backward", 2, 60) == batch_key("forward_backward", 1, 100)
    warm(pace, clock, small, 0.040)
    pace.begin(clock())
    assert pace.hold(small) > 0
    assert pace.hold(large) == 0.0
    assert pace.hold("step") == 0.0
    before = len(clock.slept)
    pace.begin(clock())
    assert pace.poll(None, reader(clock, clock.t + 0.200), INTERVAL) == "result"
    assert len(clock.slept) == before
    # An unkeyed read (a sampling request, on another queue) does not count as the training
    # queue's last end: the next forward-backward is still held from the submission before it.
    assert pace.hold(small) == 0.0


def test_no_hold_is_longer_than_the_cap() -> None:
    clock = Clock()
    pace = Pacer(clock=clock, sleep=clock.sleep)
    warm(pace, clock, "save", 60.0)
    pace.begin(clock())
    assert pace.hold("save") == MAX_HOLD_S


def test_a_failed_read_still_marks_the_end_of_the_request() -> None:
    clock = Clock()
    pace = Pacer(clock=clock, sleep=clock.sleep)

    def fails() -> str:
        clock.t += 0.030
        raise RuntimeError("request failed")

    pace.begin(clock())
    with pytest.raises(RuntimeError, match="request failed"):
        pace.poll("step", fails, INTERVAL)
    assert "step" not in pace.durations
    # The next request is taken to start when the failed one was seen ending, not when it was
    # submitted (a second earlier).
    pace.begin(clock.t - 1.0)
    pace.poll("step", reader(clock, clock.t + 0.020), INTERVAL)
    (took,) = pace.durations["step"]
    assert 0.020 - 1e-9 <= took <= 0.020 + INTERVAL + 0.002
