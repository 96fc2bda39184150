"""`ct --job JOB weight-sync [...]`: push training weights to sampling sub-jobs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from cyclopts import Parameter

from ct_cli import context, output
from ct_cli.commands._job import Extra, MisplacedJob, running_job
from ct_cli.commands._waiting import wait_for_request


def weight_sync(
    *extra: Extra,
    source_sub_job_id: Annotated[
        str | None, Parameter(help="The training sub-job to read weights from (default JOB:training:0).")
    ] = None,
    target_sub_job_id: Annotated[
        list[str] | None,
        Parameter(help="A sampling sub-job to update; repeat for several (default JOB:sampling:0)."),
    ] = None,
    operation_sub_job_id: Annotated[
        str | None, Parameter(help="Route the operation to this sub-job (default: the source).")
    ] = None,
    operation_sub_job_type: Annotated[
        str | None, Parameter(help="Route the operation by sub-job type (default: training).")
    ] = None,
    weight_format: Annotated[
        Literal["vllm", "hf", "lora"] | None,
        Parameter(help="vllm (the service default), hf (full weights) or lora (adapter only)."),
    ] = None,
    no_poll: Annotated[bool, Parameter(negative=(), help="Print the request id without waiting.")] = False,
    job: MisplacedJob = None,
) -> None:
    """Synchronize the training sub-job's weights into sampling sub-jobs and wait for it.

    Prints {"job_id", "request_id", "source_sub_job_id", "target_sub_job_ids", "weight_format", "result"}.
    """
    job_id = running_job("weight-sync", extra=extra, misplaced_job=job)
    source = source_sub_job_id or f"{job_id}:training:0"
    targets = list(target_sub_job_id or [f"{job_id}:sampling:0"])
    client = context.client()
    submitted = client.weight_sync(
        job_id,
        source,
        targets,
        weight_format=weight_format,
        sub_job_id=operation_sub_job_id,
        sub_job_type=operation_sub_job_type,
    )
    answer: dict[str, Any] = {"job_id": job_id, "source_sub_job_id": source, "target_sub_job_ids": targets}
    if weight_format is not None:
        answer["weight_format"] = weight_format
    if isinstance(submitted, str):
        answer["request_id"] = submitted
        if not no_poll:
            answer["result"] = wait_for_request(job_id, submitted, "weight-sync")
    else:
        # The service finished the sync inline: its answer is the result.
        answer["request_id"] = None
        answer["result"] = submitted
    output.emit(answer)
