"""The Snowflake artifact store: LIST and GET on a Connector session.

One Connector session serves a whole download; every LIST or GET runs on its own cursor, so the
parallel fetches of a chunked download share the session without sharing a cursor. The session is
opened lazily on first use:

- a PAT client resolves its user and role through the SQL statements API on the client's own
  request path (so at its hyphenated REST host, like every other call), then logs in with the
  original host as ``account`` (the Connector derives the real account from it: never
  ``CURRENT_ACCOUNT_NAME()``, which is wrong on locator hosts) and
  ``platform_detection_timeout_seconds=0`` so login skips the cloud-metadata probes;
- a profile client opens an independent session from the same profile.

``snowflake.connector`` is imported only when a session is opened.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ct_core.downloads.artifacts import (
    ArtifactError,
    ArtifactMissing,
    ArtifactUnavailable,
    checked_listing,
    run_uri,
    safe_relative,
)
from ct_core.downloads.sessions import SessionPool
from ct_core.errors import SessionExpired

#: Connector error numbers of an expired session or token (the next attempt opens a new session).
SESSION_EXPIRED_ERRNOS = frozenset({390111, 390112, 390114})
#: Connector error numbers another attempt cannot fix even when raised as an OperationalError:
#: missing privileges, an object that does not exist, a refused storage read, a bad local path.
PERMANENT_ERRNOS = frozenset({2003, 3001, 2043, 253006, 253007, 390189})
#: Skip the Connector's cloud-metadata probes at login (Connector 3.17.2 and later): they only slow
#: a login down.
PAT_PLATFORM_DETECTION_TIMEOUT_S = 0
PAT_AUTHENTICATOR = "PROGRAMMATIC_ACCESS_TOKEN"


def sql_literal(text: str) -> str:
    """A single-quoted SQL string literal (quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


def classify(error: BaseException) -> BaseException:
    """Map a Connector error onto the artifact retry policy (`ct_core.http.retry.artifact_retryable`).

    Returns `ArtifactUnavailable` (retried with backoff) for an expired session or token and for the
    network-level errors (`OperationalError`, `InterfaceError`) the Connector raises when it could not
    reach the service; returns ``error`` itself for everything else (a `ProgrammingError` is a
    statement error: missing privileges, a bad stage path), which then fails at once. The Connector
    is matched by module name so that it is never imported just to classify an error.
    """
    if not type(error).__module__.startswith("snowflake.connector"):
        return error
    errno = getattr(error, "errno", None)
    names = {cls.__name__ for cls in type(error).__mro__}
    if errno in SESSION_EXPIRED_ERRNOS or "ReauthenticationRequest" in names:
        return SessionExpired(f"the artifact session expired: {error}")
    if errno in PERMANENT_ERRNOS or "ProgrammingError" in names:
        return error
    if names & {"OperationalError", "InterfaceError"}:
        return ArtifactUnavailable(f"artifact store unavailable: {error}")
    return error


def pat_connect_kwargs(
    host: str, pat: str, user: str, role: str | None, database: str, schema: str
) -> dict[str, Any]:
    """How a PAT client's artifact session logs in."""
    kwargs: dict[str, Any] = {
        "host": host,
        "account": host,
        "user": user,
        "authenticator": PAT_AUTHENTICATOR,
        "token": pat,
        "database": database,
        "schema": schema,
        "platform_detection_timeout_seconds": PAT_PLATFORM_DETECTION_TIMEOUT_S,
    }
    if role:
        kwargs["role"] = role
    return kwargs


class SnowflakeArtifactStore:
    """LIST/GET of one run's artifacts over a Connector session made by ``connect``."""

    def __init__(
        self,
        connect: Callable[[], Any],
        experiment_run: Mapping[str, Any],
        *,
        pool: SessionPool | None = None,
        location: tuple[str, str] = ("", ""),
    ) -> None:
        self.run_uri = run_uri(experiment_run)
        self._run = str(experiment_run["experiment_run_name"])
        self._connect = connect
        self._pool, self._location = pool, location
        self._connection: Any = None
        # A session from the pool is trusted only once a call on it has worked.
        self._from_pool = False
        self._proven = False
        self._lock = threading.Lock()

    def session(self) -> Any:
        """The Connector connection of this store (a kept one when the pool has it), opened on first use."""
        with self._lock:
            if self._connection is None:
                kept = self._pool.take(self._location) if self._pool is not None else None
                self._from_pool = kept is not None
                self._connection = kept if kept is not None else self._connect()
            return self._connection

    def _replace_unproven(self, failed: Any) -> bool:
        """A kept session failed before anything worked on it: log in afresh, once, with no backoff."""
        with self._lock:
            if not self._from_pool or self._proven or self._connection is not failed:
                return self._connection is not failed  # another thread already replaced it
            self._from_pool = False
            self._connection = None
        with contextlib.suppress(Exception):
            failed.close()
        return True

    def _drop(self, failed: Any) -> None:
        """Forget ``failed`` (an expired session) so the next attempt logs in afresh."""
        with self._lock:
            if self._connection is not failed:
                return
            self._connection = None
        with contextlib.suppress(Exception):
            failed.close()

    def _run_sql(self, statement: str) -> list[Any]:
        session = self.session()
        try:
            try:
                rows = self._execute(session, statement)
            except Exception:
                if not self._replace_unproven(session):
                    raise
                session = self.session()
                rows = self._execute(session, statement)
        except Exception as error:
            mapped = classify(error)
            if mapped is error:
                raise
            if isinstance(mapped, SessionExpired):
                self._drop(session)
            raise mapped from error
        self._proven = True
        return rows

    @staticmethod
    def _execute(session: Any, statement: str) -> list[Any]:
        cursor = session.cursor()
        try:
            return list(cursor.execute(statement).fetchall())
        finally:
            cursor.close()

    def list(self, root: str) -> list[Any]:
        folder = root.strip("/") + "/"
        if not safe_relative(folder.rstrip("/")):
            raise ArtifactError(f"unsafe experiment artifact path: {root!r}")
        rows = self._run_sql(f"LIST {sql_literal(self.run_uri + folder)}")
        # LIST rows are (name, size, md5, last_modified).
        shaped = [
            (
                str(row[0]) if row else "",
                int(row[1] or 0) if len(row) > 1 else 0,
                row[2] if len(row) > 2 else None,
            )
            for row in rows
        ]
        return checked_listing(shaped, self._run, root)

    def get(self, path: str, directory: Path, *, timeout: float | None = None) -> Path:
        if not safe_relative(path):
            raise ArtifactError(f"unsafe experiment artifact path: {path!r}")
        target_uri = directory.resolve().as_uri() + "/"
        self._run_sql(f"GET {sql_literal(self.run_uri + path)} {sql_literal(target_uri)}")
        downloaded = directory / path.rsplit("/", 1)[-1]
        if not downloaded.is_file():
            # GET of a path that is gone answers no rows rather than an error (removed after LIST).
            raise ArtifactMissing(f"Snowflake GET did not create expected artifact {path}")
        return downloaded

    def close(self, *, keep: bool = False) -> None:
        """End the download's use of the session: hand it back to the pool when ``keep``, else close."""
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is None:
            return
        if keep and self._pool is not None:
            self._pool.give_back(self._location, connection)
        else:
            with contextlib.suppress(Exception):
                connection.close()


def connector_for(client: Any) -> Callable[[], Any]:
    """How ``client`` opens an artifact session: PAT login or an independent profile session."""
    credential = client.credential
    if credential.kind == "profile":
        from ct_core.connect.snowflake import open_profile_session

        profile = credential.profile
        return lambda: open_profile_session(profile)
    host, pat = credential.host, credential.token
    if credential.kind != "pat" or not host or not pat:
        raise ArtifactError("artifact downloads need a PAT or connection-profile client")

    def connect() -> Any:
        import snowflake.connector

        from ct_core.connect.snowflake import ClientStatements, current_identity

        # The identity statement takes the client's own request path, so it reaches the same REST
        # host (the hyphen form) as every other call; the Connector's login keeps the host as given.
        statements = ClientStatements(client)
        user, role = current_identity(statements, database=client.database, schema=client.schema)
        return snowflake.connector.connect(
            **pat_connect_kwargs(host, pat, user, role, client.database, client.schema)
        )

    return connect
