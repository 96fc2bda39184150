"""A Snowpark Session on the client's own credentials.

Users who train with ct often prepare data or read results with Snowpark in the same script. This
helper hands them a Session signed in exactly the way artifact downloads sign in: a
profile client opens an independent Connector session from its profile; a PAT client resolves its
user and role through the SQL statements API and logs in with the token. The Connector connection
is then wrapped by Snowpark (``Session.builder.configs({"connection": ...})``), so Snowpark never
sees the token and no second login path exists.

snowflake-snowpark-python is an optional extra (``pip install 'ct[snowpark]'``), imported only here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ct_core.errors import ConfigError

SNOWPARK_HINT = "create_snowpark_session() needs snowflake-snowpark-python: pip install 'ct[snowpark]'"


def _connector(client: Any) -> Callable[[], Any]:
    """How to open a Connector connection on the client's credentials, database and schema."""
    credential = client.credential
    if credential.kind == "profile":
        from ct_core.connect.snowflake import open_profile_session

        profile = credential.profile
        # The client may have been pointed at another database or schema than its profile names.
        return lambda: open_profile_session(profile, database=client.database, schema=client.schema)
    if credential.kind == "pat":
        from ct_core.downloads.snowflake_store import connector_for

        return connector_for(client)
    raise ConfigError(
        "create_snowpark_session() needs a PAT or connection-profile client; a --base-url client "
        "has no Snowflake credentials to sign in with"
    )


def snowpark_session(client: Any) -> Any:
    """A new Snowpark Session for ``client``'s account, database and schema; the caller closes it."""
    connect = _connector(client)
    try:
        from snowflake.snowpark import Session
    except ImportError as error:
        raise ConfigError(SNOWPARK_HINT) from error
    connection = connect()
    try:
        session = Session.builder.configs({"connection": connection}).create()
    except BaseException:
        connection.close()
        raise
    return session
