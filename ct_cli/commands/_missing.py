"""Hints that name what a "not found" answer is about: the job, the source job, or the checkpoint.

The service answers 404 alike for a missing job and for a missing checkpoint of an existing job,
and the CLI's generic hint for a 404 is about the job id. Around a call that names a checkpoint,
`name_what_is_missing` reads the jobs once the call failed and sets the error's hint to the one
thing that is missing, so `ct load cp_nope` on a real job says the checkpoint was not found.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The status of a "not found" answer.
NOT_FOUND = 404


def _exists(client: Any, job_id: str) -> bool | None:
    """Whether `job_id` can be read (None when reading it failed for another reason)."""
    from ct_core import errors  # its APIError loads only if one is raised

    try:
        client.get_job(job_id)
    except errors.APIError as exc:
        return False if exc.status_code == NOT_FOUND else None
    return True


def _location(client: Any) -> str:
    database, schema = getattr(client, "database", None), getattr(client, "schema", None)
    return f" in {database}.{schema}" if database and schema else ""


def missing_hint(
    client: Any, job_id: str, *, checkpoint_id: str, source_job_id: str | None = None
) -> str | None:
    """The hint for a 404 of a call on `checkpoint_id` of `job_id` (or of `source_job_id`), when known."""
    job_found = _exists(client, job_id)
    if job_found is None:
        return None
    if not job_found:
        return (
            f"job {job_id} was not found{_location(client)}: check the job id, --database and --schema "
            "(a job is visible only to its owner role)"
        )
    owner = job_id
    if source_job_id is not None and source_job_id != job_id:
        source_found = _exists(client, source_job_id)
        if source_found is None:
            return None
        if not source_found:
            return (
                f"source job {source_job_id} was not found{_location(client)}: check --source-job-id "
                "(a job is visible only to its owner role)"
            )
        owner = source_job_id
    return (
        f"checkpoint {checkpoint_id} was not found in job {owner}: "
        f"list its checkpoints with ct checkpoints {owner}"
    )


@contextmanager
def name_what_is_missing(
    client: Any, job_id: str, *, checkpoint_id: str, source_job_id: str | None = None
) -> Iterator[None]:
    """Give a 404 raised inside the block the hint of `missing_hint` (other errors pass unchanged)."""
    from ct_core import errors  # its APIError loads only if one is raised

    try:
        yield
    except errors.APIError as exc:
        if exc.status_code == NOT_FOUND:
            hint = missing_hint(client, job_id, checkpoint_id=checkpoint_id, source_job_id=source_job_id)
            if hint is not None:
                exc.hint = hint
        raise
