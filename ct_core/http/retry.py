"""Every retry of the SDK: which failures get another attempt, how long to wait, and the one loop.

`run_with_retries` is the only retry loop and `RetryPolicy.wait_before` the only backoff computation.
Each request path brings its own policy (the numbers, all in ct_core.constants) and its own predicate
(which failures are worth another attempt):

- the general API path (the transport): `RetryPolicy(max_retries=...)` with `general(...)`;
- artifact LIST/GET of the chunked downloads and execution logs: `ARTIFACT_TRANSFERS`;
- checkpoint files over presigned links: `CHECKPOINT_LINKS`.

The general rule is a pure decision over ct's own exceptions (the transport maps httpx failures to
them first), so the same policy serves the generated client and raw httpx streaming requests.

Why each status is retried on the general path:

    307 308  a redirect is never followed; the same URL is asked again instead
    404      a job can be invisible for a moment right after it is created
    409      the zone serving the job is restarting
    429      rate limited: back off (honouring Retry-After)
    500 502 503 504  transient failures of the service or a proxy in front of it

A 409 that carries a code naming a lasting conflict (517604 unsupported hardware, chunk-group codes)
is final, and so is any 409 of a call whose conflict is about the job's state (cancel). Two 404s
are final at once: code 517601 ("Training job ... not found") unless this client created
that job in the last 120 s, and whatever a caller marks final (the tail-logs case). Certificate
verification failures are final too: they fail the same way on every attempt. Creating a job is
retried only when the failure proves the request never left this machine.
"""

from __future__ import annotations

import logging
import random
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ct_core import errors
from ct_core.constants import (
    ARTIFACT_RETRIES,
    ARTIFACT_RETRY_FIRST_WAIT,
    ARTIFACT_RETRY_JITTER_SHARE,
    ARTIFACT_RETRY_MAX_WAIT,
    ARTIFACT_RETRYABLE_STATUSES,
    CHECKPOINT_RETRIES,
    CHECKPOINT_RETRY_FIRST_WAIT,
    CHECKPOINT_RETRY_MAX_WAIT,
    JOB_NOT_FOUND_CODE,
    NOTHING_RAN_STATUSES,
    PERMANENT_CONFLICT_CODES,
    RECENTLY_CREATED_MAX_ENTRIES,
    RECENTLY_CREATED_WINDOW_SECONDS,
    RETRY_INITIAL_WAIT,
    RETRY_JITTER,
    RETRY_MAX_WAIT,
    RETRYABLE_STATUSES,
)
from ct_core.errors import ArtifactUnavailable, CTConnectionError, TLSVerificationError

logger = logging.getLogger("ct_core.retry")

T = TypeVar("T")
#: Decides whether an exception deserves another attempt.
Predicate = Callable[[BaseException], bool]
#: Told about each retry before its wait: ``on_retry(retry_number, delay_seconds, error)``.
RetryNotice = Callable[[int, float, BaseException], None]


@dataclass(frozen=True)
class RetryPolicy:
    """How many extra attempts to make and how long to wait between them.

    ``max_retries`` attempts follow the first one. Retry n (1-based) waits
    ``min(initial_wait * 2**(n-1) + U(0, jitter), max_wait)`` seconds, less a random share of up to
    ``jitter_share`` of that. With ``honour_retry_after``, a 429 or 503 that names a delay in
    Retry-After waits that delay instead (still capped by ``max_wait``).
    """

    max_retries: int
    initial_wait: float = RETRY_INITIAL_WAIT
    max_wait: float = RETRY_MAX_WAIT
    jitter: float = RETRY_JITTER
    jitter_share: float = 0.0
    honour_retry_after: bool = True

    def wait_before(self, retry_number: int, error: BaseException | None = None) -> float:
        """Seconds to sleep before retry `retry_number` (1-based): exponential, jittered, capped."""
        advised = _retry_after_seconds(error) if self.honour_retry_after else None
        if advised is not None:
            return min(advised, self.max_wait)
        backoff = self.initial_wait * (2 ** (retry_number - 1))
        wait = min(backoff + random.uniform(0, self.jitter), self.max_wait)
        if self.jitter_share:
            wait *= 1.0 - random.uniform(0, self.jitter_share)
        return wait


#: Artifact LIST/GET of the chunked downloads and the execution logs (numbers: ct_core.constants).
ARTIFACT_TRANSFERS = RetryPolicy(
    max_retries=ARTIFACT_RETRIES,
    initial_wait=ARTIFACT_RETRY_FIRST_WAIT,
    max_wait=ARTIFACT_RETRY_MAX_WAIT,
    jitter=0.0,
    jitter_share=ARTIFACT_RETRY_JITTER_SHARE,
    honour_retry_after=False,
)
#: One checkpoint file over its presigned link (numbers: ct_core.constants).
CHECKPOINT_LINKS = RetryPolicy(
    max_retries=CHECKPOINT_RETRIES,
    initial_wait=CHECKPOINT_RETRY_FIRST_WAIT,
    max_wait=CHECKPOINT_RETRY_MAX_WAIT,
    jitter=0.0,
    honour_retry_after=False,
)


def _retry_after_seconds(error: BaseException | None) -> float | None:
    if (
        not isinstance(error, errors.APIError)
        or error.status_code not in (429, 503)
        or error.response is None
    ):
        return None
    raw = error.response.headers.get("retry-after", "").strip()
    try:
        seconds = float(raw)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


class RecentJobs:
    """Job ids this client created, remembered for the 404 grace window (bounded, thread-safe)."""

    def __init__(
        self,
        window: float = RECENTLY_CREATED_WINDOW_SECONDS,
        max_entries: int = RECENTLY_CREATED_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._window = window
        self._max_entries = max_entries
        self._clock = clock
        self._created: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, job_id: str) -> None:
        with self._lock:
            self._created[job_id] = self._clock()
            self._created.move_to_end(job_id)
            while len(self._created) > self._max_entries:
                self._created.popitem(last=False)

    def __contains__(self, job_id: object) -> bool:
        with self._lock:
            created = self._created.get(job_id) if isinstance(job_id, str) else None
            return created is not None and self._clock() - created <= self._window


def is_transient(error: BaseException) -> bool:
    """The general rule: transport failures (but not certificate failures) and the listed statuses."""
    if isinstance(error, TLSVerificationError):
        return False
    if isinstance(error, CTConnectionError):
        return True
    if not isinstance(error, errors.APIError) or error.status_code not in RETRYABLE_STATUSES:
        return False
    # A 409 that names a lasting conflict (unsupported hardware, a chunk-group error) never heals.
    return not (error.status_code == 409 and error.code in PERMANENT_CONFLICT_CODES)


def conflict_is_final(error: BaseException) -> bool:
    """For calls whose 409 means "not in this state" (cancelling a failed job): fail at once."""
    return isinstance(error, errors.APIError) and error.status_code == 409


def never_reached_server(error: BaseException) -> bool:
    """The create-job rule: only a connection that could not be opened is safe to try again."""
    return (
        isinstance(error, CTConnectionError)
        and not isinstance(error, TLSVerificationError)
        and error.never_sent
    )


def never(error: BaseException) -> bool:
    """One attempt only (capacity)."""
    return False


def artifact_retryable(error: BaseException) -> bool:
    """The artifact LIST/GET rule: a store that says it is unavailable, any failure to connect or
    finish in time (certificate failures included), and ARTIFACT_RETRYABLE_STATUSES or any 5xx."""
    if isinstance(error, ArtifactUnavailable):
        return True
    if isinstance(error, errors.APIError):
        return error.status_code in ARTIFACT_RETRYABLE_STATUSES or (error.status_code or 0) >= 500
    if isinstance(error, CTConnectionError | TimeoutError | ConnectionError):
        return True
    # A store that streams with httpx directly lets its transport errors through. Without httpx
    # imported there can be none, so this module does not import it.
    httpx = sys.modules.get("httpx")
    return httpx is not None and isinstance(error, httpx.TransportError)


def general(
    *,
    job_id: str | None = None,
    recent_jobs: RecentJobs | None = None,
    final: Predicate | None = None,
) -> Predicate:
    """The general predicate plus the 404s that fail at once (see the module docstring).

    `job_id` names the job the request is about, so a 517601 for a job this client has just created
    keeps being retried while the service catches up. `final` lets a caller declare more answers
    final (for example a tail-logs 404/410 for an ended job).
    """

    def predicate(error: BaseException) -> bool:
        if final is not None and final(error):
            return False
        if (
            isinstance(error, errors.APIError)
            and error.status_code == 404
            and error.code == JOB_NOT_FOUND_CODE
        ):
            return job_id is not None and recent_jobs is not None and job_id in recent_jobs
        return is_transient(error)

    return predicate


def nothing_ran(*, job_id: str | None = None, recent_jobs: RecentJobs | None = None) -> Predicate:
    """The rule of a call that must not run twice: repeated only when the failure proves nothing ran.

    A connection that was never sent, or NOTHING_RAN_STATUSES (a 409 naming a lasting conflict and
    a 517601 for a job this client did not just create stay final).
    """

    def predicate(error: BaseException) -> bool:
        if isinstance(error, CTConnectionError):
            return error.never_sent and not isinstance(error, TLSVerificationError)
        if not isinstance(error, errors.APIError) or error.status_code not in NOTHING_RAN_STATUSES:
            return False
        if error.status_code == 409 and error.code in PERMANENT_CONFLICT_CODES:
            return False
        if error.status_code == 404 and error.code == JOB_NOT_FOUND_CODE:
            return job_id is not None and recent_jobs is not None and job_id in recent_jobs
        return True

    return predicate


#: Builds one call's predicate from the job it is about (for the 404 grace) and the client's memory.
RuleFactory = Callable[[str | None, RecentJobs | None], Predicate]

#: The retry rules the spec names per operation (its `x-ct-retry` extension), which the generated
#: operation functions of `ct_api` pass to `Transport.request` by name:
#:
#:     read            safe to repeat: the general rule (a job created moments ago may answer 404)
#:     settled         safe to repeat, about something long created: a 517601 is final at once
#:     idempotent-key  the request carries a key that makes a repeat harmless: the general rule
#:     conflict-final  the general rule, but a 409 (the job's state forbids it) is final
#:     nothing-ran     must not run twice: repeated only when the failure proves nothing ran
#:     never-sent      must not run twice: repeated only when it never left this machine
#:     never           one attempt
#:
#: A caller may pass a narrower predicate of its own (one that makes more answers final); never a
#: wider one.
RULES: dict[str, RuleFactory] = {
    "read": lambda job_id, recent: general(job_id=job_id, recent_jobs=recent),
    "settled": lambda job_id, recent: general(),
    "idempotent-key": lambda job_id, recent: general(job_id=job_id, recent_jobs=recent),
    "conflict-final": lambda job_id, recent: general(
        job_id=job_id, recent_jobs=recent, final=conflict_is_final
    ),
    "nothing-ran": lambda job_id, recent: nothing_ran(job_id=job_id, recent_jobs=recent),
    "never-sent": lambda job_id, recent: never_reached_server,
    "never": lambda job_id, recent: never,
}


def rule(name: str, *, job_id: str | None = None, recent_jobs: RecentJobs | None = None) -> Predicate:
    """The predicate of the rule `name` (a key of RULES) for one call about `job_id`."""
    try:
        factory = RULES[name]
    except KeyError:
        raise ValueError(f"unknown retry rule {name!r}; known: {', '.join(sorted(RULES))}") from None
    return factory(job_id, recent_jobs)


def run_with_retries(
    attempt: Callable[[], T],
    *,
    predicate: Predicate,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    describe: str = "request",
    at_once: Predicate | None = None,
    on_retry: RetryNotice | None = None,
) -> T:
    """Call `attempt` until it succeeds, the predicate refuses, or `1 + max_retries` attempts ran.

    The last exception is re-raised unchanged when the attempts are used up. `sleep` does the waiting
    (a caller may make it interruptible: whatever it raises ends the loop). A failure `at_once`
    accepts is retried without a wait (it still counts as a retry). `on_retry` is told about each
    retry before its wait; without it the retry is logged at debug level.
    """
    attempts = 1 + max(policy.max_retries, 0)
    for number in range(1, attempts + 1):
        try:
            return attempt()
        except Exception as error:
            if number >= attempts or not predicate(error):
                raise
            immediate = at_once is not None and at_once(error)
            delay = 0.0 if immediate else policy.wait_before(number, error)
            if on_retry is not None:
                on_retry(number, delay, error)
            else:
                logger.debug(
                    "%s failed (%s); retry %d/%d in %.2fs", describe, error, number, attempts - 1, delay
                )
            if not immediate:
                sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises
