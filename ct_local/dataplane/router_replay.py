"""Router replay operations of the local server: bootstrap-router-replay and router-replay-discard.

Bootstrap pairs a sampling sub-job (whose MoE routing would be captured) with the training sub-job
that replays it, and answers inline with the pair's sampling zone id (`sampling_job_id`): an id of
its own, never the public sampling sub-job id, stable for one (source, target) pair and different
for another, as callers must not reuse a mapping across pairs. The pairs live in memory, in the
:class:`Pairings` of the server's data plane, for as long as that server runs.

Forward and forward-backward frames name their pair in the ``router_replay`` operation metadata;
:func:`check_replay_descriptor` refuses an unknown pair, a pair of another receiver, and a
descriptor without ``identity_version: 1`` when the batch's ``rr_sample_ids`` hold ``rr1:`` ids.

Router replay is for mixture-of-experts models: every router replay operation (bootstrap, discard,
a frame naming a pair) on a sub-job of a dense model, the built-in tiny one or real weights whose
``config.json`` declares no experts, is refused with a 400 that names the model and why
(:func:`require_experts`). A sampling worker captures no routing even for an MoE model, so discard
checks its request like the service does and answers how many ids it was asked to drop and how
many captures it freed, which is always 0 here.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response

from ct_core import wire
from ct_local.http.errors import RequestValidationError, invalid_request
from ct_local.model import registry as model_registry
from ct_local.storage.store import JobRow

if TYPE_CHECKING:
    from ct_local.dataplane.plane_api import HandlerPlane

#: The only mode this server replays; best_effort bootstraps are refused.
SUPPORTED_MODE = "strict"
#: The prefix of a sampling zone id; what follows is derived from the job and the pair.
ZONE_PREFIX = "rrz-"
_ZONE_DIGEST_CHARS = 16
#: The ``config.json`` keys that count a mixture-of-experts model's routed experts, by architecture
#: family (Qwen-MoE, Mixtral and most others, DeepSeek, a few more); more than one makes it MoE.
EXPERT_COUNT_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")


@dataclass(frozen=True)
class Pairing:
    """One bootstrapped (source sampling, target training) pair of a job."""

    job_id: str
    source_sub_job_id: str
    target_sub_job_id: str
    sampling_job_id: str
    max_cache_bytes: int | None


class Pairings:
    """The pairs bootstrapped on this server, by job id then sampling zone id (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_job: dict[str, dict[str, Pairing]] = {}

    def add(self, pairing: Pairing) -> None:
        with self._lock:
            self._by_job.setdefault(pairing.job_id, {})[pairing.sampling_job_id] = pairing

    def get(self, job_id: str, sampling_job_id: str) -> Pairing | None:
        with self._lock:
            return self._by_job.get(job_id, {}).get(sampling_job_id)


def dense_reason(model_name: str) -> str | None:
    """Why ``model_name`` has no experts whose routing could be replayed; None for an MoE model."""
    entry = model_registry.real_entry(model_name)
    if entry is None:
        return "the built-in tiny model has no experts"
    for section in (entry.config, entry.config.get("text_config")):
        if not isinstance(section, Mapping):
            continue
        for key in EXPERT_COUNT_KEYS:
            count = section.get(key)
            if isinstance(count, int) and not isinstance(count, bool) and count > 1:
                return None
    kind = entry.architecture or entry.config.get("model_type") or "its architecture"
    return f"its config ({kind}) declares no experts"


def require_experts(sub_job: dict[str, Any]) -> None:
    """Refuse router replay on a sub-job whose model is dense (400 naming the model and why)."""
    model = str(sub_job.get("model_name"))
    why = dense_reason(model)
    if why is not None:
        raise invalid_request(
            f"router replay needs a mixture-of-experts model, and {model} is dense: {why} "
            f"(sub-job {sub_job.get('sub_job_id')})"
        )


def zone_id(job_id: str, source_sub_job_id: str, target_sub_job_id: str) -> str:
    """The sampling zone id of one pair: deterministic, so a repeated bootstrap answers the same."""
    digest = hashlib.sha256(f"{job_id}\0{source_sub_job_id}\0{target_sub_job_id}".encode()).hexdigest()
    return ZONE_PREFIX + digest[:_ZONE_DIGEST_CHARS]


def _config(sub_job: dict[str, Any]) -> dict[str, Any]:
    key = "training_config" if sub_job.get("job_type") == "training" else "inference_config"
    config = sub_job.get(key)
    return config if isinstance(config, dict) else {}


def _router_replay_block(sub_job: dict[str, Any]) -> dict[str, Any]:
    # The block may sit in the config or at the sub-job's top level (an extra_* pass-through).
    for holder in (_config(sub_job), sub_job):
        block = holder.get("router_replay")
        if isinstance(block, dict):
            return block
    return {}


def _sub_job_of_type(job: JobRow, sub_job_id: Any, job_type: str, field: str) -> dict[str, Any]:
    if not isinstance(sub_job_id, str) or not sub_job_id:
        raise RequestValidationError([(["payload", field], f"{field} is required")])
    for sub in job.sub_jobs:
        if sub.get("sub_job_id") == sub_job_id:
            if sub.get("job_type") != job_type:
                raise invalid_request(
                    f"{field} {sub_job_id} is a {sub.get('job_type')} sub-job, not {job_type}"
                )
            return sub
    raise invalid_request(f"{field} {sub_job_id} is not a sub-job of job {job.job_id}")


#: The exact-replay identity protocol version of `rr1:` sample ids.
IDENTITY_VERSION = 1
#: The prefix of sample ids under that protocol; legacy ids have none and may omit the version.
RR1_PREFIX = "rr1:"
#: The per-row replay input that carries sample ids (in the batch, not in operation metadata).
SAMPLE_IDS_KEY = "rr_sample_ids"


def _sample_ids(node: Any, depth: int = 0) -> list[str]:
    """Every sample id under an ``rr_sample_ids`` key of a decoded batch (its kwargs or context)."""
    found: list[str] = []
    if depth > 3:
        return found
    if isinstance(node, dict):
        for key, value in node.items():
            if key == SAMPLE_IDS_KEY:
                found.extend(_strings(value))
            else:
                found.extend(_sample_ids(value, depth + 1))
    elif isinstance(node, list | tuple):
        for item in node:
            found.extend(_sample_ids(item, depth + 1))
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def _has_rr1_ids(frame: bytes) -> bool:
    try:
        # numpy views over the frame: reading the structure copies no tensor.
        batch = wire.loads(frame, backend="numpy")
    except wire.WireError:
        return False  # the worker reports a frame it cannot read, with the request
    return any(sample.startswith(RR1_PREFIX) for sample in _sample_ids(batch))


def check_replay_descriptor(pairings: Pairings, job: JobRow, receiver: dict[str, Any], frame: bytes) -> None:
    """Check the `router_replay` descriptor (operation metadata) of a forward or forward-backward frame.

    It must name a pair bootstrapped on this job (one of ``pairings``) whose target is the receiving
    training sub-job, with identity_version 1 when given; a batch whose ``rr_sample_ids`` hold any
    ``rr1:`` id must give it, as only legacy ids may leave the version out. Frames without a
    descriptor are not replays and pass.
    """
    descriptor = wire.read_metadata(frame).get("router_replay")
    if descriptor is None:
        return
    require_experts(receiver)
    if not isinstance(descriptor, dict):
        raise invalid_request("router_replay operation metadata must be an object")
    zone = descriptor.get("sampling_job_id")
    if not isinstance(zone, str) or not zone:
        raise invalid_request(
            "router_replay.sampling_job_id is required: use the sampling_job_id that "
            "bootstrap-router-replay returned for this source/target pair"
        )
    version = descriptor.get("identity_version")
    if version is not None and (isinstance(version, bool) or version != IDENTITY_VERSION):
        raise invalid_request(
            f"router_replay.identity_version must be {IDENTITY_VERSION} (or omitted for legacy replay ids), "
            f"got {version!r}"
        )
    if version is None and _has_rr1_ids(frame):
        raise invalid_request(
            f"router_replay.identity_version must be {IDENTITY_VERSION} for rr1: sample ids "
            f"(found in {SAMPLE_IDS_KEY}); only legacy replay ids may omit it"
        )
    pairing = pairings.get(job.job_id, zone)
    if pairing is None:
        raise invalid_request(
            f"router_replay.sampling_job_id {zone!r} is not a pair bootstrapped on job {job.job_id}; run "
            "bootstrap-router-replay for the source/target pair and send the sampling_job_id it returns "
            "(not the public sampling sub-job id)"
        )
    if pairing.target_sub_job_id != receiver.get("sub_job_id"):
        raise invalid_request(
            f"router_replay pair {zone!r} replays into {pairing.target_sub_job_id}, not into "
            f"{receiver.get('sub_job_id')}"
        )


def bootstrap(
    plane: HandlerPlane, job: JobRow, sub_job_id: Any, sub_job_type: Any, payload: dict[str, Any]
) -> Response:
    """Answered inline: validate the pair, remember it on the data plane, return its sampling zone id."""
    plane.require_running(job)
    source = _sub_job_of_type(job, payload.get("source_sub_job_id"), "sampling", "source_sub_job_id")
    target = _sub_job_of_type(job, payload.get("target_sub_job_id"), "training", "target_sub_job_id")
    receiver = plane.route_sub_job(job, sub_job_id, sub_job_type, default_type="training")
    require_experts(source)
    require_experts(target)
    if receiver.get("sub_job_id") != target["sub_job_id"]:
        raise invalid_request(
            f"bootstrap-router-replay is received by its target training sub-job {target['sub_job_id']}, "
            f"not by {receiver.get('sub_job_id')}; route the operation with sub_job_id={target['sub_job_id']}"
        )
    cap = payload.get("max_cache_bytes")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap <= 0):
        raise RequestValidationError(
            [(["payload", "max_cache_bytes"], "max_cache_bytes must be a positive integer")]
        )
    block = _router_replay_block(target)
    mode = block.get("mode", SUPPORTED_MODE)
    if mode != SUPPORTED_MODE:
        raise invalid_request(
            f"router replay bootstrap rejected: mode {mode!r} of {target['sub_job_id']} is not supported by "
            f"this server (only {SUPPORTED_MODE!r})"
        )
    if cap is None and isinstance(block.get("max_cache_bytes"), int):
        cap = block["max_cache_bytes"]
    pairing = Pairing(
        job_id=job.job_id,
        source_sub_job_id=str(source["sub_job_id"]),
        target_sub_job_id=str(target["sub_job_id"]),
        sampling_job_id=zone_id(job.job_id, str(source["sub_job_id"]), str(target["sub_job_id"])),
        max_cache_bytes=cap,
    )
    plane.pairings.add(pairing)
    return JSONResponse(
        {
            "job_id": job.job_id,
            "sub_job_id": pairing.target_sub_job_id,
            "source_sub_job_id": pairing.source_sub_job_id,
            "target_sub_job_id": pairing.target_sub_job_id,
            "sampling_job_id": pairing.sampling_job_id,
            "max_cache_bytes": pairing.max_cache_bytes,
        }
    )


def discard(
    plane: HandlerPlane, job: JobRow, sub_job_id: Any, sub_job_type: Any, payload: dict[str, Any]
) -> Response:
    """Answered inline on a sampling sub-job (the default receiver without hints)."""
    plane.require_running(job)
    if sub_job_id is None and sub_job_type is None:
        sub_job_type = "sampling"
    receiver = plane.route_sub_job(job, sub_job_id, sub_job_type, default_type="sampling")
    if receiver.get("job_type") != "sampling":
        raise invalid_request(
            f"router-replay-discard runs on a sampling sub-job, not on {receiver.get('sub_job_id')}"
        )
    require_experts(receiver)
    sample_ids = payload.get("sample_ids", [])
    if not isinstance(sample_ids, list) or not all(isinstance(s, str) and s for s in sample_ids):
        raise RequestValidationError(
            [(["payload", "sample_ids"], "sample_ids must be a list of non-empty strings")]
        )
    return JSONResponse(
        {
            "job_id": job.job_id,
            "sub_job_id": receiver.get("sub_job_id"),
            "requested": len(dict.fromkeys(sample_ids)),
            # The local sampler captures no routing, so nothing is held to free.
            "discarded": 0,
        }
    )
