"""The LoRA adapter config (`peft_config`) rules of training and sampling sub-jobs, as plain functions.

`check_peft_config` turns whatever a caller wrote into the canonical eight-key form the service
and the local server expect, or reports every problem it found; `adapter_mismatches` compares the
adapters of a training and a sampling sub-job, which must agree for a LoRA weight sync.
Nothing here imports ct_core, so the rules can be read (and unit tested) on their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# Defaults the client fills in when a key is omitted.
DEFAULT_R = 8
DEFAULT_LORA_ALPHA = 8
DEFAULT_LORA_DROPOUT = 0.0
DEFAULT_BIAS = "none"
DEFAULT_TASK_TYPE = "CAUSAL_LM"
#: The only accepted spelling; Hugging Face's adapter_config.json writes "LORA", which is refused.
PEFT_TYPE = "Lora"
#: The bias values PEFT knows; the vLLM LoRA manager serves only "none".
KNOWN_BIAS_VALUES = ("none", "all", "lora_only")

#: The canonical key order of a normalized peft_config (the model catalog stores this form).
CANONICAL_KEYS: tuple[str, ...] = (
    "peft_type",
    "task_type",
    "r",
    "lora_alpha",
    "lora_dropout",
    "bias",
    "target_modules",
    "target_parameters",
)
SUPPORTED_KEYS = frozenset(CANONICAL_KEYS)

#: What a LoRA weight sync needs equal on both sides.
SYNC_KEYS: tuple[str, ...] = ("r", "lora_alpha", "target_modules")


def _is_int(value: Any) -> bool:
    # bool is an int subclass; True must never pass for r=1.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def check_peft_config(peft_config: Any, location: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Validate one `peft_config` and return `(normalized, problems)`.

    `normalized` is None when there is any problem. Every problem names its field, starting with
    `location` (for example `sub_job_configs[0].training_config.peft_config`).
    """
    if not isinstance(peft_config, Mapping):
        return None, [f"{location} must be an object, got {peft_config!r}"]

    unsupported = sorted(set(peft_config) - SUPPORTED_KEYS)
    if unsupported:
        # Fixed text: tooling and users match on it.
        return None, [
            f"{location} contains unsupported field(s): {unsupported}. "
            f"Supported fields: {sorted(SUPPORTED_KEYS)}"
        ]

    problems: list[str] = []
    peft_type = peft_config.get("peft_type")
    if peft_type != PEFT_TYPE:
        hint = " (Hugging Face's adapter_config.json spelling is not accepted)" if peft_type == "LORA" else ""
        problems.append(f"{location}.peft_type must be exactly {PEFT_TYPE!r}, got {peft_type!r}{hint}")

    task_type = peft_config.get("task_type", DEFAULT_TASK_TYPE)
    if task_type != DEFAULT_TASK_TYPE:
        problems.append(f"{location}.task_type must be {DEFAULT_TASK_TYPE!r}, got {task_type!r}")

    rank = peft_config.get("r", DEFAULT_R)
    if not _is_int(rank) or rank <= 0:
        problems.append(f"{location}.r must be a positive integer, got {rank!r}")

    alpha = peft_config.get("lora_alpha", DEFAULT_LORA_ALPHA)
    if not _is_int(alpha) or alpha < 0:
        problems.append(f"{location}.lora_alpha must be an integer of 0 or more, got {alpha!r}")

    dropout = peft_config.get("lora_dropout", DEFAULT_LORA_DROPOUT)
    if not _is_number(dropout) or not 0 <= dropout <= 1:
        problems.append(f"{location}.lora_dropout must be a number from 0 to 1, got {dropout!r}")

    bias = peft_config.get("bias", DEFAULT_BIAS)
    if bias not in KNOWN_BIAS_VALUES:
        problems.append(f"{location}.bias must be one of {list(KNOWN_BIAS_VALUES)}, got {bias!r}")
    elif bias != DEFAULT_BIAS:
        # Fixed text, as above.
        problems.append(f"{location}.bias={bias!r} is not supported by vLLM 0.26 LoRA. Use bias='none'.")

    modules = peft_config.get("target_modules", [])
    if isinstance(modules, str):
        if not modules:
            problems.append(f"{location}.target_modules must not be an empty string")
    elif not _string_list(modules):
        problems.append(f"{location}.target_modules must be a string or a list of non-empty strings")

    parameters = peft_config.get("target_parameters", [])
    if not _string_list(parameters):
        problems.append(f"{location}.target_parameters must be a list of non-empty strings")

    if modules == [] and parameters == []:
        problems.append(f"{location} must specify target_modules, target_parameters, or both")
    if problems:
        return None, problems

    normalized = {
        "peft_type": PEFT_TYPE,
        "task_type": DEFAULT_TASK_TYPE,
        "r": rank,
        "lora_alpha": alpha,
        "lora_dropout": float(dropout),
        "bias": DEFAULT_BIAS,
        # A string is a regular expression to PEFT, so it stays a string; lists are copied.
        "target_modules": modules if isinstance(modules, str) else list(modules),
        "target_parameters": list(parameters),
    }
    return normalized, []


def build_peft_config(
    *,
    r: int = DEFAULT_R,
    lora_alpha: int = DEFAULT_LORA_ALPHA,
    lora_dropout: float = DEFAULT_LORA_DROPOUT,
    target_modules: Iterable[str] | str = (),
    target_parameters: Iterable[str] = (),
) -> dict[str, Any]:
    """Build a normalized adapter config from options; ValueError naming every bad option."""
    raw: dict[str, Any] = {
        "peft_type": PEFT_TYPE,
        "r": r,
        "lora_alpha": lora_alpha,
        "lora_dropout": lora_dropout,
        "target_modules": target_modules if isinstance(target_modules, str) else list(target_modules),
        "target_parameters": list(target_parameters),
    }
    normalized, problems = check_peft_config(raw, "peft_config")
    if normalized is None:
        raise ValueError("; ".join(problems))
    return normalized


def _comparable(key: str, value: Any) -> Any:
    # PEFT matches target_modules as a set of names, so order and repeats do not change the adapter.
    if key == "target_modules" and isinstance(value, list):
        return ("list", tuple(sorted(set(value))))
    return value


def adapter_mismatches(
    training: Mapping[str, Any], training_location: str, sampling: Mapping[str, Any], sampling_location: str
) -> list[str]:
    """The sync keys on which two normalized adapters differ, one problem per key."""
    problems: list[str] = []
    for key in SYNC_KEYS:
        left, right = training.get(key), sampling.get(key)
        if _comparable(key, left) != _comparable(key, right):
            problems.append(
                f"{sampling_location}.{key} is {right!r} but {training_location}.{key} is {left!r}: "
                "a LoRA weight sync needs the sampling adapter to match the training adapter"
            )
    return problems
