"""Pure helpers of the control-plane methods: shaping capacity answers (getCapacity), checking
account-list arguments and classifying its refusals (listAccountJobs), and `create_job_body_from_job`.

Nothing here sends a request; `ct_core.client` does, and hands the answers to these functions.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ct_core import errors
from ct_core.constants import (
    ACCOUNT_LIST_MAX_PAGE_SIZE,
    ACCOUNT_LIST_MIN_PAGE_SIZE,
    DEFAULT_IDLE_TIMEOUT_SECONDS,
    DEFAULT_PENDING_TIMEOUT_SECONDS,
)
from ct_core.errors import response_json

logger = logging.getLogger("ct_core.control")
#: The key of source_checkpoint_info that names external weights (a stage path).
EXTERNAL_WEIGHTS_KEY = "external_stage_path"

# --------------------------------------------------------------------------------------------------
# Capacity
# --------------------------------------------------------------------------------------------------

CAPACITY_INT_KEYS = ("max_total_gpus", "reserved_gpus", "in_use_gpus", "pending_gpus", "available_gpus")
KNOWN_JOB_TYPES = ("TRAINING", "SAMPLING", "LOG_PROBABILITY")
DEFAULT_BREAKDOWN_DIMENSIONS = ("job_type", "submitted_by")
_DIMENSION_RE = re.compile(r"^[a-z_]{1,32}$")
_GROUP_COUNT_KEYS = {
    "job_type": ("in_use_gpus", "pending_gpus", "sub_job_count"),
    "submitted_by": ("in_use_gpus", "pending_gpus", "job_count"),
}


def _as_int(value: Any) -> int:
    # Proto3 JSON omits zeros and may send 64-bit integers as strings; null means the default.
    if value is None or isinstance(value, bool):
        return int(bool(value)) if isinstance(value, bool) else 0
    try:
        return int(float(value)) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        return 0


def normalize_capacity(body: Any) -> dict[str, Any]:
    """The six documented capacity keys, defaults filled for anything omitted or null."""
    source = body if isinstance(body, Mapping) else {}
    capacity: dict[str, Any] = {"has_reservation": bool(source.get("has_reservation") or False)}
    for key in CAPACITY_INT_KEYS:
        capacity[key] = _as_int(source.get(key))
    return capacity


def breakdown_dimensions(dimensions: Iterable[str] | str) -> list[str]:
    """Lower-cased, de-duplicated dimension names in order; ValueError for a malformed one."""
    names = dimensions.split(",") if isinstance(dimensions, str) else list(dimensions)
    cleaned: list[str] = []
    for raw in names:
        name = str(raw).strip().lower()
        if not name:
            continue
        if not _DIMENSION_RE.match(name):
            raise ValueError(f"breakdown dimension must match [a-z_]{{1,32}}, got {raw!r}")
        if name not in cleaned:
            cleaned.append(name)
    if not cleaned:
        raise ValueError("get_capacity_breakdown requires at least one dimension")
    return cleaned


def _normalize_group(dimension: str, group: Any) -> dict[str, Any]:
    out = dict(group) if isinstance(group, Mapping) else {}
    for key in _GROUP_COUNT_KEYS.get(dimension, ("in_use_gpus", "pending_gpus")):
        out[key] = _as_int(out.get(key))
    return out


def _normalize_dimension(dimension: str, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        return {"status": "UNAVAILABLE", "groups": []}
    groups_raw = raw.get("groups")
    has_groups = isinstance(groups_raw, list) and len(groups_raw) > 0
    groups = [_normalize_group(dimension, group) for group in groups_raw or []] if has_groups else []
    status = raw.get("status") or ("OK" if has_groups else "UNAVAILABLE")
    if dimension == "job_type" and groups:
        by_type = {str(group.get("job_type", "")).upper(): group for group in groups}
        ordered = []
        for job_type in KNOWN_JOB_TYPES:
            found = by_type.get(job_type)
            if found is None:
                found = _normalize_group(dimension, {"job_type": job_type})
            else:
                found["job_type"] = job_type
            ordered.append(found)
        ordered.extend(g for g in groups if str(g.get("job_type", "")).upper() not in KNOWN_JOB_TYPES)
        groups = ordered
    out = {key: value for key, value in raw.items() if key not in ("status", "groups")}
    out.update({"status": status, "groups": groups})
    return out


def normalize_capacity_breakdown(body: Any, dimensions: list[str]) -> dict[str, Any]:
    """Capacity plus a `breakdown` of fixed shape (unsupported_dimensions, by_<dimension>, counts), whatever
    the server left out."""
    capacity = normalize_capacity(body)
    source = body.get("breakdown") if isinstance(body, Mapping) else None
    raw = source if isinstance(source, Mapping) else {}
    breakdown: dict[str, Any] = {
        "unsupported_dimensions": list(raw.get("unsupported_dimensions") or []),
    }
    unsupported = set(breakdown["unsupported_dimensions"])
    any_ok = False
    for dimension in dimensions:
        if dimension in unsupported:
            continue
        shaped = _normalize_dimension(dimension, raw.get(f"by_{dimension}"))
        breakdown[f"by_{dimension}"] = shaped
        any_ok = any_ok or shaped["status"] == "OK"
    if any_ok:
        breakdown["job_count"] = _as_int(raw.get("job_count"))
        breakdown["truncated"] = bool(raw.get("truncated") or False)
    capacity["breakdown"] = breakdown
    return capacity


# --------------------------------------------------------------------------------------------------
# Account-level job list
# --------------------------------------------------------------------------------------------------


def account_list_params(
    *,
    database: str | None,
    schema: str | None,
    status: str | Iterable[str] | None,
    submitted_by: str | None,
    created_after: str | None,
    created_before: str | None,
    page_size: int | None,
    page_token: str | None = None,
) -> dict[str, Any]:
    """The query of one account-list request; ValueError for arguments the service would refuse."""
    if schema and not database:
        raise ValueError("schema requires database: a schema name alone does not name one schema")
    if page_size is not None and (
        isinstance(page_size, bool)
        or not isinstance(page_size, int)
        or not ACCOUNT_LIST_MIN_PAGE_SIZE <= page_size <= ACCOUNT_LIST_MAX_PAGE_SIZE
    ):
        raise ValueError(
            f"page_size must be an integer from {ACCOUNT_LIST_MIN_PAGE_SIZE} to {ACCOUNT_LIST_MAX_PAGE_SIZE}"
        )
    if status is not None and not isinstance(status, str):
        status = ",".join(str(item) for item in status)
    params = {
        "database": database,
        "schema": schema,
        "status": status,
        "submitted_by": submitted_by,
        "created_after": created_after,
        "created_before": created_before,
        "limit": page_size,
        "page_token": page_token,
    }
    return {key: value for key, value in params.items() if value is not None and value != ""}


def classify_account_list_error(error: errors.APIError) -> errors.APIError:
    """Turn the account list's refusals into AccountJobListUnavailable / InvalidPageToken; else unchanged."""
    response = error.response
    body = response_json(response) if response is not None else None
    empty = response is None or not response.content.strip()
    reason = None
    if error.status_code == 403:
        reason = "forbidden"
    elif error.status_code == 404:
        reason = "not_deployed" if empty or body is None else "disabled"
    elif error.status_code == 405:
        reason = "rest_disabled"
    kwargs: dict[str, Any] = {
        "response": error.response,
        "status_code": error.status_code,
        "code": error.code,
        "request_id": error.request_id,
        "server_message": error.server_message,
    }
    if reason is not None:
        return errors.AccountJobListUnavailable(str(error), reason=reason, **kwargs)
    if error.status_code == 400 and "page_token" in (error.server_message or str(body or "")):
        return errors.InvalidPageToken(str(error), **kwargs)
    return error


# --------------------------------------------------------------------------------------------------
# A create body for a job like this one (from its getJob record)
# --------------------------------------------------------------------------------------------------

_SUB_JOB_DROPPED = frozenset(
    {
        # Ids and run state: the service assigns the one and reports the other.
        "job_id",
        "sub_job_id",
        "status",
        "reason",
        "reason_details",
        # Who ran it: the new job belongs to whoever creates it.
        "submitted_by",
        "owner_role",
        # A new job runs the current image.
        "image_tag",
    }
)
_SUB_JOB_FILLED = ("dtype", "seed", "source_checkpoint_info")
#: The class of a model deployment's one sampling sub-job (the only class the service supports today).
EVALUATION_DEPLOYMENT_CLASS = "EVALUATION"


def _is_dropped(key: str) -> bool:
    # Every time a record holds (created_at, updated_at, state_changed_at, ...) is named `*_at`.
    return key in _SUB_JOB_DROPPED or key.endswith("_at")


def _whole_numbers_to_int(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _whole_numbers_to_int(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_numbers_to_int(item) for item in value]
    return value


def _is_deployment(job: Mapping[str, Any]) -> bool:
    """A model deployment as the service defines one: a job whose one sub-job samples with
    `inference_config.deployment_class` EVALUATION (there is no separate deployment resource)."""
    sub_jobs = job.get("sub_jobs")
    if not isinstance(sub_jobs, list) or len(sub_jobs) != 1 or not isinstance(sub_jobs[0], Mapping):
        return False
    sub_job = sub_jobs[0]
    config = sub_job.get("inference_config")
    return (
        str(sub_job.get("job_type", "")).strip().lower() == "sampling"
        and isinstance(config, Mapping)
        and config.get("deployment_class") == EVALUATION_DEPLOYMENT_CLASS
    )


def _source_for_body(sub_job: Mapping[str, Any]) -> Any:
    """The sub-job's source_checkpoint_info as a create body can carry it.

    A source the record names (a checkpoint, or an external stage path) is kept as it is. A record
    that only says the sub-job started from external weights, not which (`{"external_stage_path":
    null}`), gives no source: the service refuses such a placeholder on create, so it is left out
    (null) and a warning asks for the path to be set again.
    """
    source = sub_job.get("source_checkpoint_info")
    if not isinstance(source, Mapping) or any(value is not None for value in source.values()):
        return source
    if EXTERNAL_WEIGHTS_KEY in source:
        logger.warning(
            "sub-job %s was started from external weights that its record does not name; the create "
            "body leaves source_checkpoint_info out (the new job would start from %s's base weights): "
            'set {"%s": "@DB.SCHEMA.STAGE/path"} in it to start from the same weights',
            sub_job.get("sub_job_id") or "?",
            sub_job.get("model_name") or "the model",
            EXTERNAL_WEIGHTS_KEY,
        )
    return None


def create_job_body_from_job(job: Mapping[str, Any], experiment_name: str | None = None) -> dict[str, Any]:
    """A create body for a job configured like `job` (a Get-job record) that create_job_from_body takes.

    The service's defaults fill the timeouts the record lacks; run state, times, owner, image and ids are
    left out; whole-number floats become integers. A source checkpoint or external stage path the
    record names is kept; external weights it does not name leave source_checkpoint_info null, with a
    warning (never a `{"external_stage_path": null}` placeholder, which a create refuses).
    ValueError for a record with no sub-jobs or no hardware (the service could not read the job).
    """
    if not isinstance(job, Mapping):
        raise ValueError("create_job_body_from_job expects a job record (a dict)")
    sub_jobs = job.get("sub_jobs")
    if not isinstance(sub_jobs, list) or not sub_jobs:
        raise ValueError("job record has no sub_jobs; cannot build a create body from it")
    if not job.get("hardware"):
        raise ValueError("job record has no hardware; cannot build a create body from it")
    configs = []
    for sub_job in sub_jobs:
        if not isinstance(sub_job, Mapping):
            raise ValueError("job record has a sub-job that is not an object")
        config = {key: value for key, value in sub_job.items() if not _is_dropped(key)}
        for key in _SUB_JOB_FILLED:
            config.setdefault(key, None)
        config["source_checkpoint_info"] = _source_for_body(sub_job)
        configs.append(config)
    deployment = _is_deployment(job)
    pending = job.get("pending_timeout_seconds")
    idle = job.get("idle_timeout_seconds")
    body = {
        "hardware": job.get("hardware"),
        "comment": job.get("comment"),
        "experiment_name": None if deployment else experiment_name,
        "idle_timeout_seconds": DEFAULT_IDLE_TIMEOUT_SECONDS if idle is None else idle,
        "pending_timeout_seconds": None if deployment else (pending or DEFAULT_PENDING_TIMEOUT_SECONDS),
        "sub_job_configs": configs,
    }
    return _whole_numbers_to_int(body)
