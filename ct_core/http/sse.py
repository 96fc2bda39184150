"""Server-sent events from a streamed answer, parsed by httpx-sse (imported with the first stream).

`Transport.stream(...).iter_sse()` lands here: the body blocks `ct_core.http.pool` is already
reading are wrapped as the byte stream of an `httpx.Response`, which is what httpx-sse reads.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import httpx_sse

from ct_core.http.direct import Headers


class _BlockStream(httpx.SyncByteStream):
    """Body blocks already being read, as the byte stream an `httpx.Response` wraps."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks = blocks

    def __iter__(self) -> Iterator[bytes]:
        return self._blocks


def iter_sse(status: int, headers: Headers, blocks: Iterator[bytes]) -> Iterator[httpx_sse.ServerSentEvent]:
    """The events of an answer (`.event`, `.data`, `.id`), as they arrive."""
    answer = httpx.Response(status, headers=headers, stream=_BlockStream(blocks))
    return httpx_sse.EventSource(answer).iter_sse()
