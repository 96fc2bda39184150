"""`ct submit FILE|-`: create a job from a create-job JSON body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output

#: The body keys the service assigns itself; a body carrying one is refused.
_SERVER_ASSIGNED_KEYS = ("job_id",)

#: Why `submit --job-id` (an option of the reference CLI) is refused rather than sent.
REMOVED_JOB_ID = (
    "submit --job-id was removed: it wrote a top-level job_id into the create body, and the service "
    "assigns every new job its id and refuses a body that sets one. Submit without it; the id the "
    "service chose is printed as job_id. (Before the command, --job-id is the global --job, which "
    "submit does not use.)"
)


def read_json_object(path: str, *, what: str = "job") -> dict[str, Any]:
    """Read one JSON object from a file, or from stdin when `path` is `-`."""
    if path == "-":
        raw = context.current().stdin.read()
    else:
        raw = Path(path).expanduser().read_text(encoding="utf-8")
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"invalid JSON in {path}: {error}") from error
    if isinstance(document, dict):
        return document
    raise ValueError(f"{what} JSON must be an object")


def check_body_shape(body: dict[str, Any]) -> None:
    """The CLI's own first checks, worded as the reference CLI words them."""
    sub_jobs = body.get("sub_job_configs")
    if not isinstance(sub_jobs, list) or not sub_jobs:
        raise ValueError("job JSON must contain a non-empty sub_job_configs list")
    for key in _SERVER_ASSIGNED_KEYS:
        if key in body:
            raise ValueError(f"job JSON must not set {key}: the service assigns it")


def submit(
    file: Annotated[
        str, Parameter(allow_leading_hyphen=True, help="Create-job JSON body, or - to read it from stdin.")
    ],
    /,
    *,
    dry_run: Annotated[
        bool, Parameter(negative=(), help="Validate and print the normalized body; send nothing.")
    ] = False,
    wait: Annotated[
        bool, Parameter(negative=(), help="After creating the job, wait until it is running.")
    ] = False,
    job_id: Annotated[str | None, Parameter(name="--job-id", show=False)] = None,
) -> None:
    """Create a Cortex Training job from a create-job JSON body.

    The body gets every client-side check the SDK runs (non-empty sub_job_configs, at most one
    training sub-job, no log-probability sub-jobs, timeouts, ZeRO-3, plugin validators) before
    anything is sent. Prints {"job_id": ...}, or the job record with --wait.
    """
    from ct_cli.app import UsageError
    from ct_core.config.validation import validate_create_body

    if job_id is not None:
        raise UsageError(REMOVED_JOB_ID)
    chosen = context.current().options.job
    if chosen:
        output.warn(f"submit ignores --job {chosen}: the service assigns the new job's id")
    body = read_json_object(file)
    check_body_shape(body)
    normalized = validate_create_body(body)
    if dry_run:
        # No client is built: --dry-run needs no connection and reads no login state.
        output.emit(normalized)
        return
    client = context.client()
    response = client.create_job_from_body(body)
    if not wait:
        output.emit(response)
        return
    job_id = response.get("job_id") if isinstance(response, dict) else None
    if not job_id:
        raise ValueError("submit --wait requires the create response to include job_id")
    output.progress(f"created job {job_id}; waiting until it is running")
    output.emit(client.wait_for_job(str(job_id)))
