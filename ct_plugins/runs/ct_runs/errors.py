"""The refusals of the runs service, shaped as the service's error body with gRPC-style codes.

Every check of the service raises :class:`RunsRefusal`; the HTTP layer turns it into
``{"message", "code", "field"?}`` with the status its code maps to, so a caller reads the same
code whether a bound, a missing dataset or a leaky build stopped it.
"""

from __future__ import annotations

from typing import Any

from ct_core.errors import CTError

#: HTTP status of each code the service answers with (the usual gRPC-to-HTTP mapping).
STATUS_OF_CODE = {
    "invalid_argument": 400,
    "failed_precondition": 400,
    "unauthenticated": 401,
    "permission_denied": 403,
    "not_found": 404,
    "already_exists": 409,
    # The run's state forbids the request (a resume of a running run, a model of a failed one);
    # the message says what to do instead.
    "aborted": 409,
    "internal": 500,
    # The service is on its way up (or down) and refused before reading the request: the answer
    # carries Retry-After, and the same request may be sent again as it is.
    "unavailable": 503,
}


class RunsRefusal(CTError):
    """A request the runs service refuses; `code` says why, `field` (when known) which input."""

    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        if code not in STATUS_OF_CODE:
            raise ValueError(f"unknown refusal code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field

    @property
    def status(self) -> int:
        return STATUS_OF_CODE[self.code]

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.field is not None:
            body["field"] = self.field
        return body


def invalid_argument(message: str, field: str | None = None) -> RunsRefusal:
    return RunsRefusal("invalid_argument", message, field=field)


def failed_precondition(message: str, field: str | None = None) -> RunsRefusal:
    return RunsRefusal("failed_precondition", message, field=field)


def not_found(message: str) -> RunsRefusal:
    return RunsRefusal("not_found", message)


def aborted(message: str, field: str | None = None) -> RunsRefusal:
    return RunsRefusal("aborted", message, field=field)
