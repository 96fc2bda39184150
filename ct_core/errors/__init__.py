"""The exception tree of ct: one root (`CTError`) that every error the SDK raises derives from.

Families:

- `APIError` and its per-status subclasses (also `requests.HTTPError`, for code ported from the
  reference client): the service answered with a status the caller must see.
  Each carries `status_code`, the service `code` and `server_message` (when the body has them: a
  `message`, a 422's validation list, a `detail` or `error` text), `request_id` (the
  `x-snowflake-request-id` header) and the answer itself as an `ErrorResponse`, ct's small copy of
  what ported code reads on a `requests.Response` (no httpx object is built for an error). Their
  messages lead with the service's reason: `<message> (<code>); HTTP <status> <reason> for <METHOD>
  <url> [snowflake request id: <id>]` (the reason cut at 1,000 characters, credentials redacted, the
  URL without any; `Unexpected redirect ...` for a 3xx).
- `CTConnectionError` / `CTTimeoutError` / `TLSVerificationError`: the request got no answer.
- `RequestOutcomeUnknown`: a call that must not run twice was sent and its answer lost, so it may
  have been applied; each instance is also the connection, timeout or server error it replaces.
- `ValidationError` and `ConfigError`: refused before anything is sent.
- `WireError`, chunk-group, request, live-log, download, deployment and job-wait errors, owned by
  the modules that raise them but declared here so callers can catch by family. Several also derive
  from the built-in they were first raised as (`ValueError`, `RuntimeError`), so code that catches
  that keeps working.

`api_error_from_response` builds the right `APIError` for a response; the transport calls it.
`describe_service_error` puts a service's error value (an object, a list, a text) in words, never
a Python repr, for messages built elsewhere (a failed request, a failed run or build).

Every name is imported from here. The tree lives in two modules: `base` (the root and everything that
needs only the standard library) and `api` (the `APIError` family and how one is built from an
answer). `api` loads the first time one of its names is asked for: its errors derive from
`requests.HTTPError`, and importing requests would otherwise be a fifth of every command's start-up,
though a command whose requests all succeed never needs them.

Credentials are removed by value, not only by pattern: `remember_secrets` notes a credential this
process signs with (every failed request's own is noted on the way), and from then on the text of
every `CTError` (its `str`, its `args`, so its traceback too) shows `<redacted>` in its place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ct_core.errors.base import (
    PAT_AUTH_DOC_URL,
    PAT_REJECTED_ERRNO,
    PAT_REJECTED_HINT,
    PAT_REJECTED_TEXT,
    ArtifactError,
    ArtifactMissing,
    ArtifactUnavailable,
    CatalogError,
    CheckpointDownloadError,
    ChunkDamaged,
    ConfigError,
    CTConnectionError,
    CTError,
    CTTimeoutError,
    DownloadCancelled,
    DownloadInProgress,
    ExperimentalFeatureError,
    IncompleteConnectionError,
    JobTerminalError,
    JobWaitTimeout,
    LinkTransportError,
    LogsUnavailableError,
    MissingPluginError,
    NoChunksError,
    OutcomeUnknownAfterConnectionLoss,
    OutcomeUnknownAfterTimeout,
    RequestFailedError,
    RequestOutcomeUnknown,
    RequestTimeoutError,
    ResultDecodeError,
    RunWaitTimeout,
    SessionExpired,
    TLSVerificationError,
    UnknownSubJobError,
    ValidationError,
    WireError,
    authorization_secrets,
    describe_service_error,
    error_codes,
    is_pat_rejection,
    iter_error_objects,
    known_secrets,
    redact_known,
    redact_secrets,
    redact_values,
    remember_secrets,
    response_json,
    shorten,
    validation_details,
    with_pat_rejected_hint,
)

if TYPE_CHECKING:
    from ct_core.errors.api import (
        OUTCOME_UNKNOWN_STATUSES,
        AccountJobListUnavailable,
        APIError,
        AuthenticationError,
        BadRequestError,
        ChunkGroupConflictError,
        ChunkGroupError,
        ChunkGroupRestartError,
        ConflictError,
        DatabaseAccessError,
        ErrorRequest,
        ErrorResponse,
        FailedPreconditionError,
        InvalidArgumentError,
        InvalidPageToken,
        JobNotRunningError,
        MethodNotAllowedError,
        NotFoundError,
        OutcomeUnknownAfterServerError,
        PATRejectedError,
        PermissionDeniedError,
        RateLimitError,
        ServerError,
        UnexpectedRedirectError,
        api_error_from_response,
        as_error_response,
        outcome_is_unknown,
        outcome_unknown,
        pat_rejected_from_connector,
        safe_url,
        standard_http_message,
    )

#: The names `ct_core.errors.api` defines, loaded on first use (see the module docstring).
_API_NAMES = frozenset(
    {
        "APIError",
        "AccountJobListUnavailable",
        "AuthenticationError",
        "BadRequestError",
        "ChunkGroupConflictError",
        "ChunkGroupError",
        "ChunkGroupRestartError",
        "ConflictError",
        "DatabaseAccessError",
        "ErrorRequest",
        "ErrorResponse",
        "FailedPreconditionError",
        "InvalidArgumentError",
        "InvalidPageToken",
        "JobNotRunningError",
        "MethodNotAllowedError",
        "NotFoundError",
        "OUTCOME_UNKNOWN_STATUSES",
        "OutcomeUnknownAfterServerError",
        "PATRejectedError",
        "PermissionDeniedError",
        "RateLimitError",
        "ServerError",
        "UnexpectedRedirectError",
        "api_error_from_response",
        "as_error_response",
        "outcome_is_unknown",
        "outcome_unknown",
        "pat_rejected_from_connector",
        "safe_url",
        "standard_http_message",
    }
)


def __getattr__(name: str) -> Any:
    if name in _API_NAMES:
        from ct_core.errors import api

        value = getattr(api, name)
        globals()[name] = value  # later lookups find it without this call
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "OUTCOME_UNKNOWN_STATUSES",
    "PAT_AUTH_DOC_URL",
    "PAT_REJECTED_ERRNO",
    "PAT_REJECTED_HINT",
    "PAT_REJECTED_TEXT",
    "APIError",
    "AccountJobListUnavailable",
    "ArtifactError",
    "ArtifactMissing",
    "ArtifactUnavailable",
    "AuthenticationError",
    "BadRequestError",
    "CTConnectionError",
    "CTError",
    "CTTimeoutError",
    "CatalogError",
    "CheckpointDownloadError",
    "ChunkDamaged",
    "ChunkGroupConflictError",
    "ChunkGroupError",
    "ChunkGroupRestartError",
    "ConfigError",
    "ConflictError",
    "DatabaseAccessError",
    "DownloadCancelled",
    "DownloadInProgress",
    "ErrorRequest",
    "ErrorResponse",
    "ExperimentalFeatureError",
    "FailedPreconditionError",
    "IncompleteConnectionError",
    "InvalidArgumentError",
    "InvalidPageToken",
    "JobNotRunningError",
    "JobTerminalError",
    "JobWaitTimeout",
    "LinkTransportError",
    "LogsUnavailableError",
    "MethodNotAllowedError",
    "MissingPluginError",
    "NoChunksError",
    "NotFoundError",
    "OutcomeUnknownAfterConnectionLoss",
    "OutcomeUnknownAfterServerError",
    "OutcomeUnknownAfterTimeout",
    "PATRejectedError",
    "PermissionDeniedError",
    "RateLimitError",
    "RequestFailedError",
    "RequestOutcomeUnknown",
    "RequestTimeoutError",
    "ResultDecodeError",
    "RunWaitTimeout",
    "ServerError",
    "SessionExpired",
    "TLSVerificationError",
    "UnexpectedRedirectError",
    "UnknownSubJobError",
    "ValidationError",
    "WireError",
    "api_error_from_response",
    "as_error_response",
    "authorization_secrets",
    "describe_service_error",
    "error_codes",
    "is_pat_rejection",
    "iter_error_objects",
    "known_secrets",
    "outcome_is_unknown",
    "outcome_unknown",
    "pat_rejected_from_connector",
    "redact_known",
    "redact_secrets",
    "redact_values",
    "remember_secrets",
    "response_json",
    "safe_url",
    "shorten",
    "standard_http_message",
    "validation_details",
    "with_pat_rejected_hint",
]
