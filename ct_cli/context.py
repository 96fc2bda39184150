"""What one `ct` invocation knows before its command runs: the global options and the client.

The global options (given before the command) are kept as plain values; the SDK client is
built from them only when a command first asks for it, so commands that need no connection
(`submit --dry-run`, `login`, `plugins`, `--help`) never import the transport or read any
credentials. At that point the connection is resolved (`ct_core.connect.resolve`: flags over the
config file, the remembered login and the environment) and the client factory receives the options
with every connection field filled in, as the reference CLI handed its factory the resolved arguments.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from ct_core.client import CortexTrainingClient
    from ct_core.connect.resolve import ConnectionOptions, ResolvedConnection


@dataclass
class GlobalOptions:
    """The options placed before the command; None means "not given on the command line".

    After `resolve()`, the connection fields hold what the connection resolved to and `resolved` the
    whole outcome (mode, source); that is what a client factory receives.
    """

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
    resolved: ResolvedConnection | None = None

    def __repr__(self) -> str:
        # Never show a token in a repr that might end up in a traceback or a log.
        pat = "<redacted>" if self.pat else None
        return (
            f"GlobalOptions(config={self.config!r}, connection={self.connection!r}, "
            f"base_url={self.base_url!r}, host={self.host!r}, pat={pat!r}, "
            f"database={self.database!r}, schema={self.schema!r}, endpoint={self.endpoint!r}, "
            f"no_verify_ssl={self.no_verify_ssl!r}, poll_interval={self.poll_interval!r}, "
            f"poll_timeout={self.poll_timeout!r}, compact={self.compact!r}, job={self.job!r}, "
            f"resolved={self.resolved!r})"
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

    def resolve(self) -> GlobalOptions:
        """A copy with the connection resolved: every connection field filled, `resolved` set.

        Raises `ConfigError` (`IncompleteConnectionError` when there is no whole connection).
        """
        from ct_core.connect.resolve import resolve_connection

        resolved = resolve_connection(self.connection_options())
        return dataclasses.replace(
            self,
            config=resolved.config_path,
            connection=resolved.profile,
            base_url=resolved.base_url,
            # A profile's host is where its Connector signs in, not a host for PAT auth.
            host=resolved.host if resolved.mode == "pat" else None,
            pat=resolved.pat,
            database=resolved.database,
            schema=resolved.schema,
            endpoint=resolved.endpoint,
            no_verify_ssl=not resolved.verify_ssl,
            poll_interval=resolved.poll_interval,
            poll_timeout=resolved.poll_timeout,
            resolved=resolved,
        )


#: Builds a client from the (resolved) global options; tests inject their own through
#: `main(client_factory=...)`.
ClientFactory = Callable[[GlobalOptions], Any]


def default_client_factory(options: GlobalOptions) -> CortexTrainingClient:
    """The SDK client for `options`: from their resolved connection, resolving it first when needed."""
    from ct_core.client import CortexTrainingClient

    if options.resolved is not None:
        return CortexTrainingClient.from_resolved(options.resolved)
    return CortexTrainingClient.from_options(options.connection_options())


@dataclass
class Invocation:
    """State shared by the launcher and the command it runs."""

    options: GlobalOptions = field(default_factory=GlobalOptions)
    client_factory: ClientFactory | None = None
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    _client: Any = None

    def client(self) -> Any:
        """The SDK client, built on first use from the global options, once the connection is resolved.

        Without a usable connection the default factory's resolution error stops the command (exit 2
        when it is missing or incomplete). An injected factory builds a client of its own, so it gets
        the options as given when they resolve to no connection.
        """
        if self._client is None:
            if self.client_factory is None:
                self._client = default_client_factory(self.options.resolve())
            else:
                self._client = self.client_factory(self._factory_options())
        return self._client

    def _factory_options(self) -> GlobalOptions:
        from ct_core.errors import ConfigError

        try:
            return self.options.resolve()
        except ConfigError:
            return self.options

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
