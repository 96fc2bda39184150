"""Client-side checks of a create-job body, shared by `create_job`, `create_job_from_body` and
`ct submit --dry-run` so all three fail the same way, offline, before anything is sent.

`validate_create_body(body)` collects every problem it finds (not just the first), runs the plugin
validators (`ct_validate_sub_job` per sub-job, then `ct_validate_create_body`), and either raises one
`ValidationError` naming them all or returns the normalized copy of the body that should be sent.
`build_create_body(...)` is the typed path: it checks the `SubJobConfig`s and arguments of
`create_job` and assembles the body that then goes through `validate_create_body`.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Sequence
from typing import Any

from ct_core.config.bodies import (
    create_body_problems,
    multiplex_job_id_problems,
    plugin_problems,
    schema_problems,
)
from ct_core.config.typed import (
    LOG_PROBABILITY_REFUSAL,
    Hardware,
    JobType,
    SubJobConfig,
    hardware_wire,
    normalize_job_type,
)
from ct_core.constants import ENV_ENABLE_DEBUG_OPTIONS, TRUTHY_ENV_VALUES
from ct_core.errors import ValidationError

__all__ = [
    "build_create_body",
    "clear_cache_warnings",
    "debug_options_enabled",
    "multiplex_job_id_problems",
    "timeout_problems",
    "validate_create_body",
]

logger = logging.getLogger("ct_core.config.validation")

#: The server accepts the MoE provider only under its older name.
_PROVIDER_REWRITES = {"arctic": "prime_rl"}


#: The sampling opt-out of the prefix-cache clear on weight sync; the service ignores a
#: misspelled key, so the client points out near misses.
CLEAR_CACHE_KEY = "clear_cache_on_weight_sync"
#: How close (difflib ratio) a vllm_config key must be to CLEAR_CACHE_KEY to be called a misspelling.
CLEAR_CACHE_NEAR_MISS_RATIO = 0.8


def _squashed(key: str) -> str:
    return "".join(char for char in key.lower() if char.isalnum())


def clear_cache_warnings(inference_config: Any, location: str) -> list[str]:
    """Warnings for a sampling config whose clear_cache_on_weight_sync would be ignored.

    Nothing is refused: the service does not validate the key. A near-miss spelling inside
    `vllm_config` (another case, dashes, a typo), a value that is not a boolean, or the key placed
    directly in the inference config instead of its `vllm_config` is reported, since in each case
    the sync keeps clearing the cache.
    """
    import difflib

    if not isinstance(inference_config, dict):
        return []
    found: list[str] = []
    if CLEAR_CACHE_KEY in inference_config:
        found.append(
            f"{location}.{CLEAR_CACHE_KEY} is not read there; put it in {location}.vllm_config "
            f'(extra_sampling={{"vllm_config": {{"{CLEAR_CACHE_KEY}": false}}}})'
        )
    vllm_config = inference_config.get("vllm_config")
    if not isinstance(vllm_config, dict):
        return found
    where = f"{location}.vllm_config"
    if CLEAR_CACHE_KEY in vllm_config and not isinstance(vllm_config[CLEAR_CACHE_KEY], bool):
        found.append(
            f"{where}.{CLEAR_CACHE_KEY} should be true or false, got {vllm_config[CLEAR_CACHE_KEY]!r}"
        )
    target = _squashed(CLEAR_CACHE_KEY)
    for key in vllm_config:
        if not isinstance(key, str) or key == CLEAR_CACHE_KEY:
            continue
        squashed = _squashed(key)
        if squashed == target or difflib.SequenceMatcher(None, squashed, target).ratio() >= (
            CLEAR_CACHE_NEAR_MISS_RATIO
        ):
            found.append(
                f"{where}.{key} looks like a misspelling of {CLEAR_CACHE_KEY}; the service ignores "
                "unknown keys, so weight syncs would keep clearing the prefix cache"
            )
    return found


def debug_options_enabled() -> bool:
    """True when CORTEX_TRAINING_ENABLE_DEBUG_OPTIONS is set to a truthy value (read at each call)."""
    return os.environ.get(ENV_ENABLE_DEBUG_OPTIONS, "").strip().lower() in TRUTHY_ENV_VALUES


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def timeout_problems(idle_timeout_seconds: Any, pending_timeout_seconds: Any) -> list[str]:
    """The create-body rules of the two job timeouts (None means omitted), in the body's words."""
    fields = {
        "idle_timeout_seconds": idle_timeout_seconds,
        "pending_timeout_seconds": pending_timeout_seconds,
    }
    # The smallest valid body around the two fields, so only their own problems are reported.
    return [
        problem.message
        for problem in schema_problems(
            {"sub_job_configs": [{"job_type": "sampling", "model_name": "m"}], **fields}
        )
    ]


def validate_create_body(body: Any) -> dict[str, Any]:
    """Check a raw create-job body and return the normalized copy to send; raise ValidationError.

    Hardware is sent upper case (`h200` as `H200`) and a training `model_provider` of "arctic" as
    "prime_rl"; then every plugin validator runs (the lora plugin normalizes `peft_config`). The
    normalized body is judged by `ct_core.config.bodies.create_body_problems`, the rules the local
    server applies too; the `debug` block is refused unless CORTEX_TRAINING_ENABLE_DEBUG_OPTIONS is
    set. Everything else, the optimizer included, is forwarded as given.
    """
    if not isinstance(body, dict):
        raise ValidationError("create_job_from_body requires a JSON object")
    normalized = copy.deepcopy(body)
    hardware = normalized.get("hardware")
    if isinstance(hardware, str):
        try:
            normalized["hardware"] = hardware_wire(hardware)
        except ValueError:
            pass  # refused below, in the body's words
    sub_jobs = normalized.get("sub_job_configs")
    sub_jobs = sub_jobs if isinstance(sub_jobs, list) else []
    for index, sub_job in enumerate(sub_jobs):
        if not isinstance(sub_job, dict):
            continue
        location = f"sub_job_configs[{index}]"
        kind = normalize_job_type(sub_job.get("job_type"))
        inference_config = sub_job.get("inference_config")
        if kind == JobType.SAMPLING.value and isinstance(inference_config, dict):
            for warning in clear_cache_warnings(inference_config, f"{location}.inference_config"):
                logger.warning("%s", warning)
        training_config = sub_job.get("training_config")
        if kind != JobType.TRAINING.value or not isinstance(training_config, dict):
            continue
        provider = training_config.get("model_provider")
        if isinstance(provider, str) and provider in _PROVIDER_REWRITES:
            logger.info(
                "%s: model_provider %r is sent as %r", location, provider, _PROVIDER_REWRITES[provider]
            )
            training_config["model_provider"] = _PROVIDER_REWRITES[provider]

    from_plugins = plugin_problems(normalized)
    problems = [problem.message for problem in create_body_problems(normalized)]
    if normalized.get("debug") and not debug_options_enabled():
        problems.append(
            "create-job debug options are an internal-only capability; set "
            f"{ENV_ENABLE_DEBUG_OPTIONS}=1 to send a request with a `debug` block"
        )
    problems.extend(problem for problem in from_plugins if problem not in problems)
    if problems:
        raise ValidationError(problems)
    return normalized


def build_create_body(
    sub_jobs: Sequence[SubJobConfig],
    *,
    experiment_name: str | None = None,
    hardware: str | Hardware | None = None,
    idle_timeout_seconds: int | None = None,
    pending_timeout_seconds: int | None = None,
) -> dict[str, Any]:
    """The typed path of `create_job`: check the configs and arguments, return the REST body.

    Optional keys appear only when set. The result still goes through `validate_create_body`.
    """
    if not sub_jobs:
        raise ValidationError("create_job requires a non-empty sub_jobs list")
    problems: list[str] = []
    for index, sub_job in enumerate(sub_jobs):
        if not isinstance(sub_job, SubJobConfig):
            problems.append(f"sub_jobs[{index}] must be a SubJobConfig, got {type(sub_job).__name__}")
            continue
        if normalize_job_type(sub_job.job_type) == JobType.LOG_PROBABILITY.value:
            problems.append(f"sub_jobs[{index}].job_type: {LOG_PROBABILITY_REFUSAL}")
            continue
        problems.extend(f"sub_jobs[{index}]: {problem}" for problem in sub_job.problems())
    wire_hardware = None
    if hardware is not None:
        try:
            wire_hardware = hardware_wire(hardware)
        except ValueError as error:
            problems.append(str(error))
    problems.extend(timeout_problems(idle_timeout_seconds, pending_timeout_seconds))
    if problems:
        raise ValidationError(problems)

    body: dict[str, Any] = {"sub_job_configs": [sub_job.to_dict() for sub_job in sub_jobs]}
    optional = {
        "experiment_name": experiment_name,
        "hardware": wire_hardware,
        "idle_timeout_seconds": idle_timeout_seconds,
        "pending_timeout_seconds": pending_timeout_seconds,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    return body
