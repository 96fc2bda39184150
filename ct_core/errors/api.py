"""The service answered with an error status: `APIError`, its subclasses, the answer they carry.

Part of the package `ct_core.errors` (import from there). `api_error_from_response` builds the right
`APIError` for an answer; the transport calls it. Each error is also a `requests.HTTPError`, the type
the reference client raised, so ported code that catches that keeps working: that base class is why
this module is apart from `ct_core.errors.base` and loads only when an error is first named, not
with every command line.

The answer an error carries is an `ErrorResponse`, ct's own small copy of what ported code reads on a
`requests.Response` (status, case-insensitive headers, body as bytes, text or JSON, `ok`, `reason`,
`url`, `elapsed`, `iter_content`, `raise_for_status`, and its `ErrorRequest`). It is built from the
bytes the connection already read, so a refused request needs no HTTP library beyond the standard
one; requests, already loaded for the base class, lends its case-insensitive header dict.
"""

from __future__ import annotations

import datetime
import http
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

# The base class of APIError, and the header dict and JSON error of a requests.Response; ct sends
# nothing through requests.
import requests
from requests.structures import CaseInsensitiveDict

from ct_core.constants import BAD_REQUEST_CODE, MAX_VALIDATION_DETAILS, REQUEST_ID_HEADER
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
    validation_details,
    with_pat_rejected_hint,
)

# --------------------------------------------------------------------------------------------------
# The answer an error carries
# --------------------------------------------------------------------------------------------------

_RawHeaders = Iterable[tuple[bytes | str, bytes | str]] | Mapping[str, str]


def _header_dict(headers: _RawHeaders) -> CaseInsensitiveDict[str]:
    """Headers as requests gives them: any spelling finds a name, repeated names joined by ", "."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    merged: CaseInsensitiveDict[str] = CaseInsensitiveDict()
    for raw_key, raw_value in pairs:
        key = raw_key.decode("latin-1") if isinstance(raw_key, bytes) else str(raw_key)
        value = raw_value.decode("latin-1") if isinstance(raw_value, bytes) else str(raw_value)
        merged[key] = f"{merged[key]}, {value}" if key in merged else value
    return merged


class ErrorRequest:
    """The request a refused answer replied to: `method`, `url` and the `headers` it was sent with.

    What ported code reads on `requests.PreparedRequest` (`err.request.method`, `.url`, `.headers`).
    The headers include the credential it was signed with, as requests' do; error texts never show it.
    """

    __slots__ = ("headers", "method", "url")

    def __init__(self, method: str, url: str, headers: _RawHeaders = ()) -> None:
        self.method = method.upper()
        self.url = url
        self.headers = _header_dict(headers)

    @property
    def path_url(self) -> str:
        """The path and query of the URL, as requests names it."""
        parts = urlsplit(self.url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    def __repr__(self) -> str:
        return f"<ErrorRequest [{self.method}]>"


class ErrorResponse:
    """A refused answer, read the way ported `requests` code reads `requests.Response`.

    `status_code`, `headers` (case-insensitive), `content` (bytes), `text`, `json()`, `ok`, `reason`,
    `url`, `elapsed` (a `timedelta`, from sending the request to its whole answer), `encoding`,
    `iter_content()`, `iter_lines()`, `raise_for_status()` and `request` (an `ErrorRequest`). As with
    requests, `bool(response)` is `response.ok`. `reason_phrase` and `iter_bytes()` answer too, for
    code written against ct's earlier (httpx) answers.
    """

    def __init__(
        self,
        status_code: int,
        *,
        headers: _RawHeaders = (),
        content: bytes = b"",
        request: ErrorRequest | None = None,
        elapsed: datetime.timedelta | None = None,
        reason: str | None = None,
    ) -> None:
        self.status_code = status_code
        self.headers = _header_dict(headers)
        self.content = content
        self.request = request
        self.elapsed = elapsed if elapsed is not None else datetime.timedelta(0)
        self.reason = reason if reason is not None else _standard_reason(status_code)
        #: How `text` decodes the body: the charset the Content-Type names, else UTF-8 (what the
        #: service sends). Settable, as on a requests.Response.
        self.encoding = _charset(self.headers.get("content-type", "")) or "utf-8"
        #: Earlier answers of redirects followed on the way: ct follows none.
        self.history: list[ErrorResponse] = []

    @property
    def url(self) -> str:
        return self.request.url if self.request is not None else ""

    @property
    def ok(self) -> bool:
        """False for a 4xx or 5xx, as requests says (a 3xx is "ok" there, though ct refuses it)."""
        return self.status_code < 400

    def __bool__(self) -> bool:
        return self.ok

    @property
    def reason_phrase(self) -> str:
        return self.reason

    @property
    def text(self) -> str:
        try:
            return self.content.decode(self.encoding, "replace")
        except LookupError:  # a charset Python does not know
            return self.content.decode("utf-8", "replace")

    def json(self, **kwargs: Any) -> Any:
        """The body as JSON; a body that is not raises `requests.JSONDecodeError` (a ValueError)."""
        try:
            return json.loads(self.text, **kwargs)
        except json.JSONDecodeError as error:
            raise requests.JSONDecodeError(error.msg, error.doc, error.pos) from None

    def iter_content(self, chunk_size: int | None = 1, decode_unicode: bool = False) -> Iterator[Any]:
        """The body in pieces of `chunk_size` bytes (None: whole); str pieces with `decode_unicode`."""
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
            raise TypeError(f"chunk_size must be a positive int or None, not {chunk_size!r}")
        body: bytes | str = self.text if decode_unicode else self.content
        step = chunk_size or max(len(body), 1)
        for start in range(0, len(body), step):
            yield body[start : start + step]

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        yield from self.iter_content(chunk_size)

    def iter_lines(
        self, chunk_size: int = 512, decode_unicode: bool = False, delimiter: Any = None
    ) -> Iterator[Any]:
        """The body's lines, without their endings (split at `delimiter` when one is given)."""
        body: bytes | str = self.text if decode_unicode else self.content
        yield from (body.split(delimiter) if delimiter is not None else body.splitlines())

    def raise_for_status(self) -> None:
        """Raise the `APIError` for this answer: every answer an error carries is one ct refused."""
        raise api_error_from_response(self)

    def close(self) -> None:
        """Nothing to release: the body was read whole."""

    def __enter__(self) -> ErrorResponse:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ErrorResponse [{self.status_code}]>"


def _charset(content_type: str) -> str | None:
    for param in content_type.split(";")[1:]:
        name, _, value = param.strip().partition("=")
        if name.strip().lower() == "charset" and value.strip(" \"'"):
            return value.strip(" \"'")
    return None


def _standard_reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def as_error_response(answer: Any) -> ErrorResponse:
    """`answer` as an `ErrorResponse`: itself, or a copy of another library's response (an
    `httpx.Response` or a `requests.Response` a test or a plugin built) with its request."""
    if isinstance(answer, ErrorResponse):
        return answer
    request: ErrorRequest | None = None
    try:
        sent = answer.request
    except RuntimeError:  # an httpx answer built without its request
        sent = None
    if sent is not None:
        request = ErrorRequest(str(sent.method), str(sent.url), dict(getattr(sent, "headers", None) or {}))
    try:
        elapsed = answer.elapsed
    except RuntimeError:  # httpx measures only answers it read itself
        elapsed = None
    reason = getattr(answer, "reason_phrase", None) or getattr(answer, "reason", None)
    return ErrorResponse(
        int(answer.status_code),
        headers=dict(answer.headers or {}),
        content=bytes(answer.content or b""),
        request=request,
        elapsed=elapsed if isinstance(elapsed, datetime.timedelta) else None,
        reason=str(reason) if reason else None,
    )


# --------------------------------------------------------------------------------------------------
# The service answered with an error status
# --------------------------------------------------------------------------------------------------


class APIError(CTError, requests.HTTPError):
    """The service answered with a status that is not a success.

    `str(err)` leads with what the service said, its message and then its code, followed by the
    request that got the answer (see `api_error_from_response`). `.response` is that answer as an
    `ErrorResponse` (`.status_code`, `.headers`, `.json()`, `.text`, `.ok`, `.reason`, ...), and
    `.request` the `ErrorRequest` it replied to (method and URL), when known. `.server_message` and
    `.code` are the service's reason and code, each None when the body has none.

    It is also a `requests.HTTPError`, the type the reference client raised, so code written for that
    (`except requests.HTTPError as e: e.response.status_code`) catches every APIError unchanged.
    """

    response: ErrorResponse | None  # type: ignore[assignment]
    request: ErrorRequest | None  # type: ignore[assignment]

    def __init__(
        self,
        message: str,
        *,
        response: ErrorResponse | Any | None = None,
        status_code: int | None = None,
        code: str | None = None,
        request_id: str | None = None,
        server_message: str | None = None,
    ) -> None:
        # Only the message goes up: requests' own constructor would probe `response.request`.
        super().__init__(message)
        self.response = None if response is None else as_error_response(response)
        self.request = None if self.response is None else self.response.request
        self.status_code = status_code if status_code is not None else _status_of(self.response)
        self.code = code
        self.request_id = request_id
        self.server_message = server_message

    @property
    def url(self) -> str | None:
        return None if self.request is None else self.request.url


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


def _request_secrets(response: ErrorResponse) -> list[str]:
    # The credential the failed request carried, read off the request the transport recorded.
    if response.request is None:
        return []
    return authorization_secrets(response.request.headers.get("authorization"))


def _status_of(response: ErrorResponse | None) -> int | None:
    return None if response is None else response.status_code


def _code_and_message(body: Any) -> tuple[str | None, str | None]:
    """The first service code anywhere in the body, and the reason that goes with it.

    Every object is walked (bounded depth) for a code before a message is chosen: a wrapper such as
    `{"message": "Not Found", "error": {"code": "517601", ...}}` must not hide the code that makes a
    not-found final. The message is the coded object's own, else the first one found, outermost first;
    without any `message`, a validation list (`{"detail": [{"loc", "msg"}, ...]}`) or a plain `detail`
    or `error` text is the reason.
    """

    def message_of(obj: Mapping[str, Any]) -> str | None:
        message = obj.get("message")
        return message if isinstance(message, str) and message else None

    first_message: str | None = None
    for obj in iter_error_objects(body):
        code = obj.get("code", obj.get("error_code"))
        if code is not None and not isinstance(code, (dict, list)):
            return str(code), message_of(obj) or first_message or _first_message(body) or _other_reason(body)
        if first_message is None:
            first_message = message_of(obj)
    return None, first_message or _other_reason(body)


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


def _plain_text(value: Any) -> str | None:
    # A text that is not itself JSON (that is walked as objects instead).
    if isinstance(value, str) and value.strip() and value.lstrip()[0] not in "{[":
        return value.strip()
    return None


def _other_reason(body: Any) -> str | None:
    """The reason of a body with no `message`: a validation list, or a `detail` or `error` text."""
    for obj in iter_error_objects(body):
        detail = obj.get("detail")
        if isinstance(detail, list):
            listed = validation_details(detail, limit=MAX_VALIDATION_DETAILS)
            if listed:
                return listed
        for key in ("detail", "error"):
            text = _plain_text(obj.get(key))
            if text:
                return text
    return None


#: Query parameters whose value is a credential (presigned signatures included), by name.
_SECRET_PARAM_RE = re.compile(
    r"(?i)(token|secret|passw|pwd|credential|signature|^sig$|key|auth|session|x-amz-security)"
)


def safe_url(url: str) -> str:
    """`url` for a message: no user or password, and no value of a query parameter that holds a credential."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_secrets(url)
    netloc = parts.netloc.rpartition("@")[2]
    pieces = []
    for piece in parts.query.split("&") if parts.query else []:
        name, equals, _value = piece.partition("=")
        secret = equals and _SECRET_PARAM_RE.search(unquote_plus(name))
        pieces.append(f"{name}=<redacted>" if secret else piece)
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(pieces), ""))


def _request_words(response: ErrorResponse) -> str:
    """`HTTP 404 Not Found for GET <url>`: the status and the request that got it, with no credential."""
    status = f"HTTP {response.status_code} {response.reason}".rstrip()
    request = response.request
    if request is None:
        return status
    return f"{status} for {request.method} {safe_url(request.url)}"


def standard_http_message(response: ErrorResponse | Any) -> str:
    """requests' own line, `<status> Client Error: <reason> for url: <url>` (3xx: `Unexpected redirect`).

    ct's messages no longer start with it (they lead with the service's reason); kept for code that
    compares against requests' wording.
    """
    answer = as_error_response(response)
    status = answer.status_code
    url = safe_url(answer.url)
    if 300 <= status < 400:
        return f"Unexpected redirect {status} for url: {url}"
    kind = "Client Error" if status < 500 else "Server Error"
    return f"{status} {kind}: {answer.reason} for url: {url}"


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


def api_error_from_response(response: ErrorResponse | Any, *, direct_pat: bool = False) -> APIError:
    """Build the `APIError` subclass for a non-success answer, with its message.

    The message leads with the service's reason and code (`<message> (<code>)`), then the status and
    the request (`HTTP 404 Not Found for GET <url>`), then `[snowflake request id: <id>]` when the
    answer has one: `Training job x not found in S (517601); HTTP 404 Not Found for GET https://...`.
    The reason is the body's `message`, else its validation list (`where: what; ...`) or its `detail`
    or `error` text; an answer with none of them starts at the status. A 3xx reads
    `Unexpected redirect <status> for url: <url>`. `response` is an `ErrorResponse`, or another
    library's response, which is copied into one.

    `direct_pat` says the request was signed with a programmatic access token by the client itself
    (not a profile session): a 401 then becomes `PATRejectedError` with next steps appended.
    A profile's token was already accepted at sign-in, so its 401s carry no such hint.

    The credential the request was signed with (its Authorization header) is removed by value from
    the message and from `server_message`, whatever surrounds it; anything else that looks like a
    credential is removed by pattern, and the URL shows no user, password or credential parameter.
    """
    response = as_error_response(response)
    status = response.status_code
    request_id = response.headers.get(REQUEST_ID_HEADER) or None
    body = response_json(response)
    code, server_message = _code_and_message(body) if 400 <= status < 600 else (None, None)
    signed_with = _request_secrets(response)
    remember_secrets(signed_with)
    if server_message is not None:
        server_message = redact_known(server_message, signed_with)
    suffix = f" [snowflake request id: {request_id}]" if request_id else ""
    if 300 <= status < 400:
        message = standard_http_message(response)
    else:
        reason = shorten(redact_secrets(server_message)) if server_message is not None else None
        lead: str | None = reason if reason is not None else code
        if reason is not None and code is not None:
            lead = f"{reason} ({code})"
        message = f"{lead}; {_request_words(response)}" if lead else _request_words(response)
    kwargs: dict[str, Any] = {
        "response": response,
        "status_code": status,
        "code": code,
        "request_id": request_id,
        "server_message": server_message,
    }
    if 300 <= status < 400:
        return UnexpectedRedirectError(message + suffix, **kwargs)
    if status == 400 and code == BAD_REQUEST_CODE and server_message:
        match = _SCHEMA_NOT_FOUND_RE.search(server_message)
        if match:
            return DatabaseAccessError(_database_access_message(match.group("target")) + suffix, **kwargs)
    if status == 401 and direct_pat:
        return PATRejectedError(with_pat_rejected_hint(message + suffix), hint=PAT_REJECTED_HINT, **kwargs)
    if status == 400 and code in _BAD_REQUEST_BY_CODE:
        return _BAD_REQUEST_BY_CODE[code](message + suffix, field=_field_of(body), **kwargs)
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else APIError)
    return cls(message + suffix, **kwargs)


def _database_access_message(target: str) -> str:
    database = target.split(".", 1)[0]
    return (
        f"the database and schema in the request path ({target}) do not exist or your role cannot use "
        "them; ct never creates them for you. Pass --database/--schema (or database=/schema=) for one "
        f"your role can use, or ask an administrator to run: CREATE DATABASE IF NOT EXISTS {database}; "
        "and grant USAGE on it and on the schema to your role."
    )
