"""The root of ct's exception tree, and every exception that needs nothing beyond the standard library.

Part of the package `ct_core.errors` (its docstring describes the whole tree); import from there.
The errors of the service's answers (`APIError` and its subclasses) are in `ct_core.errors.api`:
they derive from `requests.HTTPError`, and importing requests is a fifth of a command's start-up.

The credential redaction every `CTError` applies to its own text (`remember_secrets`,
`redact_known`) lives here too; the package docstring says how it works.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ct_core.constants import (
    ERROR_BODY_SEARCH_DEPTH,
    ERROR_MESSAGE_LIMIT,
    MAX_VALIDATION_DETAILS,
    REDACT_ANYWHERE_MIN_LENGTH,
)


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
        said = describe_service_error(error)
        super().__init__(f"Request {request_id} ended with state '{state}'" + (f": {said}" if said else ""))
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


class MissingPluginError(CTError, ImportError):
    """A feature that a plugin provides was asked for, and no loaded plugin provides it (the
    message names the distribution to install, or says why it did not load)."""


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


def response_json(response: Any) -> Any:
    """The decoded JSON body of a response (anything with `.content`), or None when empty or not JSON."""
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


def validation_details(details: Sequence[Any], *, limit: int = MAX_VALIDATION_DETAILS) -> str | None:
    """A validation list (`[{"loc": ["body", "a", 0], "msg": "..."}, ...]`) in words: `a.0: ...; ...`.

    At most `limit` problems are named, the rest counted (`(and 2 more)`); plain strings in the list
    count as problems too. None when no item says anything.
    """
    parts: list[str] = []
    for item in details:
        if isinstance(item, str) and item.strip():
            parts.append(item.strip())
            continue
        if not isinstance(item, Mapping) or not isinstance(item.get("msg"), str):
            continue
        loc = item.get("loc")
        where = ".".join(str(part) for part in loc if part != "body") if isinstance(loc, list) else ""
        parts.append(f"{where}: {item['msg']}" if where else item["msg"])
    if not parts:
        return None
    extra = len(parts) - limit
    return "; ".join(parts[:limit]) + (f" (and {extra} more)" if extra > 0 else "")


def describe_service_error(value: Any) -> str:
    """A service's error value in words, never a Python repr: `message (code)` for an error object,
    its problems for a validation list, each item of a list, the text of a string; '' for nothing.

    For the `error` field of a request, a dataset build or a run, which may be a text or an object.
    Anything else is shown as JSON.
    """
    if value is None or value == "" or value == {} or value == []:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        listed = validation_details(value)
        if listed and all(isinstance(item, Mapping) and "msg" in item for item in value):
            return listed
        return "; ".join(filter(None, (describe_service_error(item) for item in value)))
    if isinstance(value, Mapping):
        message = value.get("message", value.get("msg"))
        code = value.get("code", value.get("error_code"))
        code_text = "" if code is None or isinstance(code, (dict, list)) else str(code)
        if isinstance(message, str) and message.strip():
            return f"{message.strip()} ({code_text})" if code_text else message.strip()
        detail = value.get("detail", value.get("error"))
        if detail not in (None, "", [], {}):
            said = describe_service_error(detail)
            return f"{said} ({code_text})" if code_text and said else said or code_text
        if code_text:
            return code_text
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


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
