"""Error answers of the local server, shaped as the service's own (message and code, or detail).

Handlers raise :class:`ServiceError` (a ``{"message", "code"}`` body) or
:class:`RequestValidationError` (a ``{"detail": [...]}`` body); the app turns both into JSON
responses. The codes and message templates the contract fixes live here, so every route
refuses the same way.
"""

from __future__ import annotations

from typing import Any

from ct_core import constants

# Access-control codes of the service; those the client also reads are ct_core.constants' own.
CODE_JOB_NOT_FOUND = constants.JOB_NOT_FOUND_CODE
CODE_INVALID_REQUEST = constants.BAD_REQUEST_CODE
CODE_UNSUPPORTED_HARDWARE = constants.UNSUPPORTED_HARDWARE_CODE
CODE_UNSUPPORTED_MODEL = "517650"
CODE_NO_CREATE_PRIVILEGE = "003001"


class ServiceError(Exception):
    """An error the service reports as ``{"message": ..., "code": ...}`` with an HTTP status."""

    def __init__(self, status: int, message: str, code: str | int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        # Further keys of the body, such as the chunk_group_id of a chunk-group error.
        self.extra: dict[str, Any] = {}

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {**self.extra, "message": self.message}
        if self.code is not None:
            body["code"] = self.code
        return body


class RequestValidationError(Exception):
    """A malformed request body, reported as ``{"detail": [{"loc", "msg", "type"}, ...]}`` (422)."""

    status = 422

    def __init__(self, problems: list[tuple[list[str | int], str]]) -> None:
        super().__init__("; ".join(msg for _, msg in problems))
        self.problems = problems

    def body(self) -> dict[str, Any]:
        return {
            "detail": [
                {"loc": ["body", *loc], "msg": msg, "type": "value_error"} for loc, msg in self.problems
            ]
        }


def job_not_found(job_id: str, schema: str) -> ServiceError:
    # The same answer whether the job is missing or owned by another role.
    return ServiceError(404, f"Training job {job_id} not found in {schema}", CODE_JOB_NOT_FOUND)


def invalid_request(message: str) -> ServiceError:
    return ServiceError(400, message, CODE_INVALID_REQUEST)


def schema_not_found(database: str, schema: str) -> ServiceError:
    return invalid_request(f"Schema {database}.{schema} is not found or not authorized")


def no_create_privilege(role: str, account: str) -> ServiceError:
    return ServiceError(
        403,
        f"Job creation refused. Your primary role {role} must have USE CORTEX TRAINING granted on "
        f"ACCOUNT {account}.",
        CODE_NO_CREATE_PRIVILEGE,
    )


def unsupported_hardware(hardware: str, supported: list[str]) -> ServiceError:
    return ServiceError(
        409,
        f'Cortex training getCapacity failed: unsupported hardware "{hardware}": '
        f"supported hardware is {', '.join(supported)}",
        CODE_UNSUPPORTED_HARDWARE,
    )


def unsupported_model(model: str, kind: str) -> ServiceError:
    """A job or deployment of a model the server does not serve; ``kind`` is "model deployment",
    "training job" or "sampling job". The service's sentence comes first, then where the local
    server's list comes from."""
    return ServiceError(
        400,
        f"Unsupported model for a {kind}: {model}. This local server serves the models "
        "GET /api/v2/cortex-training/models lists (`ct local serve --model NAME` chooses them)",
        CODE_UNSUPPORTED_MODEL,
    )


def conflict(message: str) -> ServiceError:
    # The service's generic conflict body carries the HTTP status as its code.
    return ServiceError(409, message, 409)


def not_implemented(what: str) -> ServiceError:
    return ServiceError(501, f"{what} is not implemented by this local server yet", 501)


def not_running(job_id: str, status: str) -> ServiceError:
    # Data-plane calls need a running job. 409 is what clients retry while a job starts.
    return ServiceError(409, f"Training job {job_id} is {status}; data-plane calls need a running job", 409)


def gone(message: str) -> ServiceError:
    return ServiceError(410, message, 410)


def unauthorized() -> ServiceError:
    return ServiceError(401, "Authentication required: send Authorization: Bearer <token>", 401)
