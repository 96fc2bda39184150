"""Kept artifact sessions: reuse a download's Connector session for the next one.

With ``keep_artifact_sessions`` on, a download that succeeded hands its session back here instead of
closing it, and the next download of the same database and schema starts with its first LIST
rather than a login. At most `MAX_KEPT_PER_LOCATION` sessions are kept per location (two downloads
may run at once); one idle for `IDLE_LIMIT_S` or reported closed by the Connector is never handed
out. State lives in one `SessionPool` per client family (a client and its for_job twins).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

#: Kept sessions per database and schema, and how long one may sit unused.
MAX_KEPT_PER_LOCATION = 2
IDLE_LIMIT_S = 30 * 60.0


def _closed(session: Any) -> bool:
    probe = getattr(session, "is_closed", None)
    if not callable(probe):
        return False
    try:
        return bool(probe())
    except Exception:
        return True


def _close_quietly(session: Any) -> None:
    with contextlib.suppress(Exception):
        session.close()


class SessionPool:
    """Sessions kept between downloads, by (database, schema)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.keep = False
        self._clock = clock
        self._kept: dict[tuple[str, str], list[tuple[Any, float]]] = {}
        self._lock = threading.Lock()

    def take(self, location: tuple[str, str]) -> Any | None:
        """A usable kept session for ``location`` (taken out of the pool), or None."""
        stale: list[Any] = []
        found = None
        with self._lock:
            entries = self._kept.get(location, [])
            while entries:
                session, since = entries.pop()
                if self._clock() - since > IDLE_LIMIT_S or _closed(session):
                    stale.append(session)
                    continue
                found = session
                break
        for session in stale:
            _close_quietly(session)
        return found

    def give_back(self, location: tuple[str, str], session: Any) -> None:
        """Keep ``session`` for the next download, or close it when not keeping or already full."""
        with self._lock:
            entries = self._kept.setdefault(location, [])
            if self.keep and not _closed(session) and len(entries) < MAX_KEPT_PER_LOCATION:
                entries.append((session, self._clock()))
                return
        _close_quietly(session)

    def has(self, location: tuple[str, str]) -> bool:
        with self._lock:
            return bool(self._kept.get(location))

    def close_all(self) -> None:
        with self._lock:
            kept = [session for entries in self._kept.values() for session, _ in entries]
            self._kept.clear()
        for session in kept:
            _close_quietly(session)
