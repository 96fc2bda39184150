"""The `run.completed` webhook: a signed JSON POST to each configured URL when a run ends.

Every terminal run (succeeded, failed or cancelled) is announced once to every URL the service is
configured with. What a receiver gets:

- the body, canonical JSON (keys sorted, no spaces): ``{"type": "run.completed", "id": <delivery
  id>, "created_at": <the run's finish time>, "data": {...}}``, the same bytes on every attempt;
- ``X-CT-Event: run.completed`` and ``X-CT-Delivery: <delivery id>``. The delivery id is the same on
  every retry of one event (``<run_id>.completed``), so a receiver that remembers the ids it has
  processed acts on each run exactly once, however many times a retry or a restarted service sends it;
- ``X-CT-Timestamp: <unix seconds>`` and, when a secret is configured, ``X-CT-Signature:
  sha256=<hex>``, the HMAC-SHA256 under the shared secret of the timestamp, a dot, then the body.
  Each attempt is signed afresh with its own timestamp, so a late retry still passes `verify`'s
  freshness check; a replayed old request does not.

Delivery goes through httpx with certificates verified and redirects never followed. A 2xx answer
is delivered; 408, 409, 429, every 5xx and a failure to connect or to finish in time are tried again
with exponential backoff (1 s, 2 s, 4 s, ... at most 60 s; a Retry-After in seconds on a 429 or 503
replaces the backoff, still at most 60 s); any other answer (other 4xx, a redirect) and an untrusted
certificate are final at once. The attempts run in ct_core's one retry loop
(`ct_core.http.retry.run_with_retries` with a `RetryPolicy` of the numbers below).

The secret never leaves this module except as the signature: it is not logged, not put in errors and
not in `DeliveryResult`. This module's log lines name a URL by scheme and host only, since webhook
URLs often carry a token in their path or query (httpx's own request line, at INFO on the `httpx`
logger, shows the whole URL: a service that logs at INFO may want that logger at WARNING).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from ct_core import __version__
from ct_core.errors import APIError
from ct_core.http.retry import RetryPolicy, run_with_retries

logger = logging.getLogger("ct_runs.webhooks")

#: The one event type sent today.
EVENT = "run.completed"
#: Header names of a delivery (receivers read them case-insensitively, as HTTP says).
EVENT_HEADER = "X-CT-Event"
DELIVERY_HEADER = "X-CT-Delivery"
TIMESTAMP_HEADER = "X-CT-Timestamp"
SIGNATURE_HEADER = "X-CT-Signature"
#: The signature scheme's prefix in X-CT-Signature: names the hash, so another one can follow later.
SIGNATURE_PREFIX = "sha256="
USER_AGENT = f"ct-runs/{__version__}"

#: Seconds one attempt may take to connect, send and read the answer's head.
DEFAULT_TIMEOUT = 10.0
#: Attempts per URL and event, the first included: with the backoff below a receiver that is down
#: gets five retries over about half a minute before the delivery is reported failed.
DEFAULT_MAX_ATTEMPTS = 6
#: Retry n waits FIRST_WAIT * 2**(n-1) seconds, at most MAX_WAIT; no jitter: one service sends one
#: event per URL at a time, so there is no crowd of senders to spread out.
FIRST_WAIT = 1.0
MAX_WAIT = 60.0
#: Statuses that say "not now" rather than "never": the receiver timed out waiting for the request,
#: is busy with a conflicting request, or rate limits. Every 5xx is retried as well.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
#: How far a receiver's clock may be from the signed timestamp before `verify` refuses the request.
DEFAULT_TOLERANCE_S = 300


@dataclass(frozen=True)
class DeliveryResult:
    """How delivering one event to one URL ended.

    `status_code` is the last answer's status (None when no answer came); `error` says why an
    undelivered event failed, in words that hold neither the secret nor the receiver's body.
    """

    url: str
    delivered: bool
    attempts: int
    status_code: int | None
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "delivered": self.delivered,
            "attempts": self.attempts,
            "status_code": self.status_code,
            "error": self.error,
        }


# --- configuration ---------------------------------------------------------------------------------


def check_url(url: str) -> str:
    """The URL itself when it is an absolute http or https URL with a host; ValueError otherwise.

    Called when the service is configured, so a bad URL stops it from starting instead of failing
    silently at the end of every run.
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError("webhook URL must be a non-empty string")
    if url != url.strip() or any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in url):
        raise ValueError("webhook URL must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it is what checks it (ValueError when out of range)
    except ValueError as exc:
        raise ValueError(f"webhook URL is not a valid URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https"):
        shown = parts.scheme or "none"
        raise ValueError(f"webhook URL must use http or https (scheme {shown!r} refused)")
    if not parts.hostname:
        raise ValueError("webhook URL must name a host (http://host[:port]/path)")
    return url


def _shown(url: str) -> str:
    """Scheme, host and port only: the rest of a webhook URL is often a credential."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}/..."


# --- signing -----------------------------------------------------------------------------------------


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The X-CT-Signature value: ``sha256=`` and the hex HMAC-SHA256 of ``b"<timestamp>." + body``."""
    if not isinstance(secret, str) or not secret:
        raise ValueError("the webhook secret must be a non-empty string")
    message = f"{int(timestamp)}.".encode("ascii") + bytes(body)
    digest = hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        wanted = name.lower()
        value = next((v for k, v in headers.items() if str(k).lower() == wanted), None)
    return None if value is None else str(value)


def verify(
    secret: str,
    headers: Mapping[str, Any],
    body: bytes,
    *,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """Whether a received delivery is genuine: signed with `secret`, over this body, and fresh.

    For receivers (and the tests). False when the signature or timestamp is missing or malformed,
    when the timestamp is more than `tolerance_s` seconds from `now` (default: this machine's clock)
    either way, or when the signature does not match; the comparison takes the same time wherever
    the first difference is. Header names are matched without regard to case.
    """
    if not isinstance(secret, str) or not secret:
        return False
    raw_timestamp = _header(headers, TIMESTAMP_HEADER)
    given = _header(headers, SIGNATURE_HEADER)
    if raw_timestamp is None or given is None:
        return False
    raw_timestamp = raw_timestamp.strip()
    if not raw_timestamp.isascii() or not raw_timestamp.isdigit():
        return False
    timestamp = int(raw_timestamp)
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_s:
        return False
    expected = sign(secret, timestamp, body)
    return hmac.compare_digest(expected.encode("ascii"), given.strip().encode("utf-8", "replace"))


# --- the event ---------------------------------------------------------------------------------------


def delivery_id_for(run_id: str) -> str:
    """The idempotency id of a run's completion event: the same for every attempt and every sender."""
    return f"{run_id}.completed"


def _finite(value: Any) -> Any:
    # JSON has no NaN or infinity; a loss that never became a number is reported as null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def event_for(run: Mapping[str, Any]) -> dict[str, Any]:
    """The event object of a terminal run (what `body_for` serializes)."""
    run_id = run.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        raise ValueError("a run.completed event needs the run's run_id")
    gpu_seconds = _finite(run.get("gpu_seconds"))
    return {
        "type": EVENT,
        "id": delivery_id_for(run_id),
        # The run's own finish time, not the sending time, so a second send is byte-identical.
        "created_at": run.get("finished_at") or run.get("created_at"),
        "data": {
            "run_id": run_id,
            "status": run.get("status"),
            "model_id": run.get("model_id"),
            "best_val_loss": _finite(run.get("best_val_loss")),
            "early_stop": run.get("early_stop"),
            "gpu_seconds": gpu_seconds,
            "usage": {"training_gpu_seconds": gpu_seconds},
            "config_fingerprint": run.get("config_fingerprint"),
        },
    }


def body_for(run: Mapping[str, Any]) -> bytes:
    """The canonical JSON body (sorted keys, no spaces, UTF-8) of a run's completion event."""
    return json.dumps(
        event_for(run), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def headers_for(body: bytes, *, secret: str | None, delivery_id: str, timestamp: int) -> dict[str, str]:
    """The headers of one attempt; signed when a secret is configured."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_HEADER: EVENT,
        DELIVERY_HEADER: delivery_id,
        TIMESTAMP_HEADER: str(timestamp),
    }
    if secret:
        headers[SIGNATURE_HEADER] = sign(secret, timestamp, body)
    return headers


# --- delivery ----------------------------------------------------------------------------------------


def _certificate_failure(error: BaseException) -> bool:
    seen: BaseException | None = error
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _worth_retrying(error: BaseException) -> bool:
    """The webhook rule: busy or failing receivers and lost connections, never a refusal."""
    if isinstance(error, APIError):
        status = error.status_code or 0
        return status in RETRYABLE_STATUSES or status >= 500
    if isinstance(error, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return False
    if isinstance(error, httpx.TransportError):
        # An untrusted certificate fails the same way every time.
        return not _certificate_failure(error)
    return False


def _describe(error: BaseException) -> str:
    """Why an attempt failed, in words that hold neither the secret nor the receiver's body."""
    if isinstance(error, APIError):
        status = error.status_code
        if status is not None and 300 <= status < 400:
            return f"the receiver answered HTTP {status} (a redirect; redirects are not followed)"
        return f"the receiver answered HTTP {status}"
    if isinstance(error, httpx.TimeoutException):
        return f"no answer in time ({type(error).__name__})"
    if isinstance(error, httpx.TransportError) and _certificate_failure(error):
        return "the receiver's TLS certificate was not trusted"
    # httpx's own text names the failure (refused, reset, DNS); it holds no header, so no secret.
    return f"could not reach the receiver ({type(error).__name__}: {error})"


def deliver(
    url: str,
    body: bytes,
    *,
    secret: str | None,
    delivery_id: str,
    timeout: float = DEFAULT_TIMEOUT,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    sleep: Callable[[float], None] = time.sleep,
) -> DeliveryResult:
    """POST one event to one URL until it is accepted, refused, or `max_attempts` ran out.

    Never raises for the receiver's sake (a bad URL is a ValueError, as in `check_url`): the outcome
    is the returned `DeliveryResult`. `sleep` does the waiting between attempts (tests record it).
    """
    check_url(url)
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    if not delivery_id:
        raise ValueError("a delivery needs its idempotency id")
    policy = RetryPolicy(
        max_retries=max_attempts - 1,
        initial_wait=FIRST_WAIT,
        max_wait=MAX_WAIT,
        jitter=0.0,
        honour_retry_after=True,
    )
    attempts = 0
    last_status: int | None = None
    shown = _shown(url)

    def on_retry(number: int, delay: float, error: BaseException) -> None:
        why = _describe(error)
        logger.info(
            "webhook %s to %s: attempt %d failed (%s); retrying in %.1fs",
            delivery_id,
            shown,
            number,
            why,
            delay,
        )

    with httpx.Client(verify=True, follow_redirects=False, timeout=timeout) as client:

        def attempt() -> int:
            nonlocal attempts, last_status
            attempts += 1
            headers = headers_for(body, secret=secret, delivery_id=delivery_id, timestamp=int(time.time()))
            # Streamed so the receiver's answer body is never read: only its status and headers count.
            with client.stream("POST", url, content=body, headers=headers) as response:
                last_status = response.status_code
                if 200 <= response.status_code < 300:
                    return response.status_code
                # The error carries the status and headers (Retry-After) on an answer of its own
                # with an empty body: the receiver's body stays unread, and an error never holds a
                # streamed answer it cannot read once the stream is closed.
                answered = httpx.Response(
                    response.status_code, headers=response.headers, request=response.request
                )
                raise APIError(f"the receiver answered HTTP {response.status_code}", response=answered)

        try:
            status = run_with_retries(
                attempt,
                predicate=_worth_retrying,
                policy=policy,
                sleep=sleep,
                describe=f"webhook {delivery_id}",
                on_retry=on_retry,
            )
        except (APIError, httpx.HTTPError, OSError) as error:
            why = _describe(error)
            logger.warning(
                "webhook %s to %s not delivered after %d attempt(s): %s", delivery_id, shown, attempts, why
            )
            status_code = error.status_code if isinstance(error, APIError) else None
            return DeliveryResult(url, False, attempts, status_code, why)
    logger.info("webhook %s delivered to %s (HTTP %d, attempt %d)", delivery_id, shown, status, attempts)
    return DeliveryResult(url, True, attempts, last_status, None)


def deliver_all(
    urls: Iterable[str],
    run: Mapping[str, Any],
    *,
    secret: str | None,
    sleep: Callable[[float], None] = time.sleep,
    timeout: float = DEFAULT_TIMEOUT,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> list[DeliveryResult]:
    """Announce a terminal run to every URL, one after the other; one result per URL, in order.

    Every URL is checked before anything is sent. Each gets the same body and delivery id, so a
    receiver listed twice (or a second send after a restart) can tell it is the same event.
    """
    targets = [check_url(url) for url in urls]
    body = body_for(run)
    delivery_id = delivery_id_for(str(run["run_id"]))
    return [
        deliver(
            url,
            body,
            secret=secret,
            delivery_id=delivery_id,
            timeout=timeout,
            max_attempts=max_attempts,
            sleep=sleep,
        )
        for url in targets
    ]
