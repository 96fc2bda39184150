"""`ct get JOB_ID`: a create body for a job like this one, or with --raw its record."""

from __future__ import annotations

from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output


def _experiment_name(client: Any, job_id: str) -> str | None:
    from ct_core import errors  # its APIError loads only if one is raised

    try:
        run = client.get_experiment_run(job_id)
    except errors.APIError as exc:
        # The body is still useful without it; the new job then starts a new experiment.
        output.warn(f"could not read the experiment of job {job_id}: {exc}")
        return None
    name = run.get("experiment_name") if isinstance(run, dict) else None
    return name or None


def get(
    job_id: Annotated[str, Parameter(help="The job to describe.")],
    /,
    *,
    raw: Annotated[
        bool, Parameter(negative=(), help="Print the job record as the service returns it.")
    ] = False,
) -> None:
    """Print a create-job body for a new job configured like JOB_ID, in its experiment.

    The body can be edited and passed to `ct submit`. With --raw, print the job record instead.
    """
    client = context.client()
    job = client.get_job(job_id)
    if raw:
        output.emit(job)
        return
    from ct_core.client import create_job_body_from_job

    output.emit(create_job_body_from_job(job, experiment_name=_experiment_name(client, job_id)))
