"""Snowflake Connector sessions for profile clients (§2.2, CFG-07, CFG-10).

`snowflake.connector` is imported here only, and only when a profile is actually used, so the CLI
and `import ct_core` never pay for it. A profile client signs each request with the live session
token (`Authorization: Snowflake Token="..."`) and, when the service says explicitly that the token
expired, reconnects once (under a lock, so concurrent threads reconnect once) and replays. When
the Connector refuses a profile's programmatic access token at sign-in, the error says what to check
(CFG-23).
"""

from __future__ import annotations

import os
import threading
from typing import Any

import httpx

from ct_core.constants import SESSION_EXPIRED_CODES
from ct_core.errors import (
    APIError,
    ConfigError,
    error_codes,
    is_pat_rejection,
    pat_rejected_from_connector,
    response_json,
)


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
        # A refused token is the common first-run failure; say what to check (CFG-23).
        if is_pat_rejection(error):
            raise pat_rejected_from_connector(error) from error
        raise


def session_server_url(session: Any) -> str:
    """The REST origin the Connector resolved for this session (must be http or https)."""
    rest = getattr(session, "rest", None) or getattr(session, "_rest", None)
    url = getattr(rest, "server_url", None)
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        raise ConfigError(f"the Snowflake Connector resolved no http(s) server URL for this profile: {url!r}")
    return url.rstrip("/")


def _session_token(session: Any) -> str:
    rest = getattr(session, "rest", None) or getattr(session, "_rest", None)
    token = getattr(rest, "token", None)
    if not token:
        raise ConfigError("the Snowflake session has no token; run `ct login` again")
    return str(token)


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

    def apply(self, request: httpx.Request) -> None:
        request.headers["Authorization"] = f'Snowflake Token="{_session_token(self.session)}"'

    def refresh_after(self, error: APIError) -> bool:
        if not is_session_expired(error):
            return False
        stale = self._session
        with self._lock:
            if self._session is stale:  # another thread may have renewed it already
                try:
                    stale.close()
                except Exception:
                    pass
                self._session = open_profile_session(self.connection, **self._overrides)
        return True

    def close(self) -> None:
        try:
            self._session.close()
        except Exception:
            pass
