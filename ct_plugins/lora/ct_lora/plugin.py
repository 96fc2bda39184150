"""The lora plugin's hooks: normalize every `peft_config` and compare a job's two adapters (a warning).

Registered under the entry-point group `ct` as `lora`. The SDK calls these hooks on every create
path (typed `create_job`, `create_job_from_body`, `ct submit` with or without `--dry-run`), so
a LoRA config is checked and rewritten the same way whichever door it came through.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts

#: Under ct_core's loggers, so that `ct` shows what it logs as `warning:` lines like the SDK's own.
logger = logging.getLogger("ct_core.plugins.lora")

# The rules (and ct_core.config.typed) are imported by the hooks that use them, not with this module:
# loading the plugin happens on every `ct` start, `ct --help` included.

#: The config block of a sub-job that may carry a peft_config (training, then sampling).
CONFIG_KEYS = ("training_config", "inference_config")


def _adapters(sub_job: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(config key, config) pairs of a sub-job whose config holds a peft_config."""
    found = []
    for key in CONFIG_KEYS:
        config = sub_job.get(key)
        # An explicit null is treated like an absent key: there is no adapter to check.
        if isinstance(config, dict) and config.get("peft_config") is not None:
            found.append((key, config))
    return found


@hookimpl
def ct_validate_sub_job(sub_job: dict[str, Any], location: str) -> list[str]:
    from ct_lora.config import check_peft_config

    problems: list[str] = []
    for key, config in _adapters(sub_job):
        normalized, found = check_peft_config(config["peft_config"], f"{location}.{key}.peft_config")
        if normalized is None:
            problems.extend(found)
        else:
            config["peft_config"] = normalized
    return problems


def _kind(sub_job: dict[str, Any]) -> str:
    from ct_core.config.typed import normalize_job_type

    # Every spelling the core accepts ("TRAINING", "job_type_sampling", ...) counts as its type.
    return normalize_job_type(sub_job.get("job_type"))


@hookimpl
def ct_validate_create_body(body: dict[str, Any]) -> list[str]:
    # Runs after every sub-job went through ct_validate_sub_job, so valid adapters are normalized
    # already; an adapter that failed there is reported there and skipped here.
    from ct_lora.config import adapter_mismatches, check_peft_config

    sub_jobs = body.get("sub_job_configs")
    if not isinstance(sub_jobs, list):
        return []
    training: tuple[str, dict[str, Any]] | None = None
    sampling: list[tuple[str, dict[str, Any]]] = []
    for index, sub_job in enumerate(sub_jobs):
        if not isinstance(sub_job, dict):
            continue
        kind = _kind(sub_job)
        key = "training_config" if kind == "training" else "inference_config"
        config = sub_job.get(key)
        if not isinstance(config, dict) or config.get("peft_config") is None:
            continue
        where = f"sub_job_configs[{index}].{key}.peft_config"
        # Checking again is cheap and idempotent; an invalid adapter was reported by the sub-job hook.
        peft, _ = check_peft_config(config["peft_config"], where)
        if peft is None:
            continue
        if kind == "training" and training is None:
            training = (where, peft)
        elif kind == "sampling":
            sampling.append((where, peft))
    if training is None:
        return []
    # Adapters that differ are a warning, never a refusal: the service accepts such a job, and only
    # a later `weight_format="lora"` sync between the two would fail.
    for where, peft in sampling:
        for mismatch in adapter_mismatches(training[1], training[0], peft, where):
            logger.warning("%s", mismatch)
    return []


@hookimpl
def ct_register_commands(app: cyclopts.App) -> None:
    app.command("ct_lora.cli:app", name="lora", help="Build LoRA adapter configs (peft_config) for jobs.")
