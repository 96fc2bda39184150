"""The SQL statements API client of ct_core.connect.snowflake (identity lookups, polled statements).

Against ct_local for the statements it answers, and against a scripted server for what a real
account does and ct_local does not: a 202 that must be polled, a result in several partitions,
identity answers without rows or without a user.
"""

from __future__ import annotations

import json

import pytest

from ct_core import errors
from ct_core.connect import snowflake as _snowflake
from ct_core.connect.snowflake import current_identity, pat_statements_transport, run_statement

PAT = "statements-pat"


def _answer(columns, rows, *, handle="h-1", partitions=1):
    return {
        "resultSetMetaData": {
            "numRows": len(rows),
            "rowType": [{"name": c, "type": "text"} for c in columns],
            "partitionInfo": [{"rowCount": len(rows)}] * partitions,
        },
        "data": rows,
        "statementHandle": handle,
    }


@pytest.fixture(scope="module")
def server(module_local_server_factory):
    return module_local_server_factory(tokens={PAT: "ANALYST"})


def test_identity_and_show_against_the_local_server(server) -> None:
    transport = pat_statements_transport(server.base_url, PAT)
    try:
        user, role = current_identity(transport)
        assert user.startswith("USER_") and role == "ANALYST"
        databases = run_statement(transport, "SHOW DATABASES")
        assert "name" in databases.columns
        schemas = run_statement(transport, "show schemas in database SOME_DB")
        assert "PUBLIC" in schemas.column("NAME")  # column names match case-insensitively
        assert schemas.column("no_such_column") == []
    finally:
        transport.close()


def test_statement_errors_and_refused_tokens_are_api_errors(server) -> None:
    transport = pat_statements_transport(server.base_url, PAT)
    with pytest.raises(errors.APIError, match="SQL compilation error"):
        run_statement(transport, "DROP DATABASE X")
    transport.close()
    refused = pat_statements_transport(server.base_url, "wrong")
    with pytest.raises(errors.PATRejectedError):
        current_identity(refused)
    refused.close()


def test_sent_body_headers_and_a_polled_202(misbehaving_server, act) -> None:
    misbehaving_server.script(
        act(
            202,
            {"code": "333334", "message": "Asynchronous execution in progress.", "statementHandle": "h-9"},
        ),
        act(202, {"code": "333334", "statementHandle": "h-9"}),
        act(200, _answer(["CURRENT_USER()", "CURRENT_ROLE()"], [["ALICE", "R1"]], handle="h-9")),
    )
    transport = pat_statements_transport(misbehaving_server.base_url, PAT)
    slept: list[float] = []
    try:
        result = run_statement(
            transport, "SELECT CURRENT_USER(), CURRENT_ROLE()", database="DB", schema="S", sleep=slept.append
        )
    finally:
        transport.close()
    assert result.rows == [["ALICE", "R1"]]
    first, *polls = misbehaving_server.requests
    assert (first.method, first.path) == ("POST", "/api/v2/statements")
    assert json.loads(first.body) == {
        "statement": "SELECT CURRENT_USER(), CURRENT_ROLE()",
        "database": "DB",
        "schema": "S",
    }
    assert first.headers["Authorization"] == f"Bearer {PAT}"
    assert first.headers["X-Snowflake-Authorization-Token-Type"] == "PROGRAMMATIC_ACCESS_TOKEN"
    assert [(p.method, p.path) for p in polls] == [("GET", "/api/v2/statements/h-9")] * 2
    assert slept == [_snowflake.STATEMENT_POLL_INTERVAL_S] * 2


def test_every_partition_is_read(misbehaving_server, act) -> None:
    misbehaving_server.script(
        act(200, _answer(["name"], [["A"], ["B"]], handle="h-2", partitions=3)),
        act(200, {"data": [["C"]]}),
        act(200, {"data": [["D"], ["E"]]}),
    )
    transport = pat_statements_transport(misbehaving_server.base_url, PAT)
    try:
        result = run_statement(transport, "SHOW DATABASES")
    finally:
        transport.close()
    assert result.column("name") == ["A", "B", "C", "D", "E"]
    assert [p.path for p in misbehaving_server.requests[1:]] == [
        "/api/v2/statements/h-2?partition=1",
        "/api/v2/statements/h-2?partition=2",
    ]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            _answer(["CURRENT_USER()", "CURRENT_ROLE()"], []),
            "SQL query returned no rows: SELECT CURRENT_USER()",
        ),
        (
            _answer(["CURRENT_USER()", "CURRENT_ROLE()"], [[None, "R"]]),
            "SQL identity response missing current user",
        ),
        ({"data": []}, "has no resultSetMetaData.rowType"),
    ],
)
def test_identity_answers_that_cannot_be_used(misbehaving_server, act, answer, message) -> None:
    misbehaving_server.script(act(200, answer))
    transport = pat_statements_transport(misbehaving_server.base_url, PAT)
    try:
        with pytest.raises(errors.ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
            current_identity(transport)
    finally:
        transport.close()


@pytest.mark.parametrize("name", ["MY_DB", "db$2", '"Mixed Case"'])
def test_identifiers_that_may_go_into_sql(name: str) -> None:
    assert _snowflake.checked_identifier(name, "database") == name


@pytest.mark.parametrize("name", ["", "1DB", "DB; DROP", 'a"b', '"x"y"', "db.schema"])
def test_identifiers_that_may_not(name: str) -> None:
    with pytest.raises(errors.ConfigError, match="not a plain Snowflake identifier"):
        _snowflake.checked_identifier(name, "database")
