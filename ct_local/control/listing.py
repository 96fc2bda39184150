"""Job listings: the per-schema ``GET /`` filter and the account-level ``GET /api/v2/{endpoint}``.

The two lists read ``status`` differently, on purpose, because the contract does: the per-schema
list takes one status where ``pending`` also matches placing jobs and anything else unknown
(``active``, comma lists, ``done``) matches nothing; the account list takes a comma list with the
``active`` and ``terminal`` groups, where ``pending`` excludes placing and an unknown value is 400.

Account page tokens are sealed with an HMAC key kept in the state dir: a token is the position
after the page plus a fingerprint of the filters, so it survives restarts, is refused with
``Invalid page_token`` once the key rotates, and is refused when sent with other filters.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from ct_local.http.errors import ServiceError, invalid_request
from ct_local.settings import ACCOUNT_LIST_DEFAULT_LIMIT, ACCOUNT_LIST_MAX_LIMIT
from ct_local.storage.store import JobRow

ACTIVE = ("pending", "placing", "initializing", "running")
TERMINAL = ("failed", "cancelled", "terminated")
INVALID_PAGE_TOKEN = "Invalid page_token"


def sql_identifier(name: str) -> str:
    """Resolve a SQL identifier: ``"Quoted"`` is exact, anything else is case-insensitive (upper)."""
    if len(name) >= 2 and name.startswith('"') and name.endswith('"'):
        return name[1:-1].replace('""', '"')
    return name.upper()


def schema_status_matches(job_status: str, wanted: str | None) -> bool:
    """Per-schema list filter: one status; ``pending`` includes ``placing``."""
    if wanted is None or wanted == "":
        return True
    wanted = wanted.strip().lower()
    if wanted == "pending":
        return job_status in ("pending", "placing")
    return job_status == wanted


def _parse_statuses(raw: str) -> set[str]:
    result: set[str] = set()
    for part in raw.split(","):
        name = part.strip().lower()
        if not name:
            continue
        if name == "active":
            result.update(ACTIVE)
        elif name == "terminal":
            result.update(TERMINAL)
        elif name in ACTIVE or name in TERMINAL:
            result.add(name)
        else:
            raise invalid_request(
                f"Invalid status {part.strip()!r}: expected pending, placing, initializing, running, "
                "failed, cancelled, terminated, active or terminal"
            )
    if not result:
        raise invalid_request("status must name at least one status")
    return result


def _parse_time(name: str, raw: str) -> float:
    text = raw.strip()
    try:
        if len(text) == 10:
            value = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
        else:
            value = datetime.fromisoformat(text.replace("z", "Z"))
            if value.tzinfo is None:
                raise ValueError("no time zone")
    except ValueError as exc:
        raise invalid_request(f"{name} must be an RFC 3339 timestamp or YYYY-MM-DD, got {raw!r}") from exc
    return value.timestamp()


class AccountQuery:
    """The parsed, checked filters of one account-level list request."""

    def __init__(self, params: Mapping[str, str]) -> None:
        self.database = sql_identifier(params["database"]) if params.get("database") else None
        self.schema = sql_identifier(params["schema"]) if params.get("schema") else None
        if self.schema is not None and self.database is None:
            raise invalid_request("schema requires database")
        self.statuses = _parse_statuses(params["status"]) if params.get("status") else None
        self.submitted_by = sql_identifier(params["submitted_by"]) if params.get("submitted_by") else None
        self.after = (
            _parse_time("created_after", params["created_after"]) if params.get("created_after") else None
        )
        self.before = (
            _parse_time("created_before", params["created_before"]) if params.get("created_before") else None
        )
        if self.after is not None and self.before is not None and self.after >= self.before:
            raise invalid_request("created_after must be earlier than created_before")
        raw_limit = params.get("limit")
        try:
            self.limit = int(raw_limit) if raw_limit else ACCOUNT_LIST_DEFAULT_LIMIT
        except ValueError as exc:
            raise invalid_request(f"limit must be an integer between 1 and {ACCOUNT_LIST_MAX_LIMIT}") from exc
        if not 1 <= self.limit <= ACCOUNT_LIST_MAX_LIMIT:
            raise invalid_request(f"limit must be an integer between 1 and {ACCOUNT_LIST_MAX_LIMIT}")
        self.page_token = params.get("page_token") or None

    def fingerprint(self) -> str:
        """What a page token is bound to: every filter except the page size."""
        filters = [
            self.database,
            self.schema,
            sorted(self.statuses) if self.statuses else None,
            self.submitted_by,
            self.after,
            self.before,
        ]
        return hashlib.sha256(json.dumps(filters).encode()).hexdigest()[:16]

    def matches(self, job: JobRow) -> bool:
        if self.database is not None and job.database_name != self.database:
            return False
        if self.schema is not None and job.schema_name != self.schema:
            return False
        if self.statuses is not None and job.status not in self.statuses:
            return False
        if self.submitted_by is not None and job.submitted_by != self.submitted_by:
            return False
        if self.after is not None and job.created_at < self.after:
            return False
        return self.before is None or job.created_at < self.before


def seal_token(key: bytes, fingerprint: str, position: int) -> str:
    payload = base64.urlsafe_b64encode(json.dumps({"f": fingerprint, "p": position}).encode()).decode()
    mac = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{payload}.{mac}"


def open_token(key: bytes, token: str, fingerprint: str) -> int:
    """Return the position a token points at, or raise the contract's 400 answers."""
    payload, _, mac = token.partition(".")
    expected = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()[:32]
    if not mac or not hmac.compare_digest(mac, expected):
        raise invalid_request(INVALID_PAGE_TOKEN)
    try:
        data = json.loads(base64.urlsafe_b64decode(payload.encode()))
        position = int(data["p"])
        token_fingerprint = str(data["f"])
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid_request(INVALID_PAGE_TOKEN) from exc
    if token_fingerprint != fingerprint:
        raise invalid_request("page_token was issued for different filters; send the same filters with it")
    return position


def account_entry(job: JobRow) -> dict[str, Any]:
    entry = job.record()
    entry["status"] = job.status.upper()
    entry["database_name"] = job.database_name
    entry["schema_name"] = job.schema_name
    return entry


def account_page(query: AccountQuery, jobs: Iterable[JobRow], key: bytes) -> dict[str, Any]:
    """One page of matches, newest first; ``jobs`` must already be newest first after the token."""
    page: list[JobRow] = []
    more = False
    for job in jobs:
        if not query.matches(job):
            continue
        if len(page) == query.limit:
            more = True
            break
        page.append(job)
    answer: dict[str, Any] = {"jobs": [account_entry(j) for j in page]}
    if more:
        answer["next_page_token"] = seal_token(key, query.fingerprint(), page[-1].seq)
    return answer


def not_enabled() -> ServiceError:
    return ServiceError(404, "Account-level job listing is not enabled for this account")
