"""A minimal stand-in for `snowflake.snowpark`, found first on sys.path by tests (no network).

It follows the real package where ct touches it: ``Session.builder`` gives a fresh builder whose
``configs(options)`` merges connection options and returns the builder, and whose ``create()``
wraps an existing Connector connection passed as ``options["connection"]`` in a ``Session``.
A Session keeps that connection (``.connection``) and closes it on ``close()``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Session"]


class _Builder:
    def __init__(self) -> None:
        self._options: dict[str, Any] = {}

    def configs(self, options: dict[str, Any]) -> _Builder:
        self._options = {**self._options, **options}
        return self

    def create(self) -> Session:
        if "connection" not in self._options:
            raise NotImplementedError("the stand-in only wraps an existing Connector connection")
        return Session(self._options["connection"])


class _BuilderDescriptor:
    def __get__(self, instance: object, owner: type) -> _Builder:
        return _Builder()


class Session:
    builder = _BuilderDescriptor()

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    def close(self) -> None:
        self.connection.close()
