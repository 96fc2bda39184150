"""Errors raised by the deployment methods, and the rewrite of HTTP errors in deployment terms.

A deployment is a job underneath, but its users never see the job: every HTTP error from a
deployment method is re-raised with the deployment id in place of the backing job and sub-job ids,
keeping the server's status, code, message and request id, and never the URL or the raw body.
"""

from __future__ import annotations

import re
from typing import Any

from ct_core import errors as core_errors
from ct_core.constants import JOB_NOT_FOUND_CODE


class ModelDeploymentError(core_errors.APIError):
    """An HTTP error of a deployment method, worded for the deployment."""


class ModelDeploymentNotFound(ModelDeploymentError):
    """The server's job-not-found answer for a deployment lookup (final at once, no grace)."""

    hint = (
        "check the deployment id (sf-ct-...), database and schema; a deployment is visible only to "
        "its owner role (ct model-deployment list shows yours)"
    )


#: The next step under a 404 that names a deployment but is not the management API's job-not-found
#: answer (the endpoint's model_not_found, say).
DEPLOYMENT_404_HINT = (
    "check the deployment id (sf-ct-...), database and schema; only a READY deployment of your role "
    "answers (ct model-deployment list shows yours)"
)

#: The next step under a 404 of a call that names no deployment yet (create).
LOCATION_404_HINT = "check the database and schema (--database, --schema) the deployment is made in"


class DeploymentSpecError(core_errors.ValidationError):
    """A deployment spec failed the client-side checks; `.problems` lists every one."""

    hint = "the rules of a spec are in docs/model-deployments.md (The spec)"

    def __str__(self) -> str:
        if len(self.problems) > 1:
            # One line per problem under a heading that says what was checked: the spec, not a job.
            return core_errors.redact_known("the deployment spec is invalid:\n" + "\n".join(self.problems))
        return super().__str__()


class MalformedDeploymentRecord(core_errors.CTError, ValueError):
    """A job that claims to be a deployment but whose counts cannot be right."""


class MalformedDeploymentWarning(core_errors.CTError, UserWarning):
    """A deployment left out of a listing because its record is malformed (the message names it)."""


class ModelDeploymentWaitError(core_errors.CTError, RuntimeError):
    """The deployment failed, was terminated or dropped while being waited for."""

    def __init__(self, message: str, *, deployment: dict[str, Any]) -> None:
        super().__init__(message)
        self.deployment = deployment


class ModelDeploymentWaitTimeout(core_errors.CTError, TimeoutError):
    """The wait ran out of time; the deployment keeps running and holding GPUs."""

    def __init__(self, message: str, *, deployment: dict[str, Any]) -> None:
        super().__init__(message)
        self.deployment = deployment


def replace_backing_ids(text: str, job_id: str, deployment_id: str) -> str:
    """Put the deployment id wherever the backing job id or one of its sub-job ids appears."""
    if not text or not job_id:
        return text
    # One pass over job ids with an optional sub-job tail (<job>:<type>:<n>), skipping ids that
    # already read as the deployment id (it contains the job id, so a second pass would re-prefix it).
    prefix = deployment_id[: -len(job_id)] if deployment_id.endswith(job_id) else ""
    guard = f"(?<!{re.escape(prefix)})" if prefix else ""
    pattern = re.compile(guard + re.escape(job_id) + r"(?::[A-Za-z_]+:\d+)?")
    return pattern.sub(deployment_id, text)


def rewrite_api_error(
    error: core_errors.APIError,
    *,
    deployment_id: str | None,
    job_id: str | None,
    database: str,
    schema: str,
    hint: str | None = None,
) -> ModelDeploymentError:
    """The deployment-worded form of an HTTP error raised while serving a deployment method.

    `hint` is the next step for a 404 the caller knows more about (a checkpoint source's job, say);
    a 404 naming a deployment gets the deployment's. Other statuses get none, so the command line
    can show the service's validation details instead.
    """
    kwargs: dict[str, Any] = {
        "response": error.response,
        "status_code": error.status_code,
        "code": error.code,
        "request_id": error.request_id,
        "server_message": error.server_message,
    }
    if deployment_id is not None and error.status_code == 404 and str(error.code) == JOB_NOT_FOUND_CODE:
        return ModelDeploymentNotFound(
            f"model deployment {deployment_id} not found in {database}.{schema}", **kwargs
        )
    subject = f"model deployment {deployment_id}" if deployment_id else "model deployment"
    message = f"{subject} request failed with HTTP {error.status_code}"
    if error.code is not None:
        message += f" ({error.code})"
    server_message = error.server_message or ""
    if deployment_id and job_id:
        server_message = replace_backing_ids(server_message, job_id, deployment_id)
    if server_message:
        message += f": {core_errors.redact_secrets(server_message)}"
    if error.request_id:
        message += f" (snowflake request id: {error.request_id})"
    reworded = ModelDeploymentError(message, **kwargs)
    if error.status_code == 404:
        reworded.hint = hint or (DEPLOYMENT_404_HINT if deployment_id else LOCATION_404_HINT)
    return reworded


def rewrite_connection_error(
    error: core_errors.CTConnectionError, *, deployment_id: str | None, job_id: str | None
) -> core_errors.CTConnectionError:
    """A connection or timeout failure of a deployment method, without the request URL or backing id.

    The class is kept (a timeout stays a CTTimeoutError, a certificate failure a TLSVerificationError),
    so callers that tell them apart still can; only the wording changes, as for HTTP errors.
    """
    text = str(error)
    if error.url:
        text = text.replace(f" for url: {error.url}", "").replace(error.url, "<url>")
    if deployment_id and job_id:
        text = replace_backing_ids(text, job_id, deployment_id)
    subject = f"model deployment {deployment_id}" if deployment_id else "model deployment"
    return type(error)(f"{subject} request failed: {text}", url=None, never_sent=error.never_sent)
