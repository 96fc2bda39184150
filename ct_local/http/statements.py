"""The sliver of the Snowflake SQL API (``POST /api/v2/statements``) that ct needs locally.

Clients use it to learn who they are (``SELECT CURRENT_USER(), CURRENT_ROLE()``) and, in
``login``, to look at databases and schemas. The local server answers those few statement kinds
in the SQL API's result shape (``resultSetMetaData.rowType`` plus ``data`` rows of strings) and
refuses anything else with the SQL API's compilation-error shape.

Every statement finishes before its POST is answered (200, never 202), but the answer names a
``statementHandle`` all the same; :class:`StatementResults` keeps the newest answers so that
``GET /api/v2/statements/{statement_handle}`` (getStatementStatus) answers the same rows again, to
the role that ran the statement only, as a client polling a handle or fetching a partition expects.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from ct_local.settings import ACCOUNT_NAME, Identity

_FUNCTION_RE = re.compile(r"^(CURRENT_[A-Z_]+)\s*\(\s*\)$")
_SHOW_SCHEMAS_RE = re.compile(r"^SHOW\s+SCHEMAS(?:\s+IN\s+(?:DATABASE\s+)?(\S+))?$")
_CREATE_DB_RE = re.compile(r"^CREATE\s+DATABASE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\S+)$")


class StatementError(Exception):
    """A statement the local server does not understand (answered with HTTP 422)."""


def _result(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    return {
        "resultSetMetaData": {
            "numRows": len(rows),
            "format": "jsonv2",
            "rowType": [{"name": c, "type": "text", "nullable": True} for c in columns],
            "partitionInfo": [{"rowCount": len(rows)}],
        },
        "data": [[None if v is None else str(v) for v in row] for row in rows],
        "code": "090001",
        "sqlState": "00000",
        "statementHandle": str(uuid.uuid4()),
        "message": "Statement executed successfully.",
        "createdOn": int(time.time() * 1000),
    }


def execute(
    statement: str,
    identity: Identity,
    *,
    database: str | None,
    schema: str | None,
    locations: Iterable[tuple[str, str]],
) -> dict[str, Any]:
    """Answer ``statement``; ``locations`` are the (database, schema) pairs the server has seen."""
    text = " ".join(statement.strip().rstrip(";").split())
    upper = text.upper()
    if upper.startswith("SELECT "):
        values = {
            "CURRENT_USER": identity.user,
            "CURRENT_ROLE": identity.role,
            "CURRENT_ACCOUNT": ACCOUNT_NAME,
            "CURRENT_ACCOUNT_NAME": ACCOUNT_NAME,
            "CURRENT_DATABASE": database,
            "CURRENT_SCHEMA": schema,
        }
        columns: list[str] = []
        row: list[Any] = []
        for item in text[len("SELECT ") :].split(","):
            match = _FUNCTION_RE.match(item.strip().upper())
            if match is None or match.group(1) not in values:
                raise StatementError(f"SQL compilation error: unsupported expression {item.strip()!r}")
            columns.append(item.strip().upper())
            row.append(values[match.group(1)])
        return _result(columns, [row])
    known = sorted(set(locations))
    if upper == "SHOW DATABASES":
        names = sorted({db for db, _ in known} | ({database.upper()} if database else set()))
        return _result(
            ["created_on", "name", "owner", "comment", "kind"],
            [[None, n, None, "", "STANDARD"] for n in names],
        )
    match = _SHOW_SCHEMAS_RE.match(upper)
    if match:
        in_db = match.group(1).strip('"') if match.group(1) else (database or "").upper()
        names = sorted({s for db, s in known if db == in_db} | {"PUBLIC"})
        return _result(
            ["created_on", "name", "is_default", "is_current", "database_name", "owner", "comment"],
            [[None, n, "N", "N", in_db, None, ""] for n in names],
        )
    match = _CREATE_DB_RE.match(upper)
    if match:
        name = match.group(1).strip('"')
        return _result(["status"], [[f"Database {name} successfully created."]])
    raise StatementError("SQL compilation error: this local server only answers identity and SHOW statements")


def error_body(message: str) -> dict[str, Any]:
    return {"code": "001003", "message": message, "sqlState": "42000", "statementHandle": str(uuid.uuid4())}


def not_found_body(handle: str) -> dict[str, Any]:
    """The SQL API's answer about a handle it does not know (or that another role's statement has)."""
    return {
        "code": "000709",
        "message": f"Statement {handle} not found.",
        "sqlState": "02000",
        "statementHandle": handle,
    }


class StatementResults:
    """The answers of the newest ``kept`` statements one server ran, by handle, with their role."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._lock = threading.Lock()
        self._answers: OrderedDict[str, tuple[str, dict[str, Any]]] = OrderedDict()

    def remember(self, role: str, answer: dict[str, Any]) -> None:
        with self._lock:
            self._answers[str(answer["statementHandle"])] = (role, answer)
            while len(self._answers) > self._kept:
                self._answers.popitem(last=False)

    def answer(self, role: str, handle: str) -> dict[str, Any] | None:
        """The answer of ``handle`` when ``role`` ran it; None for a handle unknown to this role."""
        with self._lock:
            found = self._answers.get(handle)
        if found is None or found[0] != role:
            return None
        return found[1]
