"""Canonical form of a typed TrainingConfig's `optimizer` block.

The typed path rewrites whatever spelling the caller used (DeepSpeed `params`, `type`, `beta1`/`beta2`,
a nested `gradient_clipping`) into one flat object with the keys name, lr, weight_decay, betas, eps
and fused, and refuses anything it cannot place. No defaults are filled in (the server owns them),
except that a lone beta1 or beta2 is completed into a pair. The raw create-body path never calls this.
"""

from __future__ import annotations

import math
from typing import Any

CANONICAL_KEYS = ("name", "lr", "weight_decay", "betas", "eps", "fused")
SCHEDULER_KEYS = (
    "lr_scheduler",
    "lr_scheduler_type",
    "warmup_steps",
    "warmup_ratio",
    "warmup_steps_proportion",
    "num_warmup_steps",
    "training_horizon",
)
DEFAULT_BETAS = (0.9, 0.999)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value: Any, where: str, *, minimum: float, inclusive: bool = True) -> float | int:
    if not _is_number(value) or not math.isfinite(value):
        raise ValueError(f"{where} must be a finite number, got {value!r}")
    if value < minimum or (not inclusive and value == minimum):
        bound = f">= {minimum:g}" if inclusive else f"> {minimum:g}"
        raise ValueError(f"{where} must be {bound}, got {value!r}")
    return value


def _beta(value: Any, where: str) -> float:
    if not _is_number(value) or not math.isfinite(value) or not 0 <= value < 1:
        raise ValueError(f"{where} must be a finite number in [0, 1), got {value!r}")
    return float(value)


def canonicalize_optimizer(
    optimizer: Any, *, location: str = "optimizer"
) -> tuple[dict[str, Any], float | None]:
    """Return `(canonical optimizer, gradient_clipping found inside it or None)`; raise ValueError."""
    if not isinstance(optimizer, dict):
        raise ValueError(f"{location} must be an object, got {type(optimizer).__name__}")
    merged = dict(optimizer)

    params = merged.pop("params", None)
    if params is not None:
        if not isinstance(params, dict):
            raise ValueError(f"{location}.params must be an object, got {type(params).__name__}")
        for key, value in params.items():
            if key in merged and merged[key] != value:
                raise ValueError(
                    f"{location} sets {key}={merged[key]!r} and "
                    f"{location}.params.{key}={value!r}. Remove one."
                )
            merged[key] = value

    clipping = merged.pop("gradient_clipping", None)
    if clipping is not None:
        clipping = float(_finite(clipping, f"{location}.gradient_clipping", minimum=0))

    schedulers = sorted(key for key in merged if key in SCHEDULER_KEYS)
    if schedulers:
        raise ValueError(
            f"{location} contains unsupported scheduler field(s): {schedulers}. The server does not "
            "consume these names. For a client-driven learning rate, pass the per-step value to the "
            'client\'s step() call. For a server-side DeepSpeed scheduler, set ds_config["scheduler"].'
        )

    if "type" in merged:
        alias = merged.pop("type")
        if "name" in merged and merged["name"] != alias:
            raise ValueError(f"{location} sets both name={merged['name']!r} and type={alias!r}. Use name.")
        merged["name"] = alias

    beta1 = merged.pop("beta1", None)
    beta2 = merged.pop("beta2", None)
    if "betas" in merged:
        betas = merged["betas"]
        if isinstance(betas, (str, bytes)) or not isinstance(betas, (list, tuple)):
            raise ValueError(f"{location}.betas must be a list of two numbers")
        if len(betas) != 2:
            raise ValueError(f"{location}.betas must have exactly two values")
        pair = [_beta(betas[0], f"{location}.betas[0]"), _beta(betas[1], f"{location}.betas[1]")]
        for index, given in ((0, beta1), (1, beta2)):
            if given is not None and _beta(given, f"{location}.beta{index + 1}") != pair[index]:
                raise ValueError(
                    f"{location} sets betas={list(betas)!r} and beta{index + 1}={given!r}. Use betas."
                )
        merged["betas"] = pair
    elif beta1 is not None or beta2 is not None:
        merged["betas"] = [
            _beta(beta1, f"{location}.beta1") if beta1 is not None else DEFAULT_BETAS[0],
            _beta(beta2, f"{location}.beta2") if beta2 is not None else DEFAULT_BETAS[1],
        ]

    unknown = sorted(key for key in merged if key not in CANONICAL_KEYS)
    if unknown:
        raise ValueError(
            f"{location} contains unsupported field(s): {unknown}. Supported fields: {list(CANONICAL_KEYS)}"
        )

    if "name" in merged and (not isinstance(merged["name"], str) or not merged["name"].strip()):
        raise ValueError(f"{location}.name must be a non-empty string, got {merged['name']!r}")
    if "lr" in merged:
        _finite(merged["lr"], f"{location}.lr", minimum=0)
    if "weight_decay" in merged:
        _finite(merged["weight_decay"], f"{location}.weight_decay", minimum=0)
    if "eps" in merged:
        _finite(merged["eps"], f"{location}.eps", minimum=0, inclusive=False)
    if "fused" in merged and not isinstance(merged["fused"], bool):
        raise ValueError(f"{location}.fused must be a boolean, got {merged['fused']!r}")

    canonical = {key: merged[key] for key in CANONICAL_KEYS if key in merged}
    return canonical, clipping
