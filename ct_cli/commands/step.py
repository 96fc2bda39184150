"""`ct --job JOB step [--lr LR]`: one optimizer step."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from ct_cli import context, output
from ct_cli.commands._job import Extra, MisplacedJob, running_job
from ct_cli.commands._waiting import wait_for_request


def step(
    *extra: Extra,
    lr: Annotated[
        float | None,
        Parameter(help="Learning rate for this step. Without it the job's optimizer setting applies."),
    ] = None,
    job: MisplacedJob = None,
) -> None:
    """Apply the accumulated gradients with one optimizer step and wait for it.

    No learning rate is sent unless --lr is given, so the job's own schedule is never overridden.
    Prints {"job_id", "learning_rate", "request_id", "result"}.
    """
    job_id = running_job("step", extra=extra, misplaced_job=job)
    client = context.client()
    request_id = client.step(job_id, lr)
    result = wait_for_request(job_id, request_id, "step")
    output.emit({"job_id": job_id, "learning_rate": lr, "request_id": request_id, "result": result})
