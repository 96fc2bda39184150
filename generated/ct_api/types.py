"""What the generated operations need of a transport, as Protocols (ct_core's ``Transport`` is one).

Written by openapi/regen.py; never edited by hand. The operations import this module only under
``TYPE_CHECKING``, so ``ct_api`` imports nothing of ct at run time and no import cycle can form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

T_co = TypeVar("T_co", covariant=True)

#: Decides whether a failed attempt deserves another (a narrower rule than the spec's, by a caller).
Predicate = Callable[[BaseException], bool]
#: (connect, read) seconds.
TimeoutPair = tuple[float, float]
#: A request body that is not JSON: bytes, or an iterable of byte slices (then with its length).
Content = bytes | Iterable[bytes | memoryview]


class Answer(Protocol[T_co]):
    """A finished 2xx answer whose JSON body is a ``T_co``."""

    @property
    def status_code(self) -> int: ...

    def header(self, name: str) -> str | None: ...

    def json(self) -> T_co: ...


class StreamedAnswer(Protocol):
    """A 2xx answer read as it arrives (inside the ``with`` block of a streamed operation)."""

    @property
    def status_code(self) -> int: ...

    def header(self, name: str) -> str | None: ...

    def iter_bytes(self) -> Iterator[bytes]: ...

    def iter_lines(self) -> Iterator[str]: ...

    def iter_sse(self) -> Iterator[Any]: ...


class Transport(Protocol):
    """The request path the operations call: ``ct_core.http.transport.Transport``."""

    def request(
        self,
        operation: str,
        /,
        *,
        params: Mapping[str, Any] | None = ...,
        query: Mapping[str, Any] | None = ...,
        json_body: Any = ...,
        content: Content | Callable[[], Content] | None = ...,
        length: int | None = ...,
        content_type: str | None = ...,
        headers: Mapping[str, str] | None = ...,
        predicate: Predicate | None = ...,
        retry: str = ...,
        job_id: str | None = ...,
        timeout: TimeoutPair | None = ...,
        max_retries: int | None = ...,
        trace: str | None = ...,
    ) -> Answer[Any]: ...

    def stream(
        self,
        operation: str,
        /,
        *,
        params: Mapping[str, Any] | None = ...,
        query: Mapping[str, Any] | None = ...,
        json_body: Any = ...,
        headers: Mapping[str, str] | None = ...,
        timeout: TimeoutPair | None = ...,
    ) -> AbstractContextManager[StreamedAnswer]: ...
