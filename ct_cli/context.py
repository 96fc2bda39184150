"""What one `ct` invocation knows before its command runs: the global options and the client.

The global options (given before the command) are kept as plain values; the SDK client is
built from them only when a command first asks for it, so commands that need no connection
(`submit --dry-run`, `login`, `plugins`, `--help`) never import the transport or read any
credentials.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from ct_core.client import CortexTrainingClient
    from ct_core.connect.resolve import ConnectionOptions


@dataclass
class GlobalOptions:
    """The options placed before the command; None means "not given on the command line"."""

    config: str | None = None
    connection: str | None = None
    base_url: str | None = None
    host: str | None = None
    pat: str | None = None
    database: str | None = None
    schema: str | None = None
    endpoint: str | None = None
    no_verify_ssl: bool = False
    poll_interval: float | None = None
    poll_timeout: float | None = None
    compact: bool = False
    job: str | None = None

    def __repr__(self) -> str:
        # Never show a token in a repr that might end up in a traceback or a log.
        pat = "<redacted>" if self.pat else None
        return (
            f"GlobalOptions(config={self.config!r}, connection={self.connection!r}, "
            f"base_url={self.base_url!r}, host={self.host!r}, pat={pat!r}, "
            f"database={self.database!r}, schema={self.schema!r}, endpoint={self.endpoint!r}, "
            f"no_verify_ssl={self.no_verify_ssl!r}, poll_interval={self.poll_interval!r}, "
            f"poll_timeout={self.poll_timeout!r}, compact={self.compact!r}, job={self.job!r})"
        )

    def connection_options(self) -> ConnectionOptions:
        """The SDK's view of these flags; resolution against env, config and login happens there."""
        from ct_core.connect.resolve import ConnectionOptions

        return ConnectionOptions(
            config=self.config,
            connection=self.connection,
            base_url=self.base_url,
            host=self.host,
            pat=self.pat,
            database=self.database,
            schema=self.schema,
            endpoint=self.endpoint,
            verify_ssl=not self.no_verify_ssl,
            poll_interval=self.poll_interval,
            poll_timeout=self.poll_timeout,
        )


#: Builds a client from the global options; tests inject their own through `main(client_factory=...)`.
ClientFactory = Callable[[GlobalOptions], Any]


def default_client_factory(options: GlobalOptions) -> CortexTrainingClient:
    from ct_core.client import CortexTrainingClient

    return CortexTrainingClient.from_options(options.connection_options())


@dataclass
class Invocation:
    """State shared by the launcher and the command it runs."""

    options: GlobalOptions = field(default_factory=GlobalOptions)
    client_factory: ClientFactory | None = None
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    _client: Any = None

    def client(self) -> Any:
        """The SDK client, built on first use from the global options."""
        if self._client is None:
            factory = self.client_factory or default_client_factory
            self._client = factory(self.options)
        return self._client

    def require_job(self, command: str) -> str:
        """The global `--job` value, for commands that act on one job given before the command."""
        if not self.options.job:
            raise ValueError(f"provide --job JOB_ID for {command}")
        return self.options.job

    def close(self) -> None:
        client, self._client = self._client, None
        close = getattr(client, "close", None)
        if callable(close):
            close()


_current = Invocation()


def current() -> Invocation:
    """The invocation whose command is running."""
    return _current


def client() -> Any:
    """Shortcut for `current().client()`: what most commands need first."""
    return _current.client()


@contextmanager
def invocation(inv: Invocation) -> Iterator[Invocation]:
    """Make `inv` current for one run of the command line, and close its client afterwards."""
    global _current
    previous = _current
    _current = inv
    try:
        yield inv
    finally:
        _current = previous
        inv.close()
