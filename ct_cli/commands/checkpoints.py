"""`ct checkpoints JOB_ID` and `ct delete-checkpoint JOB_ID CHECKPOINT_ID`: list and delete checkpoints."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from ct_cli import context, output
from ct_cli.commands._missing import name_what_is_missing


def checkpoints(job_id: Annotated[str, Parameter(help="The job whose checkpoints to list.")], /) -> None:
    """List the checkpoints of JOB_ID as {"checkpoints": [...]}.

    The service does not promise an order: pick one by created_at, not by position.
    """
    output.emit({"checkpoints": context.client().list_checkpoints(job_id)})


def delete_checkpoint(
    job_id: Annotated[str, Parameter(help="The job that owns the checkpoint.")],
    checkpoint_id: Annotated[str, Parameter(help="The checkpoint to delete, e.g. global_step12.")],
    /,
) -> None:
    """Delete one checkpoint of JOB_ID. Prints {"deleted": true, "job_id": ..., "checkpoint_id": ...}."""
    client = context.client()
    with name_what_is_missing(client, job_id, checkpoint_id=checkpoint_id):
        client.delete_checkpoint(job_id, checkpoint_id)
    output.emit({"checkpoint_id": checkpoint_id, "deleted": True, "job_id": job_id})
