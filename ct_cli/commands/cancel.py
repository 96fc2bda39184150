"""`ct cancel JOB_ID`: ask the service to cancel a job."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from ct_cli import context, output


def cancel(job_id: Annotated[str, Parameter(help="The job to cancel.")], /) -> None:
    """Cancel JOB_ID. Repeating it while the job is cancelling or cancelled succeeds again.

    Prints {"cancelled": true, "job_id": ...}.
    """
    context.client().cancel_job(job_id)
    output.emit({"cancelled": True, "job_id": job_id})
