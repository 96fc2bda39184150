"""Polling a data-plane request from the CLI, with a progress indicator on stderr.

Commands that wait (fwd-bwd, step, save, load, weight-sync) call `wait_for_request`: one line saying
what is awaited, then a spinner with the elapsed time while stderr is a terminal. stdout is untouched.
"""

from __future__ import annotations

from typing import Any

from ct_cli import context, output


def wait_for_request(job_id: str, request_id: str, what: str) -> Any:
    """Poll `request_id` until it finishes and return its result (errors propagate)."""
    client = context.client()
    output.progress(f"{what}: waiting for request {request_id}")
    stream = output.current().stderr
    if not getattr(stream, "isatty", lambda: False)():
        return client.poll_request(job_id, request_id)
    from rich.console import Console

    console = Console(file=stream)
    with console.status(f"{what} running (request {request_id})", spinner="dots"):
        return client.poll_request(job_id, request_id)
