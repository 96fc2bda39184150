"""`ct logs JOB_ID [--sub-job-id ID] [--follow] [--max-lines N] [--json]`: a running job's live log lines.

The job id is an argument, like every other command that names a job; the global `--job` (the
older spelling, placed before the command) is still read when no argument is given. On a job with
several sub-jobs and no `--sub-job-id`, the training sub-job is read and stderr says so. A `--follow`
that ends because the job ended says where the saved console is (`ct download-log`).
"""

from __future__ import annotations

from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output


def _line(entry: object) -> str:
    if isinstance(entry, dict):
        raw = entry.get("_raw")
        if isinstance(raw, str):
            return raw
    return str(entry)


def _job_id(argument: str | None) -> str:
    from ct_cli.app import UsageError

    global_job = context.current().options.job
    if argument and global_job and argument != global_job:
        raise UsageError(f"logs got two jobs, {argument} and --job {global_job}: give one, as ct logs JOB_ID")
    job_id = argument or global_job
    if not job_id:
        raise UsageError("logs needs the job: ct logs JOB_ID")
    return job_id


def _default_sub_job(client: Any, job_id: str) -> str | None:
    """The sub-job to read when none was named: None (the service's choice) for a job with one sub-job,
    the training sub-job of a job with several."""
    from ct_core.control.polling import TERMINAL_JOB_STATES, normalize_job_status
    from ct_core.ids import find_sub_jobs

    job = client.get_job(job_id)
    entries = [entry for entry in job.get("sub_jobs") or [] if isinstance(entry, dict)]
    if len(entries) < 2:
        return None
    names = [str(entry.get("sub_job_id")) for entry in entries]
    training = find_sub_jobs(job, "training")
    if normalize_job_status(job.get("status")) in TERMINAL_JOB_STATES:
        # Reading fails at once with the saved-console pointer; which sub-job is not worth a line.
        return str(training[0].get("sub_job_id")) if training else names[0]
    if not training:
        raise ValueError(
            f"job {job_id} has several sub-jobs and none is a training sub-job: "
            f"choose one with --sub-job-id ({', '.join(names)})"
        )
    chosen = str(training[0].get("sub_job_id"))
    others = ", ".join(name for name in names if name != chosen)
    output.progress(
        f"job {job_id} has {len(entries)} sub-jobs; reading the training sub-job {chosen} "
        f"(another with --sub-job-id: {others})"
    )
    return chosen


def _ended_notice(client: Any, job_id: str) -> str:
    """What stderr says when a followed log ends: the job's state, and where its saved console is."""
    from ct_core.errors import CTError

    try:
        status = client.get_job(job_id).get("status")
    except CTError:
        status = None
    state = f" (the job is {status})" if status else ""
    return (
        f"the live log of job {job_id} has ended{state}; download its saved console with: "
        f"ct download-log {job_id} --log-type stdout"
    )


def logs(
    job_id: Annotated[
        str | None, Parameter(help="The job whose log to read (default: the global --job).")
    ] = None,
    /,
    *,
    sub_job: Annotated[
        str | None,
        Parameter(
            name=["--sub-job-id", "--sub-job"],
            help="The sub-job whose log to read, e.g. JOB:training:0 (default: the training sub-job).",
        ),
    ] = None,
    follow: Annotated[
        bool, Parameter(negative=(), help="Keep printing new lines until the job's log ends.")
    ] = False,
    max_lines: Annotated[
        int | None, Parameter(help="Start with the newest N lines instead of the whole log.")
    ] = None,
    json: Annotated[
        bool,
        Parameter(negative=(), help='Print one JSON document {"job_id", "entries": [...]} instead of lines.'),
    ] = False,
) -> None:
    """Print a running job's live log, one "<time> <line>" per line.

    Without --follow it stops once it has caught up. With --follow it keeps reading until the job
    ends, then says where the saved console is. A job with several sub-jobs is read from its training
    sub-job unless --sub-job-id names another. After the job ended, live logs are gone: use
    `ct download-log JOB_ID --log-type stdout` for the saved console.
    """
    job_id = _job_id(job_id)
    if json and follow:
        raise ValueError("--json cannot be combined with --follow")
    client = context.client()
    if sub_job is None:
        sub_job = _default_sub_job(client, job_id)
    entries = client.stream_logs(job_id, sub_job_id=sub_job, max_lines=max_lines, follow=follow)
    if json:
        collected = list(entries)
        output.emit({"entries": collected, "job_id": job_id, "sub_job_id": sub_job})
        return
    try:
        for entry in entries:
            output.emit_text(_line(entry))
    finally:
        entries.close()
    if follow:
        # A followed stream ends only when the log can never grow again: the job has ended or is ending.
        output.progress(_ended_notice(client, job_id))
