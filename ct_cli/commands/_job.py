"""The job of the commands that act on one running job (fwd-bwd, step, save, load, weight-sync, generate).

They read it from the global `--job` given before the command, as the reference CLI does. Two
slips are common when coming from the job-id commands (`ct cancel JOB_ID`): the job id typed as an
argument, and `--job` typed after the command. Each command takes both in hidden parameters only to
refuse them with a usage error that shows the right form, instead of the parser's own wording.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from cyclopts import Parameter

from ct_cli import context

#: The hidden `*extra` arguments of a job command: anything past its own positional arguments.
Extra = Annotated[str, Parameter(show=False)]
#: The hidden `--job` / `--job-id` of a job command: the global option, typed after the command.
MisplacedJob = Annotated[str | None, Parameter(name=["--job", "--job-id"], show=False)]


def running_job(
    command: str,
    arguments: str = "",
    *,
    extra: Sequence[str] = (),
    misplaced_job: str | None = None,
) -> str:
    """The global `--job` of `command`, whose own positional arguments are `arguments` (for the usage).

    Raises `UsageError` (exit 2) for a job id given after the command, as an argument or as `--job`.
    """
    from ct_cli.app import UsageError

    right_form = f"ct --job JOB_ID {command}" + (f" {arguments}" if arguments else "")
    if misplaced_job is not None:
        raise UsageError(
            f"--job is a global option of ct, not an option of {command}: "
            f"put it before the command: {right_form}"
        )
    if extra:
        wanted = f"one argument, {arguments}" if arguments else "no arguments"
        given = " ".join(repr(token) for token in extra)
        raise UsageError(
            f"{command} takes {wanted}, so {given} is left over. The job is not an argument: "
            f"give it with the global --job, before the command: {right_form}"
        )
    return context.current().require_job(command)
