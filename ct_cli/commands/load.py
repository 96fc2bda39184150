"""`ct --job JOB load CHECKPOINT_ID [--source-job-id] [--target-sub-job-id] [--no-poll]`."""

from __future__ import annotations

from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output
from ct_cli.commands._job import Extra, MisplacedJob, running_job
from ct_cli.commands._missing import name_what_is_missing
from ct_cli.commands._waiting import wait_for_request


def load(
    checkpoint_id: Annotated[str, Parameter(help="The checkpoint to load (a cp_<uuid> id).")],
    /,
    *extra: Extra,
    source_job_id: Annotated[str | None, Parameter(help="Load from this job's checkpoints.")] = None,
    target_sub_job_id: Annotated[
        str | None, Parameter(help="The training sub-job to load into (default: the job's training sub-job).")
    ] = None,
    no_poll: Annotated[bool, Parameter(negative=(), help="Print the request id without waiting.")] = False,
    job: MisplacedJob = None,
) -> None:
    """Load a saved checkpoint into the running job's training sub-job.

    Prints {"checkpoint_id", "job_id", "request_id", "source_job_id", "target_sub_job_id", "result"}
    (the optional keys only when given, result only when waited for).
    """
    job_id = running_job("load", "CHECKPOINT_ID", extra=extra, misplaced_job=job)
    client = context.client()
    with name_what_is_missing(client, job_id, checkpoint_id=checkpoint_id, source_job_id=source_job_id):
        request_id = client.load(job_id, checkpoint_id, source_job_id, target_sub_job_id=target_sub_job_id)
    answer: dict[str, Any] = {"checkpoint_id": checkpoint_id, "job_id": job_id, "request_id": request_id}
    if source_job_id is not None:
        answer["source_job_id"] = source_job_id
    if target_sub_job_id is not None:
        answer["target_sub_job_id"] = target_sub_job_id
    if not no_poll:
        answer["result"] = wait_for_request(job_id, request_id, "load")
    output.emit(answer)
