"""How the runs SDK reads the runs service: the retry rule, the statuses a wait ends on, the waits.

Every read of the runs service is a generated operation (`ct_core.operations.runs`) called with
`predicate=RUNS_RULE`: the client's general retry rule, except that an answer carrying one of the
service's own refusal codes (`not_found`, `invalid_argument`, ...) is final at once. Those answers
say something about the request, not about the moment, so asking again only delays the error (the
general rule would keep retrying a 404 or a 409, which for jobs may be a passing state).

Waits follow the client's poll schedule (`poll_interval` growing by `poll_backoff_multiplier` up to
`poll_max_interval`) and sleep with `client.sleep`, so a test or a caller that injected its own
sleep is obeyed here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ct_core import errors
from ct_core.control.polling import PollSchedule
from ct_core.errors import RunWaitTimeout, ValidationError
from ct_core.http import retry as _retry

#: The refusal codes of the runs service's error body (`{"message", "code", "field"?}`).
RUNS_ERROR_CODES = frozenset(
    {
        "invalid_argument",
        "failed_precondition",
        "not_found",
        "unauthenticated",
        "permission_denied",
        "already_exists",
        "aborted",
        "internal",
        "unavailable",
    }
)
#: The code of a 503 from a runs service that is starting: it refused before reading the request
#: and says in Retry-After when to send it again.
SERVICE_STARTING_CODE = "unavailable"
#: Codes that may heal on another attempt: the service's own failure, a service on its way up.
_TRANSIENT_CODES = frozenset({"internal", SERVICE_STARTING_CODE})

#: Statuses a run never leaves.
TERMINAL_RUN_STATUSES = frozenset({"succeeded", "failed", "cancelled"})
#: The one status of a dataset build that is not final.
DATASET_BUILDING = "building"


def _refusal_is_final(error: BaseException) -> bool:
    return isinstance(error, errors.APIError) and error.code in RUNS_ERROR_CODES - _TRANSIENT_CODES


#: The retry rule of every runs-service call that is safe to repeat.
RUNS_RULE: _retry.Predicate = _retry.general(final=_refusal_is_final)


def service_starting(error: BaseException) -> bool:
    """A 503 `unavailable` of a starting runs service: nothing of the request was read or done."""
    return (
        isinstance(error, errors.APIError)
        and error.status_code == 503
        and error.code == SERVICE_STARTING_CODE
    )


def upload_rule(error: BaseException) -> bool:
    """The rule of a call that must not run twice (a dataset upload builds once per request): sent
    again only when it provably never reached the service, or the service refused it unread while
    starting (after the Retry-After wait the general policy honours)."""
    return _retry.never_reached_server(error) or service_starting(error)


def answer_object(answer: Any, operation: str) -> dict[str, Any]:
    """The JSON object an operation answered; anything else is a broken answer, said as such."""
    if not isinstance(answer, dict):
        raise errors.APIError(
            f"{operation}: the runs service answered {type(answer).__name__}, not a JSON object"
        )
    return answer


def schedule_for(client: Any, timeout: float | None) -> tuple[PollSchedule, float]:
    """The client's poll schedule with `timeout` (default: the client's poll timeout) as its limit."""
    limit = client.poll_timeout if timeout is None else timeout
    if isinstance(limit, bool) or not isinstance(limit, int | float) or limit <= 0:
        raise ValidationError(f"timeout must be a positive number of seconds, got {limit!r}")
    schedule = PollSchedule(
        interval=client.poll_interval,
        timeout=float(limit),
        multiplier=client.poll_backoff_multiplier,
        max_interval=client.poll_max_interval,
        sleep=client.sleep,
    )
    return schedule, float(limit)


def wait_until(
    client: Any,
    read: Callable[[], dict[str, Any]],
    settled: Callable[[Mapping[str, Any]], bool],
    *,
    timeout: float | None,
    describe: str,
) -> dict[str, Any]:
    """Call `read` on the poll schedule until `settled(record)`; return that record.

    Running out of time raises `RunWaitTimeout` with the last record; nothing is cancelled.
    `describe` names what was waited for in that message ("run run_01...").
    """
    schedule, limit = schedule_for(client, timeout)
    while True:
        record = read()
        if settled(record):
            return record
        if schedule.expired():
            raise RunWaitTimeout(
                f"{describe} is still {record.get('status') or 'unknown'} after {limit:g}s; it goes on, "
                "wait again to pick it up",
                last=record,
            )
        schedule.wait()


def follow_interval(client: Any, poll: float | None) -> float:
    """Seconds between reads while following: `poll`, else the client's poll interval."""
    interval = client.poll_interval if poll is None else poll
    if isinstance(interval, bool) or not isinstance(interval, int | float) or interval <= 0:
        raise ValidationError(f"poll must be a positive number of seconds, got {interval!r}")
    return float(interval)
