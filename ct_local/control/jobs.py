"""Server-side checks of a create-job body and the stored job it becomes.

The server repeats the client's checks for every caller (a raw body may come from any client):
shape problems answer 422 ``{"detail": [...]}``, rule violations answer 400 code 517602 naming
every problem found, and unsupported GPU types are refused the same way. The values the typed
client checks (positive max_seq_len, train_batch_size and n_gpus, a LoRA rank above 0) are checked
here too, with bounds on names, GPU counts and dtypes, so nothing the worker, the uploader or the
run URI cannot use is ever stored. A refusal quotes at most the start of a long value.

:func:`optimizer_resize_problem` is the checkpoint rule shared by create (``source_checkpoint_info``)
and the runtime load: optimizer states are sharded over the data-parallel ranks, so restoring them
into a training sub-job of another data-parallel size (``n_gpus``) is refused unless that sub-job
was created with ``load_optimizer_states: false``.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from ct_local.control.capacity import job_gpus
from ct_local.http.errors import RequestValidationError, invalid_request, unsupported_model
from ct_local.model import registry as model_registry
from ct_local.model.training_spec import SpecError, create_problems, parse_source
from ct_local.settings import (
    DEFAULT_HARDWARE,
    EXPERIMENT_NAME_MAX_PARTS,
    KNOWN_DTYPES,
    KNOWN_HARDWARE,
    MAX_LORA_RANK,
    MAX_MODEL_NAME_CHARS,
    MAX_NAME_PART_CHARS,
    MAX_SEED,
    MAX_SEQ_LEN,
    MAX_SUB_JOB_GPUS,
    TIMEOUT_MAX_S,
    TIMEOUT_MIN_S,
    Identity,
    ServerSettings,
)
from ct_local.storage.store import CheckpointRow, JobRow

SUBMITTABLE_TYPES = ("training", "sampling")
LOG_PROB_TYPES = ("log_probability", "log_prob")
DEFAULT_EXPERIMENT = "CT_EXPERIMENT"
#: One part of an experiment name.
_NAME_PART = re.compile(r"[A-Za-z0-9_-]+")
#: How much of a refused value a message quotes.
_SHOWN_CHARS = 60


def normalize_job_type(value: Any) -> str:
    """Lower-case, trim and drop a ``job_type_`` prefix, as the enum names arrive from some clients."""
    text = str(value).strip().lower()
    return text.removeprefix("job_type_")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_whole(value: Any) -> bool:
    # Whole numbers may come back as floats from Get job ("n_gpus": 4.0) and be sent again.
    return _is_int(value) or (isinstance(value, float) and value.is_integer())


def _shown(value: Any) -> str:
    """``repr(value)``, cut short: a refusal never echoes a megabyte back (repr also escapes
    characters that could not be written out, such as lone surrogates)."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + f"... ({len(text)} characters)"


def _check_count(value: Any, where: str, problems: list[str], *, maximum: int | None = None) -> None:
    """A positive whole number, at most ``maximum``; None means the field is unset."""
    if value is None:
        return
    if not _is_whole(value) or value <= 0:
        problems.append(f"{where} must be a positive integer, got {_shown(value)}")
    elif maximum is not None and value > maximum:
        problems.append(f"{where} must be at most {maximum}, got {_shown(value)}")


def experiment_name_problem(name: str, where: str = "experiment_name") -> str | None:
    """Why ``name`` cannot name an experiment, or None (see the rule in ct_local.settings)."""
    parts = name.split(".")
    longest = max(len(part) for part in parts)
    if longest > MAX_NAME_PART_CHARS:
        return f"{where} has a part of {longest} characters; each part has at most {MAX_NAME_PART_CHARS}"
    if len(parts) > EXPERIMENT_NAME_MAX_PARTS or not all(_NAME_PART.fullmatch(part) for part in parts):
        return (
            f"{where} {_shown(name)} must be one to {EXPERIMENT_NAME_MAX_PARTS} dot-separated parts "
            "(NAME, SCHEMA.NAME or DB.SCHEMA.NAME) of ASCII letters, digits, '_' and '-'"
        )
    return None


def _check_peft(value: Any, where: str, problems: list[str]) -> None:
    """The LoRA values the typed client and the lora plugin check; the rest reaches the model."""
    if value is None or value == {}:
        return  # no adapter
    if not isinstance(value, dict):
        problems.append(f"{where} must be an object, got {_shown(value)}")
        return
    rank = value.get("r")
    if rank is not None and (not _is_int(rank) or rank <= 0):
        problems.append(f"{where}.r must be a positive integer, got {_shown(rank)}")
    elif rank is not None and rank > MAX_LORA_RANK:
        problems.append(f"{where}.r must be at most {MAX_LORA_RANK}, got {_shown(rank)}")
    alpha = value.get("lora_alpha")
    if alpha is not None and (not _is_int(alpha) or alpha < 0):
        problems.append(f"{where}.lora_alpha must be an integer of 0 or more, got {_shown(alpha)}")
    dropout = value.get("lora_dropout")
    number = isinstance(dropout, int | float) and not isinstance(dropout, bool)
    if dropout is not None and (not number or not 0 <= dropout <= 1):
        problems.append(f"{where}.lora_dropout must be a number from 0 to 1, got {_shown(dropout)}")
    modules = value.get("target_modules")
    names = isinstance(modules, list) and all(isinstance(m, str) and m for m in modules)
    if modules is not None and not names and not (isinstance(modules, str) and modules):
        problems.append(f"{where}.target_modules must be a string or a list of non-empty strings")


def _check_values(where: str, sub: dict[str, Any], problems: list[str]) -> None:
    """Value checks of one sub-job whose shape is right: names, dtype, seed, sizes, LoRA."""
    model = sub.get("model_name")
    if isinstance(model, str) and len(model) > MAX_MODEL_NAME_CHARS:
        problems.append(
            f"{where}.model_name has {len(model)} characters; at most {MAX_MODEL_NAME_CHARS} are allowed"
        )
    dtype = sub.get("dtype")
    if dtype is not None and not (isinstance(dtype, str) and dtype.lower() in KNOWN_DTYPES):
        problems.append(f"{where}.dtype must be one of {', '.join(KNOWN_DTYPES)}, got {_shown(dtype)}")
    seed = sub.get("seed")
    if seed is not None and not (_is_int(seed) and 0 <= seed <= MAX_SEED):
        problems.append(f"{where}.seed must be an integer from 0 to 2**64 - 1, got {_shown(seed)}")
    _check_count(sub.get("global_batch_size"), f"{where}.global_batch_size", problems)
    hooks = sub.get("model_post_init")
    if hooks is not None and not (isinstance(hooks, list) and all(isinstance(h, str) and h for h in hooks)):
        problems.append(f"{where}.model_post_init must be a list of non-empty strings")
    for key in ("training_config", "inference_config"):
        config = sub.get(key)
        if not isinstance(config, dict):
            continue
        _check_count(config.get("max_seq_len"), f"{where}.{key}.max_seq_len", problems, maximum=MAX_SEQ_LEN)
        if key == "training_config":
            _check_count(config.get("train_batch_size"), f"{where}.{key}.train_batch_size", problems)
        _check_peft(config.get("peft_config"), f"{where}.{key}.peft_config", problems)


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
        shape.append(
            (["sub_job_configs", index, "job_type"], f"unknown job_type {_shown(sub.get('job_type'))}")
        )
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
        if n_gpus is not None and (not _is_whole(n_gpus) or n_gpus <= 0):
            problems.append(f"{where}.{key}.n_gpus must be a positive integer")
        elif n_gpus is not None and n_gpus > MAX_SUB_JOB_GPUS:
            problems.append(f"{where}.{key}.n_gpus must be at most {MAX_SUB_JOB_GPUS}, got {_shown(n_gpus)}")
    _check_values(where, sub, problems)
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
        shown = model if len(model) <= _SHOWN_CHARS else model[:_SHOWN_CHARS] + "..."
        raise unsupported_model(shown, kind)


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
        problems.append(f"hardware must be one of {', '.join(KNOWN_HARDWARE)}, got {_shown(hardware)}")
    elif hardware not in settings.capacity:
        supported = ", ".join(h for h in KNOWN_HARDWARE if h in settings.capacity)
        problems.append(f'unsupported hardware "{hardware}": supported hardware is {supported}')
    _check_timeouts(body, problems)
    for key in ("experiment_name", "comment"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            shape.append(([key], f"{key} must be a string"))
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
    if shape:
        raise RequestValidationError(shape)
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
