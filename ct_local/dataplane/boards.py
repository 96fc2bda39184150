"""In-memory boards that connect the event loop with the worker threads of one local server.

A worker and the HTTP side share nothing but the SQLite store, and three things do not belong
there: :class:`EventBoard` holds streaming-generation events until a poll drains them (reading
them consumes them), :class:`CancelBoard` flags running generations to stop at their next token,
and :class:`WeightBoard` carries the trainer's weights to a sampler: the training worker publishes
a copy, and the sampler adopts the newest one before its next request. Events live in memory
only: a server restart loses undelivered stream events (the request itself is failed as
interrupted).

One :class:`SamplingBoards` belongs to one data plane (ct_local.dataplane.training_plane), which
hands it to every worker it starts, so two servers in one process never see each other's events,
cancels or weights.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from ct_local.http.faults import GenerationHolds

# Streams whose events the board keeps at most (see EventBoard); only finished or empty ones go.
MAX_STREAM_QUEUES = 1024


class EventBoard:
    """Undelivered streaming-generation events per request; a poll takes (and removes) a page.

    Streams nobody reads to the end would pile up in a long-running server, so past ``limit`` queues
    the oldest ones that can go are dropped: a finished stream (its last event is ``done``) and an
    empty queue (``push`` opens it again if that request still runs). A running stream's events stay.
    """

    def __init__(self, limit: int = MAX_STREAM_QUEUES) -> None:
        self._lock = threading.Lock()
        self._limit = limit
        self._queues: OrderedDict[str, deque[dict[str, Any]]] = OrderedDict()

    def open(self, request_id: str) -> None:
        with self._lock:
            self._queues.setdefault(request_id, deque())
            self._trim()

    def push(self, request_id: str, event: dict[str, Any]) -> None:
        with self._lock:
            self._queues.setdefault(request_id, deque()).append(event)
            self._trim()

    def __len__(self) -> int:
        with self._lock:
            return len(self._queues)

    def _trim(self) -> None:
        excess = len(self._queues) - self._limit
        if excess <= 0:
            return
        for request_id in [
            rid for rid, queue in self._queues.items() if not queue or queue[-1].get("type") == "done"
        ][:excess]:
            del self._queues[request_id]

    def drain(self, request_id: str, max_events: int) -> list[dict[str, Any]]:
        with self._lock:
            queue = self._queues.get(request_id)
            if not queue:
                return []
            page = [queue.popleft() for _ in range(min(max_events, len(queue)))]
            if not queue and page and page[-1].get("type") == "done":
                # Everything, the final event included, has been delivered.
                del self._queues[request_id]
            return page


class CancelBoard:
    """Request ids whose running generation should stop at the next token."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: set[str] = set()

    def request(self, request_id: str) -> None:
        with self._lock:
            self._ids.add(request_id)

    def is_cancelled(self, request_id: str) -> bool:
        with self._lock:
            return request_id in self._ids

    def forget(self, request_id: str) -> None:
        with self._lock:
            self._ids.discard(request_id)


@dataclass
class PublishedWeights:
    version: int
    weight_format: str
    tensors: dict[str, Any] = field(repr=False)


class WeightBoard:
    """The newest weights synced to each sampling sub-job (versions count up per target)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: dict[str, PublishedWeights] = {}

    def publish(self, sub_job_id: str, tensors: dict[str, Any], weight_format: str) -> int:
        with self._lock:
            previous = self._latest.get(sub_job_id)
            version = (previous.version if previous else 0) + 1
            self._latest[sub_job_id] = PublishedWeights(version, weight_format, tensors)
            return version

    def latest(self, sub_job_id: str) -> PublishedWeights | None:
        with self._lock:
            return self._latest.get(sub_job_id)

    def forget(self, sub_job_id: str) -> None:
        """Let go of the weights synced to a sub-job whose job ended (they are the model's size)."""
        with self._lock:
            self._latest.pop(sub_job_id, None)

    def describe(self) -> dict[str, Any]:
        """What is held, for /healthz: how many sub-jobs hold synced weights, which, and their bytes."""
        with self._lock:
            held = dict(self._latest)
        size = sum(
            int(tensor.numel() * tensor.element_size())
            for weights in held.values()
            for tensor in weights.tensors.values()
            if hasattr(tensor, "element_size")
        )
        return {"count": len(held), "bytes": size, "sub_jobs": sorted(held)}


@dataclass
class SamplingBoards:
    """The three boards of one server's data plane, and its fault holds (ct_local.http.faults),
    where a generation parks at a decoding step while a test's ``hold`` rule keeps it."""

    events: EventBoard = field(default_factory=EventBoard)
    cancels: CancelBoard = field(default_factory=CancelBoard)
    weights: WeightBoard = field(default_factory=WeightBoard)
    holds: GenerationHolds = field(default_factory=GenerationHolds)
