"""When a data-plane answer is about the job's state: read the job once instead of retrying.

The general retry rule repeats two answers for about a minute: a 409 (the zone serving the job is
restarting) and a 404 517601 for a job this client created in the last two minutes (a new job can be
invisible for a moment). Both also come for reasons no retry fixes:

- a 409 because the job is not running: still pending (or placing, initializing), or ended
  (cancelled, failed, terminated by its idle timeout, ...);
- a 404 517601 because the job is there but the request id (or checkpoint) the call names is not.

So on the first such answer that the rule would retry, `JobStateCheck` reads the job once, one
attempt, and:

- 409 and the job is in a status that is not running (one this client knows): `JobNotRunningError`
  at once, naming the status (and the job's reason), with what to do next;
- 404 517601 and the job could be read: the answer is final (what is missing is not the job);
- otherwise (running, a status it cannot read, or a job that cannot be read yet) the rule goes on
  as before, and the job is not read again for this call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ct_core import errors
from ct_core.constants import JOB_NOT_FOUND_CODE
from ct_core.control.polling import TERMINAL_JOB_STATES, normalize_job_status

logger = logging.getLogger("ct_core.dataplane")

#: Statuses in which a job cannot serve data-plane calls: on its way to running, or ending or ended.
NOT_RUNNING_JOB_STATES = TERMINAL_JOB_STATES | frozenset({"pending", "placing", "initializing", "cancelling"})
#: Reads the job once, or returns None when it cannot be read.
JobReader = Callable[[], "dict[str, Any] | None"]


def _is_job_state_answer(error: BaseException) -> bool:
    if not isinstance(error, errors.APIError):
        return False
    return error.status_code == 409 or (error.status_code == 404 and error.code == JOB_NOT_FOUND_CODE)


def not_running_error(
    error: errors.APIError, job_id: str, status: str, reason: str
) -> errors.JobNotRunningError:
    """The `JobNotRunningError` that replaces a 409 `error` of a job read in `status`."""
    because = f" ({reason})" if reason else ""
    if status in TERMINAL_JOB_STATES or status == "cancelling":
        advice = (
            "it has ended and will not run again; start a new job (create_job_body_from_job(get_job(...)) "
            "gives a body like this one's)"
        )
    else:
        advice = f"wait until it runs: client.wait_for_job({job_id!r}), or ct wait {job_id}"
    service = error.server_message or ""
    message = (
        f"Job {job_id} is {status}{because}, not running: data-plane calls need a running job, so the "
        f"call was refused and not retried; {advice}."
        + (f" The service answered 409: {service}" if service else "")
    )
    return errors.JobNotRunningError(
        message,
        job_id=job_id,
        job_status=status,
        reason=reason,
        response=error.response,
        status_code=error.status_code,
        code=error.code,
        request_id=error.request_id,
        server_message=error.server_message,
    )


class JobStateCheck:
    """The retry rule of one data-plane call, with one read of the job when an answer may be about it.

    Wraps `rule` (the call's own retry rule) and is used in its place; raising from here ends the
    retries with that error (see the module docstring for what is decided).
    """

    def __init__(self, rule: Callable[[BaseException], bool], job_id: str, read_job: JobReader) -> None:
        self._rule = rule
        self._job_id = job_id
        self._read_job = read_job
        self._checked = False

    def __call__(self, error: BaseException) -> bool:
        retry = self._rule(error)
        if not retry or self._checked or not _is_job_state_answer(error):
            return retry
        self._checked = True
        job = self._read_job()
        if job is None:
            return retry
        assert isinstance(error, errors.APIError)  # _is_job_state_answer said so
        if error.status_code == 404:
            logger.debug(
                "job %s is visible, so its 404 (%s) is about what the call names: not retried",
                self._job_id,
                error.server_message,
            )
            return False
        status = normalize_job_status(job.get("status"))
        if status not in NOT_RUNNING_JOB_STATES:
            return retry
        raise not_running_error(error, self._job_id, status, str(job.get("reason") or "")) from error
