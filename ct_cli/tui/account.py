"""The picker's account-wide search: a filter that names a database, or a database and schema.

The picker normally lists the jobs of the connection's schema. When its filter names a location,
`@DATABASE`, `@DATABASE.SCHEMA` or a bare `DATABASE.SCHEMA`, it reads that location's jobs in full
from the account-level list instead (the service filters them, rather than the picker filtering
the newest jobs of a walk). A page token is tied to the filters it was made under: `AccountWalk`
keeps the token together with those filters and never sends it with others. Nothing here
imports Textual.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: An identifier as SQL writes it: unquoted, or in double quotes with `""` for a quote inside.
_IDENT = r'(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")'
#: `@DB`, `@DB.SCHEMA`, or `DB.SCHEMA` without the `@`.
_AT_LOCATION = re.compile(rf"^@(?P<database>{_IDENT})(?:\.(?P<schema>{_IDENT}))?$")
_BARE_LOCATION = re.compile(rf"^(?P<database>{_IDENT})\.(?P<schema>{_IDENT})$")
#: Jobs asked for per page of the account list.
PAGE_SIZE = 200
#: A location's jobs are read whole, but never more than this many (the picker says when it stops).
MAX_JOBS = 5000


@dataclass(frozen=True)
class Location:
    """A database, or a database and schema, as the user typed them (the service compares them)."""

    database: str
    schema: str | None = None

    def label(self) -> str:
        return f"{self.database}.{self.schema}" if self.schema else self.database

    def filters(self) -> dict[str, Any]:
        return {"database": self.database, "schema": self.schema}


def location_in(query: str) -> Location | None:
    """The location a picker filter names, or None for an ordinary text filter."""
    text = query.strip()
    match = _AT_LOCATION.match(text) or _BARE_LOCATION.match(text)
    if match is None:
        return None
    return Location(match.group("database"), match.group("schema"))


@dataclass
class AccountWalk:
    """The pages of one location read so far, and the token for the next (with its filters)."""

    location: Location
    jobs: list[dict[str, Any]] = field(default_factory=list)
    token: str | None = None
    token_filters: dict[str, Any] | None = None
    done: bool = False

    @property
    def truncated(self) -> bool:
        return not self.done and len(self.jobs) >= MAX_JOBS

    def token_for(self, filters: dict[str, Any]) -> str | None:
        """The saved token, only when `filters` are the ones it was made under."""
        return self.token if self.token is not None and filters == self.token_filters else None

    def read(self, client: Any, *, max_jobs: int = MAX_JOBS, page_size: int = PAGE_SIZE) -> None:
        """Read pages until the list ends or `max_jobs` jobs are in. A token the service can no
        longer open restarts the walk from the first page, once."""
        from ct_core.errors import InvalidPageToken

        filters = self.location.filters()
        restarted = False
        while not self.done and len(self.jobs) < max_jobs:
            token = self.token_for(filters)
            if self.token is not None and token is None:
                raise RuntimeError("a page token may only be sent with the filters it was made under")
            try:
                page = client.list_jobs_page(**filters, page_size=page_size, page_token=token)
            except InvalidPageToken:
                if restarted or token is None:
                    raise
                restarted = True
                self.jobs, self.token, self.token_filters = [], None, None
                continue
            self.jobs.extend(job for job in page.get("jobs") or [] if isinstance(job, dict))
            self.token = page.get("next_page_token") or None
            self.token_filters = dict(filters) if self.token else None
            self.done = self.token is None


def location_of(job: dict[str, Any]) -> str:
    """`DATABASE.SCHEMA` of a job from the account list ('' for a job of the schema's own list)."""
    database, schema = job.get("database_name"), job.get("schema_name")
    return f"{database}.{schema}" if database and schema else ""
