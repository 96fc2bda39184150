"""A minimal stand-in for `snowflake.connector`, put first on sys.path by tests (no network).

It follows the real Connector's interface where ct touches it: `connect(connection_name=..., **kw)`
returns a connection whose `rest` property has `token` (None once closed) and `server_url`
(`scheme://host:port`), and which has `close()` and `is_closed()`. Sign-in failures are
`errors.DatabaseError` with an `errno`.

Behaviour is scripted through module state (in-process tests) or the environment (subprocesses):

- `SESSIONS`: session tokens handed out by successive `connect()` calls; when empty, the token is
  the profile's `token` from `$SNOWFLAKE_HOME/connections.toml` (a PAT used as the session).
- `FAILURES`: exceptions raised by the next `connect()` calls, first.
- `CALLS`: the keyword arguments of every `connect()` call; `CONNECTIONS`: every connection made.
- `CT_FAKE_SNOWFLAKE_SERVER_URL`: the origin the sessions report (the test's local server).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from snowflake.connector import errors
from snowflake.connector.errors import DatabaseError, Error, OperationalError

__all__ = ["DatabaseError", "Error", "OperationalError", "SnowflakeConnection", "connect", "errors"]

SESSIONS: list[str] = []
FAILURES: list[BaseException] = []
CALLS: list[dict[str, Any]] = []
CONNECTIONS: list[SnowflakeConnection] = []


class SnowflakeRestful:
    """The slice of the Connector's `SnowflakeRestful` that REST clients read."""

    def __init__(self, connection: SnowflakeConnection) -> None:
        self._connection = connection

    @property
    def token(self) -> str | None:
        return None if self._connection.is_closed() else self._connection._token

    @property
    def server_url(self) -> str:
        return self._connection._server_url


class SnowflakeConnection:
    def __init__(self, session_token: str, server_url: str, **kwargs: Any) -> None:
        # `kwargs` are connect()'s arguments as given (a PAT login passes its own `token`).
        self._token = session_token
        self._server_url = server_url
        self._closed = False
        self.kwargs = kwargs

    @property
    def rest(self) -> SnowflakeRestful:
        return SnowflakeRestful(self)

    def is_closed(self) -> bool:
        return self._closed

    def close(self, retry: bool = True) -> None:
        self._closed = True


Connection = SnowflakeConnection


def _profile_token(name: str | None) -> str:
    home = Path(os.environ.get("SNOWFLAKE_HOME", str(Path.home() / ".snowflake")))
    profiles = tomllib.loads((home / "connections.toml").read_text(encoding="utf-8"))
    profile = profiles.get(name or "default")
    if not isinstance(profile, dict) or not profile.get("token"):
        raise DatabaseError(msg=f"Connection {name!r} is not defined or has no token", errno=251001)
    return str(profile["token"])


def connect(**kwargs: Any) -> SnowflakeConnection:
    CALLS.append(dict(kwargs))
    if FAILURES:
        raise FAILURES.pop(0)
    token = SESSIONS.pop(0) if SESSIONS else _profile_token(kwargs.get("connection_name"))
    url = os.environ.get("CT_FAKE_SNOWFLAKE_SERVER_URL")
    if not url:
        raise OperationalError(msg="CT_FAKE_SNOWFLAKE_SERVER_URL is not set", errno=250001)
    connection = SnowflakeConnection(token, url, **kwargs)
    CONNECTIONS.append(connection)
    return connection
