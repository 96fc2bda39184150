"""GPU accounting of the local server: what a job needs, what the account holds, §5.5 answers.

A job's GPUs are the sum of its sub-jobs' ``n_gpus`` (1 when unset). Jobs that are placing,
initializing, running or being cancelled hold their GPUs (``in_use_gpus``); pending jobs claim them
(``pending_gpus``). The lifecycle asks :func:`fits` before it lets a pending job start placing, so a
job larger than the account's ceiling waits until its pending timeout, as on the real service.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ct_local.errors import invalid_request
from ct_local.settings import BREAKDOWN_MAX_DIMENSIONS, HardwareCapacity
from ct_local.store import JobRow

HOLDING_STATUSES = ("placing", "initializing", "running", "cancelling")
PENDING_STATUSES = ("pending",)

# §5.5: a dimension name must match this; others are a 400.
_DIMENSION_RE = re.compile(r"[a-z_]{1,32}")
SUPPORTED_DIMENSIONS = ("job_type", "submitted_by")
# §5.5: the three known job types come first in by_job_type.
_KNOWN_JOB_TYPES = ("TRAINING", "SAMPLING", "LOG_PROBABILITY")
# Stand-in for "no limit" when neither a ceiling nor a schedulable size bounds availability.
_UNBOUNDED_POOL = 1024


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


def _usage(jobs: Iterable[JobRow]) -> tuple[int, int]:
    in_use = pending = 0
    for job in jobs:
        if job.status in HOLDING_STATUSES:
            in_use += job.gpus
        elif job.status in PENDING_STATUSES:
            pending += job.gpus
    return in_use, pending


def fits(job: JobRow, capacity: HardwareCapacity, holding_gpus: int) -> bool:
    """Whether ``job`` could start placing now, given the GPUs already held on its hardware."""
    wanted = holding_gpus + job.gpus
    if capacity.max_total_gpus >= 0 and wanted > capacity.max_total_gpus:
        return False
    return capacity.schedulable_gpus is None or wanted <= capacity.schedulable_gpus


def parse_dimensions(raw: str) -> tuple[list[str], list[str]]:
    """Split a ``breakdown`` parameter into (supported, unsupported) names, enforcing §5.5's rules."""
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
) -> dict[str, Any]:
    """Build the §5.5 response for one hardware type from the jobs on it."""
    in_use, pending = _usage(jobs)
    bounds: list[int] = []
    if capacity.max_total_gpus >= 0:
        bounds.append(capacity.max_total_gpus - in_use - pending)
    if capacity.schedulable_gpus is not None:
        bounds.append(capacity.schedulable_gpus - in_use)
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
        answer["breakdown"] = _breakdown(jobs, dimensions, caller_role, caller_user)
    return answer


def _breakdown(
    jobs: list[JobRow], dimensions: tuple[list[str], list[str]], caller_role: str | None, caller_user: str
) -> dict[str, Any]:
    supported, unsupported = dimensions
    active = [j for j in jobs if j.status in HOLDING_STATUSES or j.status in PENDING_STATUSES]
    breakdown: dict[str, Any] = {"unsupported_dimensions": unsupported}
    if supported:
        breakdown["job_count"] = len(active)
        breakdown["truncated"] = False
    if "job_type" in supported:
        breakdown["by_job_type"] = {"status": "OK", "groups": _by_job_type(active)}
    if "submitted_by" in supported:
        breakdown["by_submitted_by"] = {
            "status": "OK",
            "groups": _by_submitted_by(active, caller_role, caller_user),
        }
    return breakdown


def _split(job: JobRow, gpus: int) -> tuple[int, int]:
    return (gpus, 0) if job.status in HOLDING_STATUSES else (0, gpus)


def _by_job_type(jobs: list[JobRow]) -> list[dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {
        name: {"job_type": name, "in_use_gpus": 0, "pending_gpus": 0, "sub_job_count": 0}
        for name in _KNOWN_JOB_TYPES
    }
    for job in jobs:
        for sub in job.sub_jobs:
            name = str(sub.get("job_type", "")).upper() or "UNSPECIFIED"
            group = groups.setdefault(
                name, {"job_type": name, "in_use_gpus": 0, "pending_gpus": 0, "sub_job_count": 0}
            )
            in_use, pending = _split(job, sub_job_gpus(sub))
            group["in_use_gpus"] += in_use
            group["pending_gpus"] += pending
            group["sub_job_count"] += 1
    return list(groups.values())


def _by_submitted_by(jobs: list[JobRow], caller_role: str | None, caller_user: str) -> list[dict[str, Any]]:
    users: dict[str, dict[str, Any]] = {}
    other: dict[str, Any] = {"kind": "OTHER", "in_use_gpus": 0, "pending_gpus": 0, "job_count": 0}
    unattributed: dict[str, Any] = {
        "kind": "UNATTRIBUTED",
        "in_use_gpus": 0,
        "pending_gpus": 0,
        "job_count": 0,
    }
    for job in jobs:
        in_use, pending = _split(job, job.gpus)
        if caller_role is not None and job.owner_role != caller_role:
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
