"""`ct --job JOB fwd-bwd FILE|-`: one forward/backward pass from a readable JSON batch."""

from __future__ import annotations

from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output
from ct_cli.commands._job import Extra, MisplacedJob, running_job
from ct_cli.commands._waiting import wait_for_request


def fwd_bwd(
    file: Annotated[
        str,
        Parameter(
            allow_leading_hyphen=True, help="fwd-bwd JSON (kwargs, input_ids or texts), or - for stdin."
        ),
    ],
    /,
    *extra: Extra,
    job: MisplacedJob = None,
) -> None:
    """Run a forward plus backward pass on the job's training sub-job.

    The JSON holds tensor kwargs ({"kwargs": {"input_ids": {"data": [[...]], "dtype": "long"}}}), or
    input_ids, or texts read with the tokenizer named ("byte", a folder or a cached Hugging Face
    name, all offline; none named: the job's model's own), plus label options (label_strategy
    next_token, input_ids, none, or tensor data; ignore_index; mask_padding; position_ids), optionally
    under "payload". A top-level "poll": false prints the request id without waiting.
    Prints {"job_id", "payload_size_bytes", "request_id", "result"}.
    """
    from ct_cli.commands.submit import read_json_object
    from ct_core.data import payloads

    job_id = running_job("fwd-bwd", "FILE", extra=extra, misplaced_job=job)
    spec = read_json_object(file, what="fwd-bwd")
    poll = spec.get("poll", True)
    if not isinstance(poll, bool):
        raise ValueError("fwd-bwd poll must be a boolean")
    client = context.client()
    # Texts with no tokenizer named are read with the job's model's own.
    tokenizer = payloads.job_tokenizer(client, job_id) if payloads.needs_job_tokenizer(spec) else None
    frame = payloads.build_forward_backward_payload(spec, tokenizer=tokenizer)
    request_id = client.forward_backward(job_id, frame)
    answer: dict[str, Any] = {"job_id": job_id, "payload_size_bytes": len(frame), "request_id": request_id}
    if poll:
        answer["result"] = wait_for_request(job_id, request_id, "fwd-bwd")
    output.emit(answer)
