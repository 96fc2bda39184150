"""URLs of REST operations, from the route table generated out of openapi/ (`ct_api.routes`).

An operation is named by its operationId (`step`, `getJob`, ...). `Routes` fills its path template:
the bound defaults (database, schema, endpoint) first, then the call's own parameters, each
percent-encoded as one path segment, and appends the query string. Filled paths are remembered per
(operation, parameters), because a training loop asks for the same few thousands of times.

Nothing else in ct spells a REST path: a new operation is added to openapi/cortex-training.yaml,
`make regen` writes it into the table, and `Transport.request("itsOperationId", ...)` sends it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from ct_api.routes import ROUTES

_PLACEHOLDER = re.compile(r"{(\w+)}")


@functools.lru_cache(maxsize=64)
def _template(operation: str) -> tuple[str, str, tuple[str, ...]]:
    try:
        method, path, _tag = ROUTES[operation]
    except KeyError:
        raise ValueError(
            f"unknown REST operation {operation!r} (not in openapi/cortex-training.yaml)"
        ) from None
    return method, path, tuple(_PLACEHOLDER.findall(path))


def operation_ids() -> list[str]:
    """Every operationId of the spec, sorted."""
    return sorted(ROUTES)


def route_of(operation: str, converters: Mapping[str, str] | None = None) -> tuple[str, str]:
    """`(method, path template)` of `operation`, for a server that binds a handler to it.

    The spec's `{name}` placeholders are Starlette's own; `converters` gives some of them a
    Starlette converter (`{"artifact_path": "path"}` makes `{artifact_path:path}`, which matches a
    value holding `/`). A converter for a name the path lacks is a ValueError.
    """
    method, path, names = _template(operation)
    wanted = dict(converters or {})
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        raise ValueError(f"{operation} has no path parameter(s) {', '.join(unknown)}")

    def placeholder(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"{{{name}:{wanted[name]}}}" if name in wanted else match.group(0)

    return method, _PLACEHOLDER.sub(placeholder, path) if wanted else path


def _query_text(value: Any) -> str:
    # Booleans as JSON spells them; numbers and strings as they print.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def query_string(query: Mapping[str, Any] | None) -> str:
    """`?a=1&b=x` from the items whose value is not None ('' when none are left).

    A list or tuple value repeats its key once per item (`?label_field=a&label_field=b`).
    """
    if not query:
        return ""
    # A plain loop: the generated operations pass every query parameter, mostly None, and a poll
    # should not pay for a comprehension that finds nothing.
    pairs: list[tuple[str, str]] = []
    for key, value in query.items():
        if value is None:
            continue
        for item in value if isinstance(value, list | tuple) else (value,):
            if item is not None:
                pairs.append((key, _query_text(item)))
    return "?" + urlencode(pairs, quote_via=quote) if pairs else ""


class Routes:
    """Path templates of the spec with some path parameters bound (database, schema, endpoint)."""

    def __init__(self, defaults: Mapping[str, Any]) -> None:
        self.defaults = dict(defaults)
        self._filled = functools.lru_cache(maxsize=1024)(self._fill)

    def method(self, operation: str) -> str:
        return _template(operation)[0]

    def _fill(self, operation: str, params: tuple[tuple[str, str], ...]) -> str:
        _method, path, names = _template(operation)
        values = {**self.defaults, **dict(params)}
        missing = [name for name in names if values.get(name) in (None, "")]
        if missing:
            raise ValueError(f"{operation} needs the path parameter(s) {', '.join(missing)}")
        return _PLACEHOLDER.sub(lambda match: quote(str(values[match.group(1)]), safe=""), path)

    def path(self, operation: str, params: Mapping[str, Any] | None = None) -> str:
        """The filled path of `operation` (no query)."""
        items = tuple(sorted((key, str(value)) for key, value in (params or {}).items()))
        return self._filled(operation, items)

    def target(self, operation: str, params: Mapping[str, Any], query: Mapping[str, Any] | None) -> str:
        """Path plus query string: what goes on the request line."""
        return self.path(operation, params) + query_string(query)
