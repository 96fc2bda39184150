"""The Connector's error classes, with the attributes and message format ct relies on."""

from __future__ import annotations

from typing import Any


class Error(Exception):
    """Like snowflake.connector.errors.Error: `errno`, `sqlstate`, `msg` as `NNNNNN (STATE): text`."""

    def __init__(self, msg: str = "", errno: int = -1, sqlstate: str | None = None, **kwargs: Any) -> None:
        self.errno = errno
        self.sqlstate = sqlstate
        self.raw_msg = msg
        code = f"{errno:06d}" if errno >= 0 else "------"
        state = f" ({sqlstate})" if sqlstate else ""
        self.msg = f"{code}{state}: {msg}" if msg else ""
        super().__init__(self.msg)

    def __str__(self) -> str:
        return self.msg


class DatabaseError(Error):
    pass


class OperationalError(DatabaseError):
    pass
