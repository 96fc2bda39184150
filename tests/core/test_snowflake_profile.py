"""Profile clients (`from_configs`) against ct_local, with a stand-in Snowflake Connector.

The stand-in (tests/core/fake_snowflake) mimics the Connector's interface where ct touches it, so
everything from the profile lookup to the `Authorization: Snowflake Token="..."` header, the
one replay after an expired session and the next steps for a refused access token runs for real
against a local server that only accepts the session tokens the stand-in hands out. Where a test
reads the headers a client sent, a recording relay sits between the client and that server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ct_core import errors
from ct_core.client import CortexTrainingClient

SESSION_1 = "session-token-one"
SESSION_2 = "session-token-two"
DATABASE = "CT_PROFILE_DB"
#: What Snowflake answers for a session token that expired (a code of SESSION_EXPIRED_CODES).
EXPIRED = {"code": "390112", "message": "Your session has expired. Please login again."}


@pytest.fixture(scope="module")
def session_server(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(tokens={SESSION_1: "TRAINER", SESSION_2: "TRAINER"})


@pytest.fixture
def profile(ct_home: Path, session_server: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """A connections.toml profile `training`; the stand-in's sessions report the local server."""
    (ct_home / ".snowflake" / "connections.toml").write_text(
        f'[training]\naccount = "myorg-acct"\nuser = "ALICE"\ndatabase = "{DATABASE}"\nschema = "PUBLIC"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("CT_FAKE_SNOWFLAKE_SERVER_URL", session_server.base_url)
    return "training"


@pytest.fixture
def recorded(profile: str, session_server: Any, relay: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A recording relay in front of the local server; the stand-in's sessions report the relay."""
    server = relay(session_server.base_url)
    monkeypatch.setenv("CT_FAKE_SNOWFLAKE_SERVER_URL", server.base_url)
    return server


def _authorizations(server: Any) -> list[str | None]:
    """The Authorization header of every request that arrived at the relay."""
    return [seen.header("Authorization") for seen in server.requests]


def test_profile_client_signs_with_the_session_token(
    fake_connector: ModuleType, profile: str, recorded: Any
) -> None:
    fake_connector.SESSIONS[:] = [SESSION_1]
    with CortexTrainingClient.from_configs(connection=profile, max_retries=0) as client:
        assert client.database == DATABASE and client.schema == "PUBLIC"
        assert client.list_jobs() == []
        assert _authorizations(recorded) == [f'Snowflake Token="{SESSION_1}"']
        assert fake_connector.CALLS == [{"connection_name": "training"}]
        session = fake_connector.CONNECTIONS[0]
    assert session.is_closed()  # close() releases the Connector session the client owns


def test_expired_session_is_renewed_once_and_the_request_replayed(
    fake_connector: ModuleType, profile: str, session_server: Any, recorded: Any
) -> None:
    fake_connector.SESSIONS[:] = [SESSION_1, SESSION_2]
    session_server.set_faults({"path": "/cortex-training$", "method": "GET", "status": 401, "body": EXPIRED})
    try:
        with CortexTrainingClient.from_configs(connection=profile, max_retries=0) as client:
            assert client.list_jobs() == []
    finally:
        session_server.clear_faults()
    assert _authorizations(recorded) == [f'Snowflake Token="{SESSION_1}"', f'Snowflake Token="{SESSION_2}"']
    first, second = fake_connector.CONNECTIONS
    assert first.is_closed() and second.is_closed()
    assert len(fake_connector.CALLS) == 2


def test_a_second_expiry_is_raised_without_a_pat_hint(
    fake_connector: ModuleType, profile: str, session_server: Any
) -> None:
    fake_connector.SESSIONS[:] = [SESSION_1, SESSION_2, "never-used"]
    session_server.set_faults(
        {"path": "/cortex-training$", "method": "GET", "status": 401, "body": EXPIRED, "count": 2}
    )
    try:
        with (
            CortexTrainingClient.from_configs(connection=profile, max_retries=0) as client,
            pytest.raises(errors.AuthenticationError) as caught,
        ):
            client.list_jobs()
    finally:
        session_server.clear_faults()
    assert len(fake_connector.CALLS) == 2  # one renewal, one replay, then the error
    assert not isinstance(caught.value, errors.PATRejectedError)
    assert "Your session has expired" in str(caught.value) and "(390112)" in str(caught.value)
    assert "network policy" not in str(caught.value)


def test_a_401_that_is_not_an_expiry_is_neither_replayed_nor_hinted(
    fake_connector: ModuleType, profile: str, session_server: Any
) -> None:
    fake_connector.SESSIONS[:] = [SESSION_1, SESSION_2]
    refused = {"code": "390303", "message": "Invalid OAuth access token."}
    session_server.set_faults({"path": "/cortex-training$", "method": "GET", "status": 401, "body": refused})
    try:
        with (
            CortexTrainingClient.from_configs(connection=profile, max_retries=0) as client,
            pytest.raises(errors.AuthenticationError) as caught,
        ):
            client.list_jobs()
    finally:
        session_server.clear_faults()
    assert len(fake_connector.CALLS) == 1
    assert not isinstance(caught.value, errors.PATRejectedError)
    assert "network policy" not in str(caught.value)


@pytest.mark.parametrize(
    ("errno", "message"),
    [
        (394400, "Programmatic access token is invalid."),
        (-1, "Failed to authenticate: programmatic access token is invalid"),
    ],
)
def test_a_refused_profile_token_gets_next_steps(
    fake_connector: ModuleType, profile: str, errno: int, message: str
) -> None:
    original = fake_connector.DatabaseError(msg=message, errno=errno, sqlstate="08004")
    fake_connector.FAILURES[:] = [original]
    with pytest.raises(errors.PATRejectedError) as caught:
        CortexTrainingClient.from_configs(connection=profile)
    text = str(caught.value)
    assert text.splitlines()[0] == str(original)  # the Connector's own error, kept as it was
    assert text.endswith(errors.PAT_REJECTED_HINT)
    assert caught.value.__cause__ is original
    assert caught.value.errno == (errno if errno >= 0 else -1)


def test_other_connector_failures_pass_through(fake_connector: ModuleType, profile: str) -> None:
    fake_connector.FAILURES[:] = [fake_connector.OperationalError(msg="Could not connect", errno=250001)]
    with pytest.raises(fake_connector.OperationalError, match="Could not connect"):
        CortexTrainingClient.from_configs(connection=profile)


# --- a Snowpark Session on the client's credentials ---------------------------------------------------


def test_snowpark_session_from_a_profile_client(fake_connector: ModuleType, profile: str) -> None:
    fake_connector.SESSIONS[:] = [SESSION_1, SESSION_2]
    with CortexTrainingClient.from_configs(connection=profile, max_retries=0) as client:
        session = client.create_snowpark_session()
        own, wrapped = fake_connector.CONNECTIONS
        # An independent login on the same profile, at the client's database and schema.
        assert session.connection is wrapped and wrapped is not own
        assert fake_connector.CALLS[-1] == {
            "connection_name": "training",
            "database": DATABASE,
            "schema": "PUBLIC",
        }
        session.close()
        assert wrapped.is_closed() and not own.is_closed()
        assert client.list_jobs() == []  # the client's own session is untouched


def test_snowpark_session_from_a_pat_client(
    fake_connector: ModuleType, tls_server: Any, act: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, cert = tls_server
    monkeypatch.setenv("CT_FAKE_SNOWFLAKE_SERVER_URL", server.base_url)
    identity = {
        "resultSetMetaData": {
            "numRows": 1,
            "rowType": [{"name": "CURRENT_USER()"}, {"name": "CURRENT_ROLE()"}],
            "partitionInfo": [{"rowCount": 1}],
        },
        "data": [["ALICE", "TRAINER"]],
        "statementHandle": "h-1",
    }
    server.script(act(200, identity))
    fake_connector.SESSIONS[:] = ["pat-session"]
    host = server.base_url.removeprefix("https://")
    client = CortexTrainingClient.from_pat(host, "the-pat", "DB", "SC", verify_ssl=str(cert))  # type: ignore[arg-type]
    try:
        session = client.create_snowpark_session()
    finally:
        client.close()
    [call] = fake_connector.CALLS
    assert call["authenticator"] == "PROGRAMMATIC_ACCESS_TOKEN" and call["token"] == "the-pat"
    assert (call["user"], call["role"], call["database"], call["schema"]) == ("ALICE", "TRAINER", "DB", "SC")
    assert session.connection is fake_connector.CONNECTIONS[0]
    [statement] = server.requests
    assert statement.path.startswith("/api/v2/statements")
    session.close()


def test_snowpark_session_needs_credentials_and_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    local = CortexTrainingClient(base_url="http://127.0.0.1:9", database="DB", schema="SC")
    with local, pytest.raises(errors.ConfigError, match="PAT or connection-profile client"):
        local.create_snowpark_session()
    # With credentials but without snowflake-snowpark-python, the error says how to get it.
    monkeypatch.setitem(sys.modules, "snowflake.snowpark", None)
    pat_client = CortexTrainingClient.from_pat("acct.snowflakecomputing.com", "the-pat", "DB", "SC")
    with pytest.raises(errors.ConfigError, match=r"pip install 'ct\[snowpark\]'"):
        pat_client.create_snowpark_session()
    pat_client.close()
