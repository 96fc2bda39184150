"""The service answered with an error status: `APIError`, its subclasses, and how one is built.

Part of the package `ct_core.errors` (import from there). `api_error_from_response` builds the right
`APIError` for an answer; the transport calls it. Each error is also a `requests.HTTPError`, the type
the reference client raised, so ported code that catches that keeps working: that base class is why
this module is apart from `ct_core.errors.base` and loads only when an error is first named, not
with every command line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

# Only for the base class of APIError; ct sends nothing through requests.
import requests

from ct_core.constants import BAD_REQUEST_CODE, REQUEST_ID_HEADER
from ct_core.errors.base import (
    PAT_REJECTED_HINT,
    CTConnectionError,
    CTError,
    CTTimeoutError,
    OutcomeUnknownAfterConnectionLoss,
    OutcomeUnknownAfterTimeout,
    RequestOutcomeUnknown,
    TLSVerificationError,
    authorization_secrets,
    iter_error_objects,
    redact_known,
    redact_secrets,
    remember_secrets,
    response_json,
    shorten,
    with_pat_rejected_hint,
)

if TYPE_CHECKING:
    import httpx

# --------------------------------------------------------------------------------------------------
# The service answered with an error status
# --------------------------------------------------------------------------------------------------


class APIError(CTError, requests.HTTPError):
    """The service answered with a status that is not a success.

    `str(err)` is the enriched message (see `api_error_from_response`); `.response` is the service's
    answer, unchanged (an `httpx.Response`: `.status_code`, `.headers`, `.json()`, `.text`).

    It is also a `requests.HTTPError`, the type the reference client raised, so code written for that
    (`except requests.HTTPError as e: e.response.status_code`) catches every APIError unchanged.
    `.request` is the request that got this answer, when known.
    """

    response: httpx.Response | None  # type: ignore[assignment]
    request: httpx.Request | None  # type: ignore[assignment]

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response | None = None,
        status_code: int | None = None,
        code: str | None = None,
        request_id: str | None = None,
        server_message: str | None = None,
    ) -> None:
        # Only the message goes up: requests' own constructor would probe `response.request`, which
        # an httpx answer without a request refuses with RuntimeError rather than AttributeError.
        super().__init__(message)
        self.response = response
        self.request = _request_of(response)
        self.status_code = status_code if status_code is not None else _status_of(response)
        self.code = code
        self.request_id = request_id
        self.server_message = server_message

    @property
    def url(self) -> str | None:
        if self.response is None:
            return None
        try:
            return str(self.response.request.url)
        except RuntimeError:
            return None


class UnexpectedRedirectError(APIError):
    """A 3xx answer: redirects are never followed."""


class BadRequestError(APIError):
    """400: an invalid request, or a refused privilege (code 517602)."""


class DatabaseAccessError(BadRequestError):
    """400 517602 for the database/schema in the request path; ct never creates it for you."""


class InvalidPageToken(BadRequestError):
    """400 `Invalid page_token` from the account-level job list: start again from the first page."""


class _FieldError(BadRequestError):
    """A 400 whose body may name the input at fault in `field` (the runs service's error body)."""

    def __init__(self, message: str, *, field: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.field = field
        if field:
            self.hint = f"the refused input is {field}"


class InvalidArgumentError(_FieldError):
    """400 `invalid_argument`: a value of the request is wrong (an unknown key, a bound); `.field`
    names it when the service said which."""


class FailedPreconditionError(_FieldError):
    """400 `failed_precondition`: the request is well formed but the state refuses it, for example a
    run on a dataset whose build failed its leakage gates."""


class AuthenticationError(APIError):
    """401: the credential was not accepted."""


class PATRejectedError(AuthenticationError):
    """Snowflake refused a programmatic access token.

    Raised for a 401 on a direct-PAT request, and when the Connector refuses a profile's token at
    sign-in (errno 394400). The message is the original error followed by what to check; `.hint`
    holds those next steps alone and `.errno` the Connector's error number, when there is one.
    """

    def __init__(self, message: str, *, hint: str, errno: int | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.hint = hint
        self.errno = errno


class PermissionDeniedError(APIError):
    """403: the role lacks a privilege (for job creation: USE CORTEX TRAINING, code 003001)."""


class NotFoundError(APIError):
    """404: not found, or not owned by the calling role (code 517601)."""


class MethodNotAllowedError(APIError):
    """405: for example the REST API is turned off for the account."""


class ConflictError(APIError):
    """409: a conflicting state, for example cancelling a failed job or unsupported hardware."""


class JobNotRunningError(ConflictError):
    """409 to a data-plane call because the job is not running (pending, cancelled, failed, terminated).

    The client read the job once after the first such answer and stopped retrying: the conflict is
    the job's state, not a restarting zone. `.job_id` and `.job_status` name the job and the status
    it was read in; `.reason` is the job's own reason, when it has one.
    """

    def __init__(
        self, message: str, *, job_id: str, job_status: str, reason: str = "", **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.job_id = job_id
        self.job_status = job_status
        self.reason = reason


class RateLimitError(APIError):
    """429: too many requests."""


class ServerError(APIError):
    """5xx: the service or a proxy in front of it failed."""


class AccountJobListUnavailable(APIError):
    """The account-level job list cannot be used here.

    `.reason` is `forbidden` (403), `not_deployed` (404 with an empty body), `disabled` (404 with the
    service's JSON) or `rest_disabled` (405).
    """

    def __init__(self, message: str, *, reason: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.reason = reason


class ChunkGroupError(APIError):
    """A structured request-chunk-group failure; `.detail` is the service's error object."""

    def __init__(self, message: str, *, detail: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.detail = dict(detail or {})


class ChunkGroupRestartError(ChunkGroupError):
    """The service lost an incomplete chunk group and the bounded replay also failed."""


class ChunkGroupConflictError(ChunkGroupError):
    """One chunk-group identity was reused with different content."""


class OutcomeUnknownAfterServerError(RequestOutcomeUnknown, ServerError):
    """500, 502 or 504 after the request was sent: the service (or a proxy) may have run it."""


#: Statuses after which a sent request may or may not have run (a proxy can fail after the service ran it).
OUTCOME_UNKNOWN_STATUSES = frozenset({500, 502, 504})


def outcome_is_unknown(error: BaseException) -> bool:
    """True when `error`, raised for a request that was sent, leaves open whether the server ran it."""
    if isinstance(error, CTConnectionError):
        return not error.never_sent and not isinstance(error, TLSVerificationError)
    return isinstance(error, APIError) and error.status_code in OUTCOME_UNKNOWN_STATUSES


def outcome_unknown(
    error: CTConnectionError | APIError, *, operation: str, job_id: str, client_request_id: str
) -> RequestOutcomeUnknown:
    """The `RequestOutcomeUnknown` (of the same family as `error`) for a call whose answer was lost."""
    lookup = f"client.get_request_status({job_id!r}, {client_request_id!r})"
    message = (
        f"{operation} on job {job_id}: the answer was lost after the request was sent "
        f"({shorten(str(error), 300)}), so it may have been applied; it was not sent again. To find out, "
        f"look up request {client_request_id}, the id this client named it with: {lookup} answers with "
        "its status on a server that keeps client ids, as ct local serve does (a 404 means it has not "
        "run: ask again after a while, since a slow request may still be arriving), and the job's "
        "training-metrics rows (ct download-metrics) carry each call's request_id."
    )
    hint = (
        f"the {operation} may have been applied: look up request {client_request_id} of job {job_id} "
        "(get_request_status, or the training-metrics rows) before you run it again"
    )
    built: RequestOutcomeUnknown
    if isinstance(error, APIError):
        built = OutcomeUnknownAfterServerError(
            message,
            response=error.response,
            status_code=error.status_code,
            code=error.code,
            request_id=error.request_id,
            server_message=error.server_message,
        )
    elif isinstance(error, CTTimeoutError):
        built = OutcomeUnknownAfterTimeout(message, url=error.url, never_sent=False)
    else:
        built = OutcomeUnknownAfterConnectionLoss(message, url=error.url, never_sent=False)
    built.operation = operation
    built.job_id = job_id
    built.client_request_id = client_request_id
    built.hint = hint
    return built


# --------------------------------------------------------------------------------------------------
# Building API errors from responses
# --------------------------------------------------------------------------------------------------

_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    429: RateLimitError,
}

#: 400 answers whose service code says more than the status (the runs service's gRPC-style codes).
_BAD_REQUEST_BY_CODE: dict[str, type[_FieldError]] = {
    "invalid_argument": InvalidArgumentError,
    "failed_precondition": FailedPreconditionError,
}
_SCHEMA_NOT_FOUND_RE = re.compile(r"Schema\s+(?P<target>\S+?)\s+is not found or not authorized")


def _request_secrets(response: httpx.Response) -> list[str]:
    # The credential the failed request carried, read off the request the transport recorded.
    try:
        headers = response.request.headers
    except RuntimeError:
        return []
    return authorization_secrets(headers.get("authorization"))


def _status_of(response: httpx.Response | None) -> int | None:
    return None if response is None else response.status_code


def _request_of(response: httpx.Response | None) -> httpx.Request | None:
    if response is None:
        return None
    try:
        return response.request
    except RuntimeError:  # an answer built without its request
        return None


def _code_and_message(body: Any) -> tuple[str | None, str | None]:
    """The first service code anywhere in the body, and the message that goes with it.

    Every object is walked (bounded depth) for a code before a message is chosen: a wrapper such as
    `{"message": "Not Found", "error": {"code": "517601", ...}}` must not hide the code that makes a
    not-found final. The message is the coded object's own, else the first one found, outermost first.
    """

    def message_of(obj: Mapping[str, Any]) -> str | None:
        message = obj.get("message")
        return message if isinstance(message, str) and message else None

    first_message: str | None = None
    for obj in iter_error_objects(body):
        code = obj.get("code", obj.get("error_code"))
        if code is not None and not isinstance(code, (dict, list)):
            return str(code), message_of(obj) or first_message or _first_message(body)
        if first_message is None:
            first_message = message_of(obj)
    return None, first_message


def _field_of(body: Any) -> str | None:
    """The `field` a coded error object names (the input a runs-service refusal is about), if any."""
    for obj in iter_error_objects(body):
        if obj.get("code", obj.get("error_code")) is not None:
            field = obj.get("field")
            return field if isinstance(field, str) and field else None
    return None


def _first_message(body: Any) -> str | None:
    # Only reached when the coded object and everything before it carry no message.
    for obj in iter_error_objects(body):
        message = obj.get("message")
        if isinstance(message, str) and message:
            return message
    return None


def _request_url(response: httpx.Response) -> str:
    try:
        return str(response.request.url)
    except RuntimeError:
        return str(response.url)


def standard_http_message(response: httpx.Response) -> str:
    """The familiar `<status> Client Error: <reason> for url: <url>` line (3xx: `Unexpected redirect`)."""
    status = response.status_code
    url = _request_url(response)
    if 300 <= status < 400:
        return f"Unexpected redirect {status} for url: {url}"
    kind = "Client Error" if status < 500 else "Server Error"
    return f"{status} {kind}: {response.reason_phrase} for url: {url}"


def pat_rejected_from_connector(error: BaseException) -> PATRejectedError:
    """The ct error for a Connector sign-in that failed on the token; the original text is kept."""
    errno = getattr(error, "errno", None)
    original = redact_secrets(str(error) or type(error).__name__)
    return PATRejectedError(
        with_pat_rejected_hint(original),
        hint=PAT_REJECTED_HINT,
        errno=errno if isinstance(errno, int) else None,
        status_code=401,
    )


def api_error_from_response(response: httpx.Response, *, direct_pat: bool = False) -> APIError:
    """Build the `APIError` subclass for a non-success response, with the enriched message.

    `direct_pat` says the request was signed with a programmatic access token by the client itself
    (not a profile session): a 401 then becomes `PATRejectedError` with next steps appended.
    A profile's token was already accepted at sign-in, so its 401s carry no such hint.

    The credential the request was signed with (its Authorization header) is removed by value from
    the message and from `server_message`, whatever surrounds it; anything else that looks like a
    credential is removed by pattern.
    """
    status = response.status_code
    request_id = response.headers.get(REQUEST_ID_HEADER) or None
    body = response_json(response)
    code, server_message = _code_and_message(body) if 400 <= status < 600 else (None, None)
    signed_with = _request_secrets(response)
    remember_secrets(signed_with)
    if server_message is not None:
        server_message = redact_known(server_message, signed_with)
    message = standard_http_message(response)
    if code is not None or server_message is not None:
        suffix = f" ({code})" if code is not None else ""
        if server_message is not None:
            suffix += f": {shorten(redact_secrets(server_message))}"
        message += suffix
    prefix = f"[snowflake request id: {request_id}] " if request_id else ""
    kwargs: dict[str, Any] = {
        "response": response,
        "status_code": status,
        "code": code,
        "request_id": request_id,
        "server_message": server_message,
    }
    if 300 <= status < 400:
        return UnexpectedRedirectError(prefix + message, **kwargs)
    if status == 400 and code == BAD_REQUEST_CODE and server_message:
        match = _SCHEMA_NOT_FOUND_RE.search(server_message)
        if match:
            return DatabaseAccessError(prefix + _database_access_message(match.group("target")), **kwargs)
    if status == 401 and direct_pat:
        return PATRejectedError(with_pat_rejected_hint(prefix + message), hint=PAT_REJECTED_HINT, **kwargs)
    if status == 400 and code in _BAD_REQUEST_BY_CODE:
        return _BAD_REQUEST_BY_CODE[code](prefix + message, field=_field_of(body), **kwargs)
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else APIError)
    return cls(prefix + message, **kwargs)


def _database_access_message(target: str) -> str:
    database = target.split(".", 1)[0]
    return (
        f"the database and schema in the request path ({target}) do not exist or your role cannot use "
        "them; ct never creates them for you. Pass --database/--schema (or database=/schema=) for one "
        f"your role can use, or ask an administrator to run: CREATE DATABASE IF NOT EXISTS {database}; "
        "and grant USAGE on it and on the schema to your role."
    )
