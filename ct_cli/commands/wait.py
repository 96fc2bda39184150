"""`ct wait JOB_ID`: block until a job is running, then print its record."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from ct_cli import context, output


def wait(job_id: Annotated[str, Parameter(help="The job to wait for.")], /) -> None:
    """Wait until JOB_ID is running (not finished) and print the job record.

    Fails at once when the job fails, is cancelled or terminated; gives up after the global
    --poll-timeout.
    """
    output.progress(f"waiting until job {job_id} is running")
    output.emit(context.client().wait_for_job(job_id))
