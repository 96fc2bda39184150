"""`ct --job JOB save [--type resumable|weights-only] [--no-poll]`: save a checkpoint."""

from __future__ import annotations

from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output
from ct_cli.commands._job import Extra, MisplacedJob, running_job
from ct_cli.commands._waiting import wait_for_request


def save(
    *extra: Extra,
    type: Annotated[
        str | None,
        Parameter(
            name="--type", help="resumable (weights plus optimizer state, the default) or weights-only."
        ),
    ] = None,
    no_poll: Annotated[bool, Parameter(negative=(), help="Print the request id without waiting.")] = False,
    job: MisplacedJob = None,
) -> None:
    """Save a checkpoint of the job's training sub-job.

    The service names the checkpoint; once the save finished, its durable cp_<uuid> id is printed as
    checkpoint_id (use it with load or checkpoints). Prints {"job_id", "request_id", "checkpoint_type",
    "checkpoint_id", "result"}.
    """
    from ct_core.data.plane import checkpoint_id_from_save_result, normalize_checkpoint_type

    job_id = running_job("save", extra=extra, misplaced_job=job)
    checkpoint_type = normalize_checkpoint_type(type) if type is not None else None
    client = context.client()
    request_id = client.save(job_id, checkpoint_type=checkpoint_type)
    answer: dict[str, Any] = {"job_id": job_id, "request_id": request_id, "checkpoint_type": checkpoint_type}
    if not no_poll:
        result = wait_for_request(job_id, request_id, "save")
        answer["result"] = result
        try:
            answer["checkpoint_id"] = checkpoint_id_from_save_result(result)
        except ValueError:
            output.warn("the save result names no checkpoint id; see `ct checkpoints JOB_ID`")
    output.emit(answer)
