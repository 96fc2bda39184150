"""Server-side checks of a create-job body and the stored job it becomes.

The server repeats the client's checks for every caller (a raw body may come from any client):
shape problems answer 422 ``{"detail": [...]}``, rule violations answer 400 code 517602 naming
every problem found, and unsupported GPU types are refused the same way.

:func:`optimizer_resize_problem` is the checkpoint rule shared by create (``source_checkpoint_info``)
and the runtime load: optimizer states are sharded over the data-parallel ranks, so restoring them
into a training sub-job of another data-parallel size (``n_gpus``) is refused unless that sub-job
was created with ``load_optimizer_states: false``.
"""

from __future__ import annotations

import uuid
from typing import Any

from ct_local.control.capacity import job_gpus
from ct_local.http.errors import RequestValidationError, invalid_request
from ct_local.model.training_spec import SpecError, create_problems, parse_source
from ct_local.settings import (
    DEFAULT_HARDWARE,
    KNOWN_HARDWARE,
    TIMEOUT_MAX_S,
    TIMEOUT_MIN_S,
    Identity,
    ServerSettings,
)
from ct_local.storage.store import CheckpointRow, JobRow

SUBMITTABLE_TYPES = ("training", "sampling")
LOG_PROB_TYPES = ("log_probability", "log_prob")
DEFAULT_EXPERIMENT = "CT_EXPERIMENT"


def normalize_job_type(value: Any) -> str:
    """Lower-case, trim and drop a ``job_type_`` prefix, as the enum names arrive from some clients."""
    text = str(value).strip().lower()
    return text.removeprefix("job_type_")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_timeouts(body: dict[str, Any], problems: list[str]) -> None:
    idle = body.get("idle_timeout_seconds")
    if idle is not None:
        if not _is_int(idle):
            problems.append("idle_timeout_seconds must be an integer")
        elif idle != 0 and not TIMEOUT_MIN_S <= idle <= TIMEOUT_MAX_S:
            problems.append(f"idle_timeout_seconds must be 0 or between {TIMEOUT_MIN_S} and {TIMEOUT_MAX_S}")
    pending = body.get("pending_timeout_seconds")
    if pending is not None:
        if not _is_int(pending):
            problems.append("pending_timeout_seconds must be an integer")
        elif not TIMEOUT_MIN_S <= pending <= TIMEOUT_MAX_S:
            problems.append(f"pending_timeout_seconds must be between {TIMEOUT_MIN_S} and {TIMEOUT_MAX_S}")


def _check_sub_job(index: int, sub: dict[str, Any], shape: list[tuple[list[str | int], str]]) -> list[str]:
    problems: list[str] = []
    where = f"sub_job_configs[{index}]"
    job_type = normalize_job_type(sub.get("job_type", ""))
    if job_type in LOG_PROB_TYPES:
        problems.append(f"{where}.job_type: log_probability sub-jobs are not currently supported")
    elif job_type not in SUBMITTABLE_TYPES:
        shape.append((["sub_job_configs", index, "job_type"], f"unknown job_type {sub.get('job_type')!r}"))
    model = sub.get("model_name")
    if not isinstance(model, str) or not model.strip():
        shape.append((["sub_job_configs", index, "model_name"], "model_name must be a non-empty string"))
    for key in ("training_config", "inference_config"):
        config = sub.get(key)
        if config is None:
            continue
        if not isinstance(config, dict):
            shape.append((["sub_job_configs", index, key], f"{key} must be an object"))
            continue
        n_gpus = config.get("n_gpus")
        whole = _is_int(n_gpus) or (isinstance(n_gpus, float) and n_gpus.is_integer())
        if n_gpus is not None and (not whole or n_gpus <= 0):
            problems.append(f"{where}.{key}.n_gpus must be a positive integer")
    if job_type == "training" and not shape:
        problems.extend(create_problems(index, sub))
    elif sub.get("source_checkpoint_info") is not None:
        try:
            parse_source(sub["source_checkpoint_info"])
        except SpecError as exc:
            problems.append(f"{where}: {exc}")
    training = sub.get("training_config")
    if isinstance(training, dict):
        ds_config = training.get("ds_config")
        zero = ds_config.get("zero_optimization") if isinstance(ds_config, dict) else None
        stage = zero.get("stage") if isinstance(zero, dict) else None
        if isinstance(stage, int | float) and not isinstance(stage, bool) and stage >= 3:
            problems.append(
                f"{where}.training_config.ds_config.zero_optimization.stage: ZeRO-3 is not supported"
            )
    return problems


def data_parallel_size(sub_job: dict[str, Any]) -> float:
    """A training sub-job's data-parallel size: its n_gpus (1 when unset), as the contract counts it."""
    config = sub_job.get("training_config")
    n_gpus = config.get("n_gpus") if isinstance(config, dict) else None
    return float(n_gpus) if isinstance(n_gpus, int | float) and not isinstance(n_gpus, bool) else 1.0


def restores_optimizer(sub_job: dict[str, Any]) -> bool:
    """Whether a resumable checkpoint brings its optimizer states along (``load_optimizer_states``)."""
    config = sub_job.get("training_config")
    return not (isinstance(config, dict) and config.get("load_optimizer_states") is False)


def optimizer_resize_problem(
    target: dict[str, Any], where: str, source: JobRow, checkpoint: CheckpointRow
) -> str | None:
    """Why restoring ``checkpoint`` into the training sub-job ``target`` is refused, or None.

    Only a resumable checkpoint holds optimizer states, and only a target that restores them and
    runs on another data-parallel size than the sub-job that saved them cannot take them.
    """
    if checkpoint.checkpoint_type != "resumable" or not restores_optimizer(target):
        return None
    saved_by = [sub for sub in source.sub_jobs if normalize_job_type(sub.get("job_type", "")) == "training"]
    if not saved_by:
        return None
    before, after = data_parallel_size(saved_by[0]), data_parallel_size(target)
    if before == after:
        return None
    return (
        f"checkpoint {checkpoint.checkpoint_id} of job {source.job_id} holds optimizer states saved at "
        f"data-parallel size {before:g} (n_gpus {before:g}), but {where} has n_gpus {after:g}; the "
        "data-parallel-sharded optimizer states cannot be resized. Create the training sub-job with "
        "training_config.load_optimizer_states=false to restore the weights only with a fresh "
        f"optimizer, or keep n_gpus {before:g}"
    )


def build_job(
    body: Any,
    *,
    settings: ServerSettings,
    identity: Identity,
    database: str,
    schema: str,
    endpoint: str,
    now: float,
) -> JobRow:
    """Check ``body`` and return the job row to insert (raises a contract error on any problem)."""
    if not isinstance(body, dict):
        raise RequestValidationError([([], "the request body must be a JSON object")])
    shape: list[tuple[list[str | int], str]] = []
    problems: list[str] = []
    if "job_id" in body:
        # The service assigns ids, so a job_id in the body (the reference 0.0.3 client sends one) is refused.
        problems.append("job_id must not be set when creating a job")
    sub_jobs = body.get("sub_job_configs")
    if not isinstance(sub_jobs, list) or not sub_jobs:
        shape.append((["sub_job_configs"], "sub_job_configs must be a non-empty list"))
        sub_jobs = []
    training_count = 0
    for index, sub in enumerate(sub_jobs):
        if not isinstance(sub, dict):
            shape.append((["sub_job_configs", index], "each sub-job config must be an object"))
            continue
        problems.extend(_check_sub_job(index, sub, shape))
        if normalize_job_type(sub.get("job_type", "")) == "training":
            training_count += 1
    if training_count > 1:
        problems.append("at most one training sub-job is supported per job")
    hardware = body.get("hardware")
    if hardware is None:
        hardware = DEFAULT_HARDWARE
    elif hardware not in KNOWN_HARDWARE:
        problems.append(f"hardware must be one of {', '.join(KNOWN_HARDWARE)}, got {hardware!r}")
    elif hardware not in settings.capacity:
        supported = ", ".join(h for h in KNOWN_HARDWARE if h in settings.capacity)
        problems.append(f'unsupported hardware "{hardware}": supported hardware is {supported}')
    _check_timeouts(body, problems)
    for key in ("experiment_name", "comment"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            shape.append(([key], f"{key} must be a string"))
    if shape:
        raise RequestValidationError(shape)
    if problems:
        raise invalid_request("; ".join(problems))

    job_id = str(uuid.uuid4())
    counters: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    for sub in sub_jobs:
        job_type = normalize_job_type(sub["job_type"])
        index = counters.get(job_type, 0)
        counters[job_type] = index + 1
        records.append({**sub, "job_type": job_type, "sub_job_id": f"{job_id}:{job_type}:{index}"})
    experiment = body.get("experiment_name") or DEFAULT_EXPERIMENT
    if "." not in experiment:
        experiment = f"{database}.{schema}.{experiment}"
    return JobRow(
        job_id=job_id,
        database_name=database,
        schema_name=schema,
        endpoint=endpoint,
        owner_role=identity.role,
        submitted_by=identity.user,
        status="pending",
        created_at=now,
        updated_at=now,
        state_changed_at=now,
        last_activity_at=now,
        hardware=str(hardware),
        gpus=job_gpus(records),
        experiment_name=experiment,
        experiment_run_name="RUN_" + job_id.replace("-", "").upper()[:16],
        sub_jobs=records,
        idle_timeout_seconds=body.get("idle_timeout_seconds"),
        pending_timeout_seconds=body.get("pending_timeout_seconds"),
        comment=body.get("comment"),
    )
