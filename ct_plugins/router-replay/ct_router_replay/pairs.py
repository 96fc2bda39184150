"""`ReplayPairs`: the bootstrap helper of router replay, over the SDK's low-level methods.

Bootstrap pairs a sampling sub-job (where routing is captured) with the training sub-job that
replays it, and answers with a sampling zone id for that one pair. The SDK's
`bootstrap_router_replay` sends exactly what it is given: it does not pick the sub-job that
receives the operation, does not poll, and remembers nothing; `forward` and `forward_backward`
send the caller's frame unchanged. This helper is the layer above that the contract leaves to
callers:

- the operation goes to the target training sub-job unless the caller routes it otherwise (the
  service does not infer the receiver for a job with both kinds of sub-job);
- an answer that is a request id is polled until the pairing is known;
- each (job, source, target) mapping is remembered, so a pair is bootstrapped once, and a zone id
  is never reused for another pair;
- replay frames get the pair's descriptor in their operation metadata, with `identity_version: 1`,
  which `rr1:` sample ids require (only legacy ids may leave it out).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: The exact-replay identity protocol version that `rr1:` sample ids belong to.
IDENTITY_VERSION = 1
#: Sample ids of that protocol start with this; legacy ids do not.
RR1_PREFIX = "rr1:"
#: The per-row replay input holding sample ids; it stays in the batch (kwargs or context).
SAMPLE_IDS_KEY = "rr_sample_ids"
#: The response options of a forward-backward frame (a DSSST1 result, delivered in chunks).
RESPONSE_OPTIONS: Mapping[str, str] = {"format": "dssst1", "delivery": "chunked"}

PairKey = tuple[str, str, str]


def sdk_method(client: Any, name: str) -> Callable[..., Any]:
    """``client.<name>``, or a RuntimeError saying this SDK is too old to have it."""
    method = getattr(client, name, None)
    if not callable(method):
        raise RuntimeError(
            f"this ct SDK has no {type(client).__name__}.{name}(); router replay operations need a ct "
            "release with the training data plane (upgrade ct)"
        )
    return method


def sample_ids(batch: Any) -> list[str]:
    """Every id under an ``rr_sample_ids`` key of a batch (top level, kwargs or context)."""
    found: list[str] = []
    if isinstance(batch, Mapping):
        for key, value in batch.items():
            if key == SAMPLE_IDS_KEY:
                found.extend(_strings(value))
            elif isinstance(value, Mapping):
                found.extend(sample_ids(value))
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def _check_version(identity_version: int | None) -> None:
    if identity_version is not None and (
        isinstance(identity_version, bool) or identity_version != IDENTITY_VERSION
    ):
        raise ValueError(
            f"identity_version must be {IDENTITY_VERSION} (or None for legacy replay ids), "
            f"got {identity_version!r}"
        )


class ReplayPairs:
    """Bootstrapped router-replay pairs of one client: bootstrap once, then build replay frames."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._results: dict[PairKey, dict[str, Any]] = {}

    def bootstrap(
        self,
        job_id: str,
        source_sub_job_id: str,
        target_sub_job_id: str,
        *,
        refresh: bool = False,
        poll: bool = True,
        on_wait: Callable[[str], None] | None = None,
        max_cache_bytes: int | None = None,
        # Routing hints; without them the operation goes to the target sub-job.
        sub_job_type: str | None = None,
        sub_job_id: str | None = None,
    ) -> dict[str, Any]:
        """The completed bootstrap result of the pair (its ``sampling_job_id`` is the zone id).

        A pair bootstrapped before is answered from memory, unless ``refresh`` or a different
        ``max_cache_bytes`` asks for a new bootstrap. Without routing hints the operation goes to
        ``target_sub_job_id``. An answer that is a request is polled (``on_wait`` hears its id
        first); with ``poll=False`` it is returned as is and nothing is remembered.
        """
        key = (job_id, source_sub_job_id, target_sub_job_id)
        known = self._results.get(key)
        same_cap = known is not None and max_cache_bytes in (None, known.get("max_cache_bytes"))
        if known is not None and same_cap and not refresh:
            return dict(known)
        if sub_job_id is None and sub_job_type is None:
            sub_job_id = target_sub_job_id
        result = sdk_method(self._client, "bootstrap_router_replay")(
            job_id,
            source_sub_job_id,
            target_sub_job_id,
            max_cache_bytes=max_cache_bytes,
            sub_job_id=sub_job_id,
            sub_job_type=sub_job_type,
        )
        request_id = result.get("request_id") if isinstance(result, dict) else None
        if request_id and "sampling_job_id" not in result:
            if not poll:
                return dict(result)
            if on_wait is not None:
                on_wait(str(request_id))
            result = sdk_method(self._client, "poll_request")(job_id, request_id)
        zone = result.get("sampling_job_id") if isinstance(result, dict) else None
        if not isinstance(zone, str) or not zone:
            raise RuntimeError(
                f"bootstrap-router-replay of {source_sub_job_id} -> {target_sub_job_id} answered without "
                f"a sampling_job_id: {result!r}"
            )
        self._results[key] = dict(result)
        return dict(result)

    def sampling_job_id(self, job_id: str, source_sub_job_id: str, target_sub_job_id: str) -> str:
        """The zone id of a bootstrapped pair; LookupError for a pair this helper has not bootstrapped."""
        result = self._results.get((job_id, source_sub_job_id, target_sub_job_id))
        if result is None:
            raise LookupError(
                f"router replay pair {source_sub_job_id} -> {target_sub_job_id} of job {job_id} is not "
                "bootstrapped here; bootstrap it first (a zone id belongs to one pair only)"
            )
        return str(result["sampling_job_id"])

    def known(self) -> dict[PairKey, str]:
        """Every remembered pair, (job id, source, target) -> zone id."""
        return {key: str(result["sampling_job_id"]) for key, result in self._results.items()}

    def forget(self, job_id: str | None = None) -> None:
        """Drop the pairs of one job (all pairs when None), e.g. after the job ended."""
        for key in [k for k in self._results if job_id is None or k[0] == job_id]:
            del self._results[key]

    def descriptor(
        self,
        job_id: str,
        source_sub_job_id: str,
        target_sub_job_id: str,
        *,
        identity_version: int | None = IDENTITY_VERSION,
    ) -> dict[str, Any]:
        """The pair-level ``router_replay`` descriptor for a frame's operation metadata."""
        _check_version(identity_version)
        descriptor: dict[str, Any] = {
            "sampling_job_id": self.sampling_job_id(job_id, source_sub_job_id, target_sub_job_id)
        }
        if identity_version is not None:
            descriptor["identity_version"] = identity_version
        return descriptor

    def dumps(
        self,
        batch: Any,
        job_id: str,
        source_sub_job_id: str,
        target_sub_job_id: str,
        *,
        identity_version: int | None = IDENTITY_VERSION,
        response_options: Mapping[str, Any] | None = RESPONSE_OPTIONS,
    ) -> bytes:
        """A DSSST1 frame of ``batch`` for forward or forward_backward, replaying the pair's routing.

        The descriptor goes in the operation metadata (never in the batch); per-row inputs such as
        ``rr_sample_ids`` stay in the batch. ``identity_version=None`` is for legacy ids only.
        """
        from ct_core import wire

        descriptor = self.descriptor(
            job_id, source_sub_job_id, target_sub_job_id, identity_version=identity_version
        )
        if identity_version is None and any(s.startswith(RR1_PREFIX) for s in sample_ids(batch)):
            raise ValueError(
                f"rr1: sample ids need identity_version {IDENTITY_VERSION}; only legacy replay ids may "
                "leave it out"
            )
        metadata: dict[str, Any] = {}
        if response_options is not None:
            metadata["response_options"] = dict(response_options)
        metadata["router_replay"] = descriptor
        return wire.dumps(batch, metadata=metadata)
