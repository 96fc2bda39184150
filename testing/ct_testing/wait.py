"""Waiting for a condition in a test, with a deadline that only bounds a hang.

A test that waits for something another thread or process does (a job to reach a status, a
server to write a file, a log line to appear) calls ``wait_until`` with a predicate instead of
writing its own ``deadline = time.monotonic() + ...`` loop. The deadline is not a timing
assertion: it is generous, so that a heavily loaded machine still passes, and exists only so a
hang fails the test with a message rather than stalling the suite.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")

#: How long ``wait_until`` waits by default: far above anything a healthy run needs, even on a
#: 2-core machine running several test workers; only a hang gets near it.
DEFAULT_TIMEOUT_S = 120.0
#: How long ``wait_until`` sleeps between two calls of the predicate by default: short enough that
#: a test does not linger after the condition holds, long enough not to spin a loaded CPU.
DEFAULT_INTERVAL_S = 0.02


def wait_until(
    predicate: Callable[[], T | None],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    interval: float = DEFAULT_INTERVAL_S,
    message: str | Callable[[], str] = "condition never held",
) -> T:
    """Call ``predicate`` until it returns a truthy value, and return that value.

    The predicate is always called at least once, and once more after the deadline has passed,
    so a slow machine never fails a condition that holds by then. When it still returns a falsy
    value, the test fails with ``message`` (a string, or a callable that builds it then, e.g. to
    include a log) and the last value the predicate returned. An exception raised by the
    predicate propagates at once (a test can ``pytest.fail`` from it to stop waiting early).
    """
    deadline = time.monotonic() + timeout
    while True:
        past_deadline = time.monotonic() > deadline
        value = predicate()
        if value:
            return value
        if past_deadline:
            text = message() if callable(message) else message
            pytest.fail(f"{text} (waited {timeout:g} s; last value: {value!r})")
        time.sleep(interval)
