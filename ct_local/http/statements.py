"""The sliver of the Snowflake SQL API (``POST /api/v2/statements``) that ct needs locally.

Clients use it to learn who they are (``SELECT CURRENT_USER(), CURRENT_ROLE()``) and, in
``login``, to look at databases and schemas. The local server answers those few statement kinds
in the SQL API's result shape (``resultSetMetaData.rowType`` plus ``data`` rows of strings) and
refuses anything else with the SQL API's compilation-error shape.
"""

from __future__ import annotations

import re
import time
import uuid
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
