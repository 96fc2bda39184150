"""`ct --job JOB logs [--sub-job ID] [--follow] [--max-lines N] [--json]`: live log lines."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from ct_cli import context, output


def _line(entry: object) -> str:
    if isinstance(entry, dict):
        raw = entry.get("_raw")
        if isinstance(raw, str):
            return raw
    return str(entry)


def logs(
    *,
    sub_job: Annotated[
        str | None,
        Parameter(help="The sub-job whose log to read, e.g. JOB:training:0 (default: the service's)."),
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

    Without --follow it stops once it has caught up. After the job ended, live logs are gone: use
    `ct download-log JOB_ID --log-type stdout` for the saved console.
    """
    job_id = context.current().require_job("logs")
    if json and follow:
        raise ValueError("--json cannot be combined with --follow")
    client = context.client()
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
