"""GPU accounting of the local server: what a job needs, what the account holds, capacity answers.

A job's GPUs are the sum of its sub-jobs' ``n_gpus`` (1 when unset). Jobs that are placing,
initializing or running are reported as ``in_use_gpus`` and pending jobs as ``pending_gpus``, as the service
defines them. A job being cancelled is in neither number (nor in a breakdown), but its GPUs are not
free yet: the lifecycle asks :func:`fits` (which counts it) before it lets a pending job start
placing, and ``available_gpus`` leaves its GPUs out too. A job larger than the account's ceiling
waits until its pending timeout, as on the real service.

The breakdown follows the account switches of :class:`ServerSettings`: disabled for the account
(every dimension DISABLED), unavailable per dimension (UNAVAILABLE), and an attribution limit past
which jobs are no longer attributed one by one (``truncated``; they count as UNATTRIBUTED and
their sub-jobs as UNKNOWN).

When the server runs real models on a CUDA device (``--device cuda``), the answer also names that
device (:func:`device_description`: its name and memory as torch reports them); on the CPU it is
the accounting alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ct_local.http.errors import invalid_request
from ct_local.settings import BREAKDOWN_MAX_DIMENSIONS, HardwareCapacity, ServerSettings
from ct_local.storage.store import JobRow

# Statuses whose jobs still occupy GPUs on the cluster (what placement must respect).
HOLDING_STATUSES = ("placing", "initializing", "running", "cancelling")
# in_use_gpus counts only these; a cancelling job is on its way out and is not reported.
IN_USE_STATUSES = ("placing", "initializing", "running")
PENDING_STATUSES = ("pending",)

# A breakdown dimension name must match this; others are a 400.
_DIMENSION_RE = re.compile(r"[a-z_]{1,32}")
SUPPORTED_DIMENSIONS = ("job_type", "submitted_by")
# The three known job types come first in by_job_type.
_KNOWN_JOB_TYPES = ("TRAINING", "SAMPLING", "LOG_PROBABILITY")
# Spellings of the log-probability type a stored sub-job may carry (the raw API accepts log_prob).
_LOG_PROB_SPELLINGS = ("log_probability", "log_prob")
# by_job_type group names for a sub-job without a type, and for one the service cannot name.
UNSPECIFIED = "UNSPECIFIED"
UNKNOWN = "UNKNOWN"
# A job type the breakdown repeats as a group name (upper-cased); anything else reads UNKNOWN.
_JOB_TYPE_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
# Breakdown dimension statuses.
STATUS_OK = "OK"
STATUS_DISABLED = "DISABLED"
STATUS_UNAVAILABLE = "UNAVAILABLE"
# Stand-in for "no limit" when neither a ceiling nor a schedulable size bounds availability.
_UNBOUNDED_POOL = 1024


def device_description(device: str) -> dict[str, Any] | None:
    """The capacity answer's ``device`` entry for the device real models run on, or None.

    A CUDA device (``cuda`` or ``cuda:N``) is described from torch: which one, its name, its total
    memory in bytes, and how many CUDA devices this process sees. The CPU and MPS are not GPUs the
    accounting counts, so they add nothing. torch is imported only for a CUDA device.
    """
    if not device.startswith("cuda"):
        return None
    import torch

    index = torch.device(device).index
    index = torch.cuda.current_device() if index is None else index
    properties = torch.cuda.get_device_properties(index)
    return {
        "device": f"cuda:{index}",
        "name": properties.name,
        "memory_bytes": int(properties.total_memory),
        "count": torch.cuda.device_count(),
    }


def sub_job_gpus(sub_job: dict[str, Any]) -> int:
    """GPUs one sub-job holds: its n_gpus, or 0 for log-probability and multiplexed sub-jobs."""
    job_type = str(sub_job.get("job_type", "")).lower()
    config = sub_job.get("training_config") if job_type == "training" else sub_job.get("inference_config")
    if not isinstance(config, dict):
        config = {}
    if job_type in {"log_probability", "log_prob"} or config.get("multiplex_job_id"):
        return 0
    n_gpus = config.get("n_gpus", 1)
    return int(n_gpus) if isinstance(n_gpus, int | float) and not isinstance(n_gpus, bool) else 1


def job_gpus(sub_jobs: Iterable[dict[str, Any]]) -> int:
    return sum(sub_job_gpus(s) for s in sub_jobs)


def _usage(jobs: Iterable[JobRow]) -> tuple[int, int, int]:
    """(in_use, pending, held): held adds the GPUs of cancelling jobs, which are not free yet."""
    in_use = pending = held = 0
    for job in jobs:
        if job.status in IN_USE_STATUSES:
            in_use += job.gpus
        elif job.status in PENDING_STATUSES:
            pending += job.gpus
        if job.status in HOLDING_STATUSES:
            held += job.gpus
    return in_use, pending, held


def fits(job: JobRow, capacity: HardwareCapacity, holding_gpus: int) -> bool:
    """Whether ``job`` could start placing now, given the GPUs already held on its hardware."""
    wanted = holding_gpus + job.gpus
    if capacity.max_total_gpus >= 0 and wanted > capacity.max_total_gpus:
        return False
    return capacity.schedulable_gpus is None or wanted <= capacity.schedulable_gpus


def parse_dimensions(raw: str) -> tuple[list[str], list[str]]:
    """Split a ``breakdown`` parameter into (supported, unsupported) names, enforcing the service's rules."""
    names: list[str] = []
    for part in raw.split(","):
        name = part.strip().lower()
        if name and name not in names:
            names.append(name)
    if len(names) > BREAKDOWN_MAX_DIMENSIONS:
        raise invalid_request(f"breakdown accepts at most {BREAKDOWN_MAX_DIMENSIONS} dimensions")
    for name in names:
        if not _DIMENSION_RE.fullmatch(name):
            raise invalid_request(f"invalid breakdown dimension {name!r}")
    supported = [n for n in names if n in SUPPORTED_DIMENSIONS]
    unsupported = [n for n in names if n not in SUPPORTED_DIMENSIONS]
    return supported, unsupported


def capacity_answer(
    jobs: list[JobRow],
    capacity: HardwareCapacity,
    *,
    dimensions: tuple[list[str], list[str]] | None,
    caller_role: str | None,
    caller_user: str,
    settings: ServerSettings | None = None,
) -> dict[str, Any]:
    """Build the capacity answer for one hardware type from the jobs on it.

    ``settings`` carries the account's breakdown switches; without it the breakdown is enabled,
    every supported dimension is available and no attribution limit applies.
    """
    in_use, pending, held = _usage(jobs)
    bounds: list[int] = []
    if capacity.max_total_gpus >= 0:
        bounds.append(capacity.max_total_gpus - held - pending)
    if capacity.schedulable_gpus is not None:
        bounds.append(capacity.schedulable_gpus - held)
    available = max(0, min(bounds)) if bounds else _UNBOUNDED_POOL
    answer: dict[str, Any] = {
        "has_reservation": capacity.has_reservation,
        "max_total_gpus": capacity.max_total_gpus,
        "reserved_gpus": capacity.max_total_gpus if capacity.has_reservation else 0,
        "in_use_gpus": in_use,
        "pending_gpus": pending,
        "available_gpus": available,
    }
    if dimensions is not None:
        answer["breakdown"] = _breakdown(jobs, dimensions, caller_role, caller_user, settings)
    return answer


def _dimension_status(name: str, settings: ServerSettings | None) -> str:
    if settings is None:
        return STATUS_OK
    if not settings.breakdown_enabled:
        return STATUS_DISABLED
    if name in {d.strip().lower() for d in settings.breakdown_unavailable}:
        return STATUS_UNAVAILABLE
    return STATUS_OK


def _breakdown(
    jobs: list[JobRow],
    dimensions: tuple[list[str], list[str]],
    caller_role: str | None,
    caller_user: str,
    settings: ServerSettings | None,
) -> dict[str, Any]:
    supported, unsupported = dimensions
    active = sorted(
        (j for j in jobs if j.status in IN_USE_STATUSES or j.status in PENDING_STATUSES),
        key=lambda j: (j.created_at, j.seq, j.job_id),
    )
    # The oldest jobs are attributed one by one; any past the limit count without a submitter or type.
    limit = None if settings is None else settings.breakdown_attribution_limit
    cut = len(active) if limit is None else max(0, min(limit, len(active)))
    attributed, beyond = active[:cut], active[cut:]
    statuses = {name: _dimension_status(name, settings) for name in supported}
    breakdown: dict[str, Any] = {"unsupported_dimensions": unsupported}
    # job_count and truncated appear only when at least one dimension is OK.
    if STATUS_OK in statuses.values():
        breakdown["job_count"] = len(active)
        breakdown["truncated"] = bool(beyond)
    for name in supported:
        status = statuses[name]
        groups: list[dict[str, Any]] = []
        if status == STATUS_OK and name == "job_type":
            groups = _by_job_type(attributed, beyond)
        elif status == STATUS_OK and name == "submitted_by":
            groups = _by_submitted_by(attributed, beyond, caller_role, caller_user)
        breakdown[f"by_{name}"] = {"status": status, "groups": groups}
    return breakdown


def _split(job: JobRow, gpus: int) -> tuple[int, int]:
    return (gpus, 0) if job.status in IN_USE_STATUSES else (0, gpus)


def job_type_group(value: Any) -> str:
    """The by_job_type group a sub-job's stored ``job_type`` falls in (the service's group names)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return UNSPECIFIED
    if not isinstance(value, str):
        return UNKNOWN
    text = value.strip().lower().removeprefix("job_type_")
    if text in _LOG_PROB_SPELLINGS:
        return "LOG_PROBABILITY"
    if not text:
        return UNSPECIFIED
    return text.upper() if _JOB_TYPE_NAME_RE.fullmatch(text) else UNKNOWN


def _type_group(name: str) -> dict[str, Any]:
    return {"job_type": name, "in_use_gpus": 0, "pending_gpus": 0, "sub_job_count": 0}


def _by_job_type(attributed: list[JobRow], beyond: list[JobRow]) -> list[dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {name: _type_group(name) for name in _KNOWN_JOB_TYPES}

    def add(name: str, job: JobRow, gpus: int) -> None:
        group = groups.setdefault(name, _type_group(name))
        in_use, pending = _split(job, gpus)
        group["in_use_gpus"] += in_use
        group["pending_gpus"] += pending
        group["sub_job_count"] += 1

    for job in attributed:
        for sub in job.sub_jobs:
            add(job_type_group(sub.get("job_type")), job, sub_job_gpus(sub))
    # Past the attribution limit the type is not looked at: the sub-jobs still add up, as UNKNOWN.
    for job in beyond:
        for sub in job.sub_jobs:
            add(UNKNOWN, job, sub_job_gpus(sub))
    return list(groups.values())


def _by_submitted_by(
    attributed: list[JobRow], beyond: list[JobRow], caller_role: str | None, caller_user: str
) -> list[dict[str, Any]]:
    users: dict[str, dict[str, Any]] = {}
    other: dict[str, Any] = {"kind": "OTHER", "in_use_gpus": 0, "pending_gpus": 0, "job_count": 0}
    unattributed: dict[str, Any] = {
        "kind": "UNATTRIBUTED",
        "in_use_gpus": 0,
        "pending_gpus": 0,
        "job_count": 0,
    }
    past_limit = {job.job_id for job in beyond}
    for job in [*attributed, *beyond]:
        in_use, pending = _split(job, job.gpus)
        if job.job_id in past_limit:
            group = unattributed
        elif caller_role is not None and job.owner_role != caller_role:
            group = other
        elif not job.submitted_by:
            group = unattributed
        else:
            group = users.setdefault(
                job.submitted_by,
                {
                    "kind": "USER",
                    "submitted_by": job.submitted_by,
                    "is_caller": job.submitted_by == caller_user,
                    "in_use_gpus": 0,
                    "pending_gpus": 0,
                    "job_count": 0,
                },
            )
        group["in_use_gpus"] += in_use
        group["pending_gpus"] += pending
        group["job_count"] += 1
    ordered = sorted(
        users.values(), key=lambda g: (-(g["in_use_gpus"] + g["pending_gpus"]), g["submitted_by"])
    )
    return [*ordered, other, unattributed]
