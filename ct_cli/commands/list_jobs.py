"""`ct list`: jobs of the schema, or with --all of the whole account (listJobs, listAccountJobs).

One order for both: oldest first by `created_at`, so the newest job ends up next to the prompt. With
--all and --limit the newest jobs are the ones kept (the account list pages newest first).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output

#: Statuses a service may answer from its active-job index; each gets its own request.
ACTIVE_STATUSES = ("pending", "placing", "initializing", "running")
#: The per-schema list's `pending` filter also returns placing jobs, so placing is asked as pending.
_REQUEST_STATUS = {"placing": "pending"}
#: `done` is a legacy status the account-level list rejects; it means these settled states.
_ACCOUNT_DONE = "cancelled,terminated"
_LEGACY_PREFIX = "job_state_"


def normalize_status(value: Any) -> str:
    """`RUNNING` and `JOB_STATE_RUNNING` both read as `running`: case and the legacy prefix do not matter."""
    text = str(value or "").strip().lower()
    return text[len(_LEGACY_PREFIX) :] if text.startswith(_LEGACY_PREFIX) else text


def _created_at(job: Any) -> datetime | None:
    raw = job.get("created_at") if isinstance(job, dict) else None
    if raw is None or not str(raw).strip():
        return None
    text = str(raw).strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    # A timestamp without an offset is taken as UTC, as the service writes UTC.
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def oldest_first(jobs: list[Any]) -> list[Any]:
    """Order jobs by creation time, oldest first so the newest end up next to the prompt.

    Undated jobs follow the dated ones in their original order; when no job is dated, the
    service's newest-first order is simply reversed.
    """
    stamps = [_created_at(job) for job in jobs]
    if all(stamp is None for stamp in stamps):
        return list(reversed(jobs))
    order = sorted(
        range(len(jobs)),
        key=lambda i: (stamps[i] is None, stamps[i] or datetime.min.replace(tzinfo=UTC), i),
    )
    return [jobs[i] for i in order]


def _split_statuses(status: str) -> list[str]:
    names = [normalize_status(part) for part in status.split(",")]
    return [name for name in dict.fromkeys(names) if name]


def _schema_jobs(client: Any, status: str | None) -> list[Any]:
    if status is None:
        return list(client.list_jobs())
    wanted = _split_statuses(status)
    if not wanted:
        raise ValueError("--status needs at least one status name")
    if any(name not in ACTIVE_STATUSES for name in wanted):
        # A settled status is answered by reading every job anyway; do it once and filter here.
        requests: Iterable[str | None] = [None]
    else:
        requests = dict.fromkeys(_REQUEST_STATUS.get(name, name) for name in wanted)
    seen: set[str] = set()
    rows: list[Any] = []
    for request_status in requests:
        for job in client.list_jobs(status=request_status):
            if not isinstance(job, dict) or normalize_status(job.get("status")) not in wanted:
                continue
            key = str(job.get("job_id"))
            if key in seen:
                continue
            seen.add(key)
            rows.append(job)
    return rows


def _account_status(status: str | None) -> str | None:
    if status is None:
        return None
    names = [_ACCOUNT_DONE if name == "done" else name for name in _split_statuses(status)]
    return ",".join(dict.fromkeys(",".join(names).split(","))) or None


def list_jobs(
    *,
    status: Annotated[
        str | None,
        Parameter(help="Only jobs in this status (comma list allowed), e.g. running or failed."),
    ] = None,
    all_: Annotated[
        bool,
        Parameter(name="--all", negative=(), help="List jobs across the account, page by page."),
    ] = False,
    database: Annotated[str | None, Parameter(help="With --all: only jobs in this database.")] = None,
    schema: Annotated[
        str | None, Parameter(help="With --all: only jobs in this schema (needs --database).")
    ] = None,
    submitted_by: Annotated[str | None, Parameter(help="With --all: only jobs this user submitted.")] = None,
    created_after: Annotated[
        str | None, Parameter(help="With --all: created at or after this time (RFC 3339 or YYYY-MM-DD).")
    ] = None,
    created_before: Annotated[
        str | None, Parameter(help="With --all: created before this time (RFC 3339 or YYYY-MM-DD).")
    ] = None,
    limit: Annotated[int | None, Parameter(help="With --all: stop after this many jobs.")] = None,
    page_size: Annotated[
        int | None, Parameter(help="With --all: jobs per page, 1 to 1000 (default 100).")
    ] = None,
) -> None:
    """List jobs as {"jobs": [...]}.

    Without --all: the jobs of the connection's schema, oldest first. --status takes one or more
    statuses; active ones (pending, placing, initializing, running) are asked of the service one
    by one, any other status reads every job, and the rows are filtered here either way.

    With --all: the account-level list across every database and schema the role can see,
    following next_page_token until the end or --limit (which keeps the newest jobs), printed in
    the same order. Each job also carries database_name and schema_name. --status done means
    cancelled and terminated.
    """
    account_only = {
        "--database": database,
        "--schema": schema,
        "--submitted-by": submitted_by,
        "--created-after": created_after,
        "--created-before": created_before,
        "--limit": limit,
        "--page-size": page_size,
    }
    if not all_:
        given = [flag for flag, value in account_only.items() if value is not None]
        if given:
            raise ValueError(f"{', '.join(given)} only apply with --all (the account-level list)")
        output.emit({"jobs": oldest_first(_schema_jobs(context.client(), status))})
        return
    if limit is not None and limit < 1:
        raise ValueError("--limit must be a positive integer")
    kwargs: dict[str, Any] = {
        "database": database,
        "schema": schema,
        "status": _account_status(status),
        "submitted_by": submitted_by,
        "created_after": created_after,
        "created_before": created_before,
    }
    if page_size is not None:
        kwargs["page_size"] = page_size
    jobs: list[Any] = []
    for job in context.client().iter_jobs(**kwargs):
        jobs.append(job)
        if limit is not None and len(jobs) >= limit:
            break
    output.emit({"jobs": oldest_first(jobs)})
