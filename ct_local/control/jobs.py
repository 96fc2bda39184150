"""The local server's side of creating a job: checking the body and building the stored job.

A body is judged by ``ct_core.config.bodies.create_body_problems``, the rules the client applies
too (the contract's JSON schema plus the few rules a schema cannot say), and by the installed
plugins' validators (``plugin_problems``, through ct_core's hooks: this server imports no plugin):
shape problems answer 422 ``{"detail": [...]}``, rule violations answer 400 code 517602 naming
every problem found, each in the words the client would use. What only this server can know is
checked here after them: GPU types the account has no capacity for, the experiment name with the
path's database and schema, a training spec the worker cannot start, a model the server does not
serve, and a real model that would not fit the device.

:func:`optimizer_resize_problem` is the checkpoint rule shared by create (``source_checkpoint_info``)
and the runtime load: optimizer states are sharded over the data-parallel ranks, so restoring them
into a training sub-job of another data-parallel size (``n_gpus``) is refused unless that sub-job
was created with ``load_optimizer_states: false``.
"""

from __future__ import annotations

import copy
import re
import uuid
from typing import Any

from ct_core.config.bodies import SHOWN_CHARS, create_body_problems, plugin_problems, shown
from ct_core.config.typed import normalize_job_type
from ct_local.control.capacity import job_gpus
from ct_local.http.errors import RequestValidationError, invalid_request, unsupported_model
from ct_local.model import registry as model_registry
from ct_local.model.training_spec import SpecError, create_problems, parse_source
from ct_local.settings import (
    DEFAULT_HARDWARE,
    EXPERIMENT_NAME_MAX_PARTS,
    KNOWN_HARDWARE,
    MAX_NAME_PART_CHARS,
    Identity,
    ServerSettings,
)
from ct_local.storage.store import CheckpointRow, JobRow

DEFAULT_EXPERIMENT = "CT_EXPERIMENT"
#: One part of an experiment name.
_NAME_PART = re.compile(r"[A-Za-z0-9_-]+")


def experiment_name_problem(name: str, where: str = "experiment_name") -> str | None:
    """Why ``name`` cannot name an experiment, or None (see the rule in ct_local.settings)."""
    parts = name.split(".")
    longest = max(len(part) for part in parts)
    if longest > MAX_NAME_PART_CHARS:
        return f"{where} has a part of {longest} characters; each part has at most {MAX_NAME_PART_CHARS}"
    if len(parts) > EXPERIMENT_NAME_MAX_PARTS or not all(_NAME_PART.fullmatch(part) for part in parts):
        return (
            f"{where} {shown(name)} must be one to {EXPERIMENT_NAME_MAX_PARTS} dot-separated parts "
            "(NAME, SCHEMA.NAME or DB.SCHEMA.NAME) of ASCII letters, digits, '_' and '-'"
        )
    return None


def _server_sub_job_problems(index: int, sub: dict[str, Any]) -> list[str]:
    """What only this server checks of a well-formed sub-job: that its training spec can start,
    and that a source checkpoint names one this server can read."""
    where = f"sub_job_configs[{index}]"
    if normalize_job_type(sub.get("job_type", "")) == "training":
        return create_problems(index, sub)
    if sub.get("source_checkpoint_info") is not None:
        try:
            parse_source(sub["source_checkpoint_info"])
        except SpecError as exc:
            return [f"{where}: {exc}"]
    return []


def _check_models(sub_jobs: list[dict[str, Any]], served: tuple[str, ...]) -> None:
    """Refuse a sub-job whose model the server does not serve (the names its models route lists),
    as the service refuses one it has no weights for: a deployment in its own words."""
    for sub in sub_jobs:
        model = str(sub["model_name"])
        if model in served:
            continue
        config = sub.get("inference_config")
        if isinstance(config, dict) and config.get("deployment_class") is not None:
            kind = "model deployment"
        else:
            kind = f"{normalize_job_type(sub.get('job_type', ''))} job"
        short = model if len(model) <= SHOWN_CHARS else model[:SHOWN_CHARS] + "..."
        raise unsupported_model(short, kind)


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
    found = create_body_problems(body)
    shape: list[tuple[list[str | int], str]] = [(list(p.loc), p.message) for p in found if p.shape]
    if shape:
        raise RequestValidationError(shape)
    problems = [problem.message for problem in found]
    # The installed plugins' rules too (a peft_config, the DFlash2 settings), asked through ct_core's
    # hooks on a copy: what a validator normalizes is the client's business; the body is kept as sent.
    problems.extend(problem for problem in plugin_problems(copy.deepcopy(body)) if problem not in problems)
    sub_jobs: list[dict[str, Any]] = body["sub_job_configs"]
    for index, sub in enumerate(sub_jobs):
        problems.extend(_server_sub_job_problems(index, sub))
    hardware = body.get("hardware")
    if hardware is None:
        hardware = DEFAULT_HARDWARE
    elif hardware in KNOWN_HARDWARE and hardware not in settings.capacity:
        supported = ", ".join(h for h in KNOWN_HARDWARE if h in settings.capacity)
        problems.append(f'unsupported hardware "{hardware}": supported hardware is {supported}')
    experiment = body.get("experiment_name") or DEFAULT_EXPERIMENT
    if isinstance(experiment, str):
        problem = experiment_name_problem(experiment)
        if problem is None and "." not in experiment:
            experiment = f"{database}.{schema}.{experiment}"
            # The path's database and schema become part of the name (and of the run's URI).
            problem = experiment_name_problem(
                experiment, where="experiment_name (with the path's database and schema)"
            )
            if problem is not None:
                problem += "; give experiment_name in full (DB.SCHEMA.NAME) to create jobs here"
        if problem is not None:
            problems.append(problem)
    if problems:
        raise invalid_request("; ".join(problems))
    _check_models(sub_jobs, settings.models)
    # A real model's sub-job that cannot fit the device is refused now, not killed while loading.
    memory = model_registry.memory_problems(sub_jobs)
    if memory:
        raise invalid_request("; ".join(memory))

    job_id = str(uuid.uuid4())
    counters: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    for sub in sub_jobs:
        job_type = normalize_job_type(sub["job_type"])
        index = counters.get(job_type, 0)
        counters[job_type] = index + 1
        records.append({**sub, "job_type": job_type, "sub_job_id": f"{job_id}:{job_type}:{index}"})
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
