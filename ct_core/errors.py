"""The exception tree of ct: one root (`CTError`) that every error the SDK raises derives from.

Families:

- `APIError` and its per-status subclasses (also `requests.HTTPError`, for code ported from the
  reference client): the service answered with a status the caller must see.
  Each carries `status_code`, the service `code` (when the JSON body has one), `request_id` (the
  `x-snowflake-request-id` header) and the `httpx.Response` itself. Their messages have a fixed
  shape (request-id prefix, `(code): message` suffix, 1,000-character cut, credentials redacted,
  `Unexpected redirect ...` for a 3xx).
- `CTConnectionError` / `CTTimeoutError` / `TLSVerificationError`: the request got no answer.
- `RequestOutcomeUnknown`: a call that must not run twice was sent and its answer lost, so it may
  have been applied; each instance is also the connection, timeout or server error it replaces.
- `ValidationError` and `ConfigError`: refused before anything is sent.
- `WireError`, chunk-group, request, live-log, download, deployment and job-wait errors, owned by
  the modules that raise them but declared here so callers can catch by family. Several also derive
  from the built-in they were first raised as (`ValueError`, `RuntimeError`), so code that catches
  that keeps working.

`api_error_from_response` builds the right `APIError` for a response; the transport calls it.

Credentials are removed by value, not only by pattern: `remember_secrets` notes a credential this
process signs with (every failed request's own is noted on the way), and from then on the text of
every `CTError` (its `str`, its `args`, so its traceback too) shows `<redacted>` in its place.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

# Only for the base class of APIError (ported code catches `requests.HTTPError`); ct sends nothing
# through requests. Measured: about 70 ms on top of importing the client, and `ct --help` and
# `import ct_core` never import this module.
import requests

from ct_core.constants import (
    BAD_REQUEST_CODE,
    ERROR_BODY_SEARCH_DEPTH,
    ERROR_MESSAGE_LIMIT,
    REDACT_ANYWHERE_MIN_LENGTH,
    REQUEST_ID_HEADER,
)

if TYPE_CHECKING:
    import httpx


class CTError(Exception):
    """Root of every error raised by ct_core (and by plugins, through their subclasses).

    `hint`, when set, is the next step the CLI prints under the message; a plugin's error can
    give its own instead of the CLI's generic one. Every credential `remember_secrets` was told
    about is removed from the text, whatever part of it a server echoed back.
    """

    hint: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*(redact_known(a) if isinstance(a, str) else a for a in args), **kwargs)

    def __str__(self) -> str:
        # Again when shown: the credential may have become known after the error was built.
        return redact_known(super().__str__())


class WireError(CTError, ValueError):
    """A DSSST1 frame or byte-chunk list is malformed, unsafe or inconsistent."""


# --------------------------------------------------------------------------------------------------
# Refused before sending
# --------------------------------------------------------------------------------------------------


class ValidationError(CTError, ValueError):
    """A create body or typed config failed client-side checks; `.problems` lists every one."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems: list[str] = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class ConfigError(CTError, ValueError):
    """The connection settings (flags, env vars, config file, login, profile) are unusable."""


class ExperimentalFeatureError(CTError, RuntimeError):
    """An experimental API was called without opting in through CORTEX_TRAINING_EXPERIMENTAL."""

    def __init__(self, message: str, *, feature: str) -> None:
        super().__init__(message)
        self.feature = feature


# --------------------------------------------------------------------------------------------------
# No answer from the service
# --------------------------------------------------------------------------------------------------


class CTConnectionError(CTError, ConnectionError):
    """The request failed below HTTP: refused, reset, DNS failure, TLS error.

    `never_sent` is True when the failure proves the request never reached the server (the
    connection could not be opened), which is the only case in which creating a job is retried.
    """

    def __init__(self, message: str, *, url: str | None = None, never_sent: bool = False) -> None:
        super().__init__(message)
        self.url = url
        self.never_sent = never_sent


class CTTimeoutError(CTConnectionError, TimeoutError):
    """Connecting, writing or reading took longer than the configured timeout."""


class TLSVerificationError(CTConnectionError):
    """The server's certificate is untrusted, expired or for another name; retrying cannot help."""


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


# --------------------------------------------------------------------------------------------------
# Sent, then no usable answer: the call may or may not have run
# --------------------------------------------------------------------------------------------------


class RequestOutcomeUnknown(CTError):
    """A call that must not run twice (step, save, load, forward, weight sync) was sent and its answer
    was lost: a read timeout, a dropped connection, or 500/502/504 after the request went out.

    The server may have run it, so it is not sent again. `client_request_id` is the id the client
    named the call with (the ``x-ct-request-id`` header): look it up with
    `get_request_status(job_id, client_request_id)` on a server that keeps those ids, as ct local serve
    does (a 404 means it has not run; a slow request may still be arriving, so ask again after a
    while), or find it in the job's training-metrics rows, which carry each call's request id.

    Each instance is also the error it replaces (`CTTimeoutError`, `CTConnectionError` or
    `ServerError`; see `outcome_unknown`), so code that catches that keeps working.
    """

    operation: str = ""
    job_id: str = ""
    client_request_id: str = ""


class OutcomeUnknownAfterConnectionLoss(RequestOutcomeUnknown, CTConnectionError):
    """The connection broke after the request was sent."""


class OutcomeUnknownAfterTimeout(RequestOutcomeUnknown, CTTimeoutError):
    """No answer came within the read timeout after the request was sent."""


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
# Higher-level waits, requests, live logs and downloads
# --------------------------------------------------------------------------------------------------


class JobTerminalError(CTError, RuntimeError):
    """`wait_for_job` saw the job settle in a state it cannot leave (failed, cancelled, ...)."""

    def __init__(self, message: str, *, job_id: str, status: str, reason: str = "") -> None:
        super().__init__(message)
        self.job_id = job_id
        self.status = status
        self.reason = redact_known(reason)


class JobWaitTimeout(CTError, TimeoutError):
    """`wait_for_job` reached its poll timeout before the job was running."""


class RunWaitTimeout(CTError, TimeoutError):
    """A wait on a run or a dataset build ran out of time; `.last` is the record read last.

    Nothing was cancelled: the run (or build) goes on, and waiting again picks it up.
    """

    def __init__(self, message: str, *, last: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.last = dict(last or {})


class NoChunksError(CTError, ValueError):
    """Sub-jobs named in a download have no artifacts of that kind.

    `sub_job_ids` lists the names without any; `available` lists the job's sub-jobs that have some.
    """

    def __init__(
        self, message: str, *, sub_job_ids: Sequence[str] = (), available: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.sub_job_ids = list(sub_job_ids)
        self.available = list(available)


class DownloadCancelled(CTError):
    """A download was cancelled by the caller; partial files are kept for a resume."""


class DownloadInProgress(CTError, RuntimeError):
    """Another download is writing the same stream into the same output folder."""


class ChunkDamaged(CTError, ValueError):
    """strict=True: a chunk could not be decompressed (after one more fetch) or had vanished."""


class CheckpointDownloadError(CTError):
    """A checkpoint file could not be downloaded or failed its checks; nothing was promoted."""


class LinkTransportError(CTError):
    """A presigned link could not be fetched (connection, TLS, timeout or a body cut short).

    `retryable` says whether another attempt on the same link could succeed.
    """

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class ArtifactError(CTError):
    """An experiment-run artifact listing or fetch broke the store's rules (run name, paths, roots)."""


class ArtifactMissing(ArtifactError):
    """A GET found no object at a listed path: it was removed after the listing."""


class ArtifactUnavailable(ArtifactError):
    """A store failure another attempt may fix: the network, a busy service, an expired session.

    Stores raise it for what the artifact retry policy covers; anything else (missing privileges, a
    refused storage read, a bad path, other statement errors) propagates as it is and fails at once.
    """


class RequestFailedError(CTError, RuntimeError):
    """A polled request ended failed or cancelled; `.state` and `.error` say how."""

    def __init__(self, request_id: str, state: str, error: Any) -> None:
        super().__init__(f"Request {request_id} ended with state '{state}': {error or ''}")
        self.request_id = request_id
        self.state = state
        self.error = error


class LogsUnavailableError(CTError, RuntimeError):
    """Live logs cannot be read because the job has ended; its saved console can be downloaded."""

    def __init__(self, job_id: str, status: str) -> None:
        super().__init__(
            f"job {job_id} has ended ({status}), so its live logs are gone. Download the saved console "
            f"instead: ct download-log {job_id} --log-type stdout (SDK: download_stdout_logs())"
        )
        self.job_id = job_id
        self.status = status


class ModelDeploymentWaitError(CTError, RuntimeError):
    """A model deployment settled in a state other than ready while being waited for."""


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

# A value that looks like a credential: the name, a `:` or `=`, then the value (quoted or not).
# Header-style schemes (`Bearer x`, `Snowflake Token="x"`) are matched on their own as well.
_CREDENTIAL_RE = re.compile(
    r"""(?ix)
    (
        authorization["']?\s*[:=]\s*(?:bearer\s+|snowflake\s+token\s*=\s*)?
      | bearer\s+
      | snowflake\s+token\s*=\s*
      | (?:password|secret|credential|pat|api[_-]?key|private[_-]?key
          |access[_-]?token|refresh[_-]?token|session[_-]?token|token)["']?\s*[:=]\s*
    )
    ("[^"]*"|'[^']*'|[^\s,;}\]]+)
    """
)
_REDACTED = "<redacted>"
_SCHEMA_NOT_FOUND_RE = re.compile(r"Schema\s+(?P<target>\S+?)\s+is not found or not authorized")


def redact_secrets(text: str) -> str:
    """Replace anything that looks like a token, password or authorization value."""
    return _CREDENTIAL_RE.sub(lambda m: m.group(1) + _REDACTED, text)


def redact_values(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of the given credential values (the client's own token) in `text`."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= REDACT_ANYWHERE_MIN_LENGTH:
            text = text.replace(secret, _REDACTED)
        else:
            text = re.sub(rf"(?<![\w.~+/=-]){re.escape(secret)}(?![\w.~+/=-])", _REDACTED, text)
    return text


#: Credentials this process signs requests with, as far as ct has seen them (see remember_secrets).
_KNOWN_SECRETS: set[str] = set()
_KNOWN_SECRETS_LOCK = threading.Lock()
#: Shorter values are not remembered: redacting a two-letter word everywhere would garble messages.
_MIN_REMEMBERED_SECRET = 4


def remember_secrets(values: Iterable[str | None]) -> None:
    """Note credentials this process uses, so that no `CTError` text and no `ct` output shows them."""
    fresh = {v.strip() for v in values if isinstance(v, str) and len(v.strip()) >= _MIN_REMEMBERED_SECRET}
    if fresh - _KNOWN_SECRETS:
        with _KNOWN_SECRETS_LOCK:
            _KNOWN_SECRETS.update(fresh)


def known_secrets() -> frozenset[str]:
    """The credentials `remember_secrets` was told about."""
    with _KNOWN_SECRETS_LOCK:
        return frozenset(_KNOWN_SECRETS)


def redact_known(text: str, extra: Iterable[str] = ()) -> str:
    """`text` without any remembered credential (nor any of `extra`), by value."""
    secrets = [*_KNOWN_SECRETS, *extra] if _KNOWN_SECRETS else list(extra)
    return redact_values(text, secrets) if secrets else text


def authorization_secrets(value: str | None) -> list[str]:
    """The credential inside an Authorization header value (`Bearer X`, `Snowflake Token="X"`)."""
    if not value:
        return []
    scheme, _, rest = value.strip().partition(" ")
    rest = rest.strip()
    if not rest:
        return [scheme]
    if rest.lower().startswith("token="):
        rest = rest[len("token=") :].strip().strip('"')
    return [rest] if rest else []


def _request_secrets(response: httpx.Response) -> list[str]:
    # The credential the failed request carried, read off the request the transport recorded.
    try:
        headers = response.request.headers
    except RuntimeError:
        return []
    return authorization_secrets(headers.get("authorization"))


def shorten(text: str, limit: int = ERROR_MESSAGE_LIMIT) -> str:
    """Cut `text` to at most `limit` characters, marking a cut with a trailing `...`."""
    if len(text) <= limit:
        return text
    return text[: limit - 3] + "..."


def iter_error_objects(value: Any, *, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every JSON object in an error body, outermost first.

    Gateways wrap the service's error in other objects, sometimes as a JSON string inside a string
    field, so strings are scanned for embedded objects and arrays too. Depth is bounded.
    """
    if depth > ERROR_BODY_SEARCH_DEPTH:
        return
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from iter_error_objects(child, depth=depth + 1)
    elif isinstance(value, list):
        for child in value:
            yield from iter_error_objects(child, depth=depth + 1)
    elif isinstance(value, str) and ("{" in value or "[" in value):
        decoder = json.JSONDecoder()
        position = 0
        while True:
            starts = [i for i in (value.find("{", position), value.find("[", position)) if i >= 0]
            if not starts:
                return
            start = min(starts)
            try:
                embedded, end = decoder.raw_decode(value, start)
            except ValueError:
                position = start + 1
                continue
            yield from iter_error_objects(embedded, depth=depth + 1)
            position = end


def error_codes(body: Any) -> list[str]:
    """All service error codes found in a decoded body (`code`, else `error_code`), as strings."""
    codes = []
    for obj in iter_error_objects(body):
        code = obj.get("code", obj.get("error_code"))
        if code is not None and not isinstance(code, (dict, list)):
            codes.append(str(code))
    return codes


def response_json(response: httpx.Response) -> Any:
    """The decoded JSON body of a response, or None when it is empty or not JSON."""
    try:
        content = response.content
    except Exception:  # a streamed body that was never read
        return None
    if not content:
        return None
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None


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


# --------------------------------------------------------------------------------------------------
# A programmatic access token that Snowflake refuses
# --------------------------------------------------------------------------------------------------

#: The Connector's error number when Snowflake refuses a programmatic access token at sign-in.
PAT_REJECTED_ERRNO = 394400
#: The text of that refusal, for Connector versions that do not set the errno.
PAT_REJECTED_TEXT = "programmatic access token is invalid"
#: Snowflake's guide to programmatic access tokens (network policy and token lifecycle).
PAT_AUTH_DOC_URL = "https://docs.snowflake.com/en/user-guide/programmatic-access-tokens"
PAT_REJECTED_HINT = (
    "Snowflake did not accept the programmatic access token. Things to check:\n"
    "  - network policy: a token only works for a user covered by a network policy. Snowsight then "
    'shows "Missing network policy" for the user; if granting the temporary "Bypass requirement for '
    'network policy" makes the token work, a network policy is what is missing.\n'
    "  - the token itself: it may have expired, been mistyped or cut short when pasted, or belong to "
    "another user than the one this connection names. Generating a new token rules these out.\n"
    f"  - documentation: {PAT_AUTH_DOC_URL}"
)


def with_pat_rejected_hint(message: str) -> str:
    """`message` with the next steps for a refused token appended on the following lines."""
    return f"{message}\n{PAT_REJECTED_HINT}"


def is_pat_rejection(error: BaseException) -> bool:
    """True for a Connector error saying Snowflake refused a programmatic access token."""
    errno = getattr(error, "errno", None)
    if errno is not None and str(errno) == str(PAT_REJECTED_ERRNO):
        return True
    return PAT_REJECTED_TEXT in str(error).lower()


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


class RequestTimeoutError(CTError, TimeoutError):
    """A polled request did not finish before the client's poll timeout."""

    def __init__(self, request_id: str, timeout: float) -> None:
        super().__init__(f"Request {request_id} did not complete within {timeout:g}s")
        self.request_id = request_id


class ResultDecodeError(CTError, RuntimeError):
    """A result envelope or result chunk is malformed (bad encoding, checksum mismatch, ...)."""


class UnknownSubJobError(CTError, ValueError):
    """tail-logs named a sub_job_id the job does not have; `.sub_job_ids` lists the real ones."""

    def __init__(self, job_id: str, sub_job_id: str, sub_job_ids: list[str]) -> None:
        listed = ", ".join(sub_job_ids) or "none"
        super().__init__(f"job {job_id} has no sub-job {sub_job_id!r}; its sub-jobs are: {listed}")
        self.sub_job_ids = sub_job_ids


class CatalogError(CTError, ValueError):
    """The catalog cannot be found or read, or a lookup in it has no unique answer."""


class SessionExpired(ArtifactUnavailable):
    """The Connector session or its token expired; the next attempt opens a new session."""


class IncompleteConnectionError(ConfigError):
    """No connection, or one that lacks a piece (a database, the token of a host) or mixes sources that
    cannot go together; the command line treats it as a usage error (exit code 2)."""
