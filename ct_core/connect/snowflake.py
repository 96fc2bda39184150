"""Snowflake Connector sessions for profile clients: sign-in, token signing, and replay after expiry.

`snowflake.connector` is imported here only, and only when a profile is actually used, so the CLI
and `import ct_core` never pay for it. A profile client signs each request with the live session
token (`Authorization: Snowflake Token="..."`) and, when the service says explicitly that the token
expired, reconnects once (under a lock, so concurrent threads reconnect once) and replays. When
the Connector refuses a profile's programmatic access token at sign-in, the error says what to check.

It also holds the small client of Snowflake's SQL statements API (`POST /api/v2/statements`, outside
the per-schema prefix; operation executeStatement) that identity look-ups and
`ct login --convert-legacy-config` use: run one statement, read its rows by column name.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ct_core.http.transport import Response
    from ct_core.operations import models as api_models

from ct_core.constants import (
    DEFAULT_CONNECT_TIMEOUT,
    PAT_TOKEN_TYPE,
    SESSION_EXPIRED_CODES,
    TOKEN_TYPE_HEADER,
)
from ct_core.errors import (
    APIError,
    ConfigError,
    error_codes,
    is_pat_rejection,
    pat_rejected_from_connector,
    response_json,
)
from ct_core.operations import account


def open_profile_session(connection: str | None, **overrides: Any) -> Any:
    """Open a Connector session for profile `connection` (None: the Connector's default)."""
    try:
        import snowflake.connector
    except ImportError as error:  # pragma: no cover - a dependency of the root distribution
        raise ConfigError("snowflake-connector-python is needed for connection profiles") from error
    kwargs = {key: value for key, value in overrides.items() if value is not None}
    if connection:
        kwargs["connection_name"] = connection
    try:
        return snowflake.connector.connect(**kwargs)
    except Exception as error:
        # A refused token is the common first-run failure; say what to check.
        if is_pat_rejection(error):
            raise pat_rejected_from_connector(error) from error
        raise


def session_server_url(session: Any) -> str:
    """The REST origin the Connector resolved for this session (must be http or https)."""
    rest = getattr(session, "rest", None)
    url = getattr(rest, "server_url", None)
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        raise ConfigError(f"the Snowflake Connector resolved no http(s) server URL for this profile: {url!r}")
    return url.rstrip("/")


def _session_token(session: Any) -> str:
    rest = getattr(session, "rest", None)
    token = getattr(rest, "token", None)
    if not token:
        raise ConfigError("the Snowflake session has no token; run `ct login` again")
    return str(token)


def _signature(token: str) -> str:
    """The Authorization header value for a session token."""
    return f'Snowflake Token="{token}"'


def is_session_expired(error: APIError) -> bool:
    """An explicit expiry: a known code anywhere in the body, or a 401 with no structured code."""
    if error.response is None:
        return False
    codes = error_codes(response_json(error.response))
    if any(code in SESSION_EXPIRED_CODES for code in codes):
        return True
    return error.status_code == 401 and not codes


class SnowflakeSessionAuth:
    """Signs requests with a Connector session's live token; renews the session when it expires."""

    def __init__(self, connection: str | None, session: Any, **overrides: Any) -> None:
        self.connection = connection
        self._overrides = overrides
        self._session = session
        self._pid = os.getpid()
        self._lock = threading.Lock()

    @property
    def session(self) -> Any:
        # After fork() the child must not share the parent's session: open its own.
        if os.getpid() != self._pid:
            with self._lock:
                if os.getpid() != self._pid:
                    self._session = open_profile_session(self.connection, **self._overrides)
                    self._pid = os.getpid()
        return self._session

    def authorization(self) -> str:
        return _signature(_session_token(self.session))

    def refresh_after(self, error: APIError, signed_with: str | None = None) -> bool:
        """Renew after an explicit expiry, unless the request was signed with an older session.

        Several threads that fail on the same expired token all land here: the first renews, the
        others find the live token differs from the one their request carried and only replay.
        """
        if not is_session_expired(error):
            return False
        with self._lock:
            current = self._session
            # Read the token straight off the session: the `session` property takes this same lock.
            token = getattr(getattr(current, "rest", None), "token", None)
            if signed_with is not None and token and _signature(str(token)) != signed_with:
                # Another thread renewed the session after this request was signed: replay with it.
                return True
            try:
                current.close()
            except Exception:
                pass
            self._session = open_profile_session(self.connection, **self._overrides)
        return True

    def close(self) -> None:
        try:
            self._session.close()
        except Exception:
            pass


# --------------------------------------------------------------------------------------------------
# The SQL statements API (a call outside the per-schema prefix; operations executeStatement and
# getStatementStatus)
# --------------------------------------------------------------------------------------------------

#: Retries of one statement call. SELECT and SHOW read only, and CREATE ... IF NOT EXISTS may run
#: twice harmlessly, so retrying is safe; kept low because the caller is usually a person waiting.
STATEMENT_MAX_RETRIES = 2
#: The read timeout of one statement call, and how long an accepted (202) statement is waited for.
STATEMENT_TIMEOUT_S = 60.0
#: Pause between polls of a statement the service accepted but had not finished (202).
STATEMENT_POLL_INTERVAL_S = 0.5
#: The statement that tells who a token belongs to (its user and role).
IDENTITY_STATEMENT = "SELECT CURRENT_USER(), CURRENT_ROLE()"
#: A database or schema name ct is willing to put into SQL: a plain identifier, or a quoted one
#: with no quote inside. Anything else is refused rather than escaped.
_IDENTIFIER_RE = re.compile(r'^(?:[A-Za-z_][A-Za-z0-9_$]*|"[^"]+")$')


@dataclass(frozen=True)
class StatementResult:
    """The rows of one statement (every value a string or None, as the SQL API sends them)."""

    statement: str
    columns: list[str]
    rows: list[list[str | None]]

    def column(self, name: str) -> list[str | None]:
        """Every row's value of column `name` (matched case-insensitively); [] when it is absent."""
        wanted = name.lower()
        for position, column in enumerate(self.columns):
            if column.lower() == wanted:
                return [row[position] if position < len(row) else None for row in self.rows]
        return []


def checked_identifier(name: str, what: str) -> str:
    """`name` when it is safe to place in SQL as an identifier; ConfigError otherwise."""
    if not _IDENTIFIER_RE.match(name):
        raise ConfigError(
            f"{what} {name!r} is not a plain Snowflake identifier (letters, digits, _ and $, not starting "
            "with a digit) or a double-quoted name; ct will not put it into SQL"
        )
    return name


def pat_statements_transport(origin: str, pat: str, *, verify: bool | str = True) -> Any:
    """A transport to `origin` that signs with a programmatic access token, for statement calls.

    Going through `Transport` gives these calls the same error mapping (a refused token gets the
    hint on what to check), redirect refusal and retry policy as every other request.
    """
    from ct_core.http.transport import Transport

    headers = {
        "Authorization": f"Bearer {pat}",
        TOKEN_TYPE_HEADER: PAT_TOKEN_TYPE,
        "Accept": "application/json",
    }
    return Transport(
        origin.rstrip("/"),
        headers=headers,
        verify=verify,
        timeout=(DEFAULT_CONNECT_TIMEOUT, STATEMENT_TIMEOUT_S),
        pool_maxsize=1,
        max_retries=STATEMENT_MAX_RETRIES,
    )


class ClientStatements:
    """An SDK client's own request path, for statement calls: the client's REST origin (the hyphen
    form of a Snowflake host, where wildcard certificates match), its credential and error mapping,
    with the statement calls' shorter read timeout and fewer retries."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def request(self, operation_id: str, **options: Any) -> Response:
        connect, read = self._client.request_timeout
        options.setdefault("timeout", (connect, min(read, STATEMENT_TIMEOUT_S)))
        options.setdefault("max_retries", STATEMENT_MAX_RETRIES)
        response: Response = self._client.request(operation_id, **options)
        return response


def _json_object(response: Any, statement: str) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        raise ConfigError(f"the SQL API answered {statement!r} with something that is not a JSON object")
    return payload


def run_statement(
    transport: Any,
    statement: str,
    *,
    database: str | None = None,
    schema: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> StatementResult:
    """Run one statement through the SQL API and return all its rows.

    `database`/`schema` set the statement's context; leave them out when they may not exist yet
    (a missing context database fails the statement). An answer of 202 (still running) is polled
    until it finishes; a result in several partitions is fetched whole.
    """
    body: api_models.StatementRequest = {"statement": statement}
    if database:
        body["database"] = database
    if schema:
        body["schema"] = schema
    response = account.execute_statement(transport, body=body)
    deadline = time.monotonic() + STATEMENT_TIMEOUT_S
    payload = _json_object(response, statement)
    while response.status_code == 202:
        handle = payload.get("statementHandle")
        if not isinstance(handle, str) or not handle:
            raise ConfigError(f"the SQL API accepted {statement!r} but named no statement handle to poll")
        if time.monotonic() > deadline:
            raise ConfigError(f"the SQL API did not finish {statement!r} within {STATEMENT_TIMEOUT_S:g} s")
        sleep(STATEMENT_POLL_INTERVAL_S)
        response = account.get_statement_status(transport, statement_handle=handle)
        payload = _json_object(response, statement)
    meta = payload.get("resultSetMetaData")
    row_type = meta.get("rowType") if isinstance(meta, dict) else None
    if not isinstance(row_type, list):
        raise ConfigError(f"the SQL API answer to {statement!r} has no resultSetMetaData.rowType")
    columns = [str(column.get("name", "")) if isinstance(column, dict) else "" for column in row_type]
    rows = [list(row) for row in payload.get("data") or [] if isinstance(row, list)]
    partitions = meta.get("partitionInfo") if isinstance(meta, dict) else None
    handle = payload.get("statementHandle")
    if isinstance(partitions, list) and len(partitions) > 1 and isinstance(handle, str):
        # Large results come in partitions; the first arrives with the answer, the rest on request.
        for index in range(1, len(partitions)):
            more = account.get_statement_status(transport, statement_handle=handle, partition=index)
            rows.extend(list(row) for row in _json_object(more, statement).get("data") or [])
    return StatementResult(statement=statement, columns=columns, rows=rows)


def current_identity(
    transport: Any, *, database: str | None = None, schema: str | None = None
) -> tuple[str, str | None]:
    """The user and role a token acts as: `SELECT CURRENT_USER(), CURRENT_ROLE()`."""
    result = run_statement(transport, IDENTITY_STATEMENT, database=database, schema=schema)
    if not result.rows:
        raise ConfigError(f"SQL query returned no rows: {IDENTITY_STATEMENT}")
    first = result.rows[0]
    user = first[0] if first else None
    if not user:
        raise ConfigError("SQL identity response missing current user")
    role = first[1] if len(first) > 1 else None
    return str(user), (str(role) if role else None)
