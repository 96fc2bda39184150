"""The `router_replay` block rules (docs/plugins/router-replay.md), checked before a job is sent.

A training sub-job carries the block in `training_config.router_replay`, a sampling sub-job in
`inference_config.router_replay` (SDK: `extra_sampling["router_replay"]`). The service enforces
the same rules; checking them here makes `ct submit --dry-run` catch them offline.
"""

from __future__ import annotations

import difflib
from typing import Any

from ct_core.config.typed import normalize_job_type

MODE_STRICT = "strict"
MODE_BEST_EFFORT = "best_effort"
#: The modes the service accepts; strict is the default.
MODES = (MODE_STRICT, MODE_BEST_EFFORT)
#: The keys the contract documents for the block.
KNOWN_KEYS = ("enabled", "max_cache_bytes", "mode")
#: The contract's example caps for MoE models (per worker): 5 GiB training, 20 GiB sampling.
EXAMPLE_TRAINING_CAP_BYTES = 5 * 1024**3
EXAMPLE_SAMPLING_CAP_BYTES = 20 * 1024**3

_CONFIG_KEY_BY_TYPE = {"training": "training_config", "sampling": "inference_config"}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_router_replay(block: Any, location: str, *, job_type: str) -> list[str]:
    """Every problem of one router_replay block; `job_type` is "training" or "sampling"."""
    if not isinstance(block, dict):
        return [f"{location} must be an object with enabled, max_cache_bytes and mode, got {block!r}"]
    problems: list[str] = []
    # The contract does not forbid other keys (a newer service may add some), so only a near miss
    # of a documented key is refused: a typo there would otherwise be dropped without a word.
    for key in sorted(set(block) - set(KNOWN_KEYS)):
        near = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.75)
        if near:
            problems.append(f"{location}.{key} is not a router_replay key; did you mean {near[0]}?")

    enabled = block.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        problems.append(f"{location}.enabled must be true or false, got {enabled!r}")

    mode = block.get("mode")
    if mode is not None and mode not in MODES:
        problems.append(f"{location}.mode must be 'strict' or 'best_effort', got {mode!r}")
    elif mode == MODE_BEST_EFFORT:
        if job_type != "training":
            problems.append(
                f"{location}.mode 'best_effort' applies to the training sub-job only; "
                "a sampling sub-job must use 'strict'"
            )
        elif enabled is False:
            problems.append(
                f"{location}.mode 'best_effort' needs router replay enabled, but enabled is false"
            )

    cap = block.get("max_cache_bytes")
    if cap is not None and (not _is_int(cap) or cap <= 0):
        problems.append(
            f"{location}.max_cache_bytes must be a positive integer (bytes per worker), got {cap!r}"
        )
    return problems


def check_sub_job(sub_job: dict[str, Any], location: str) -> list[str]:
    """The router_replay problems of one create-body sub-job (nothing when it has no block)."""
    # Every spelling the core accepts ("TRAINING", "job_type_sampling", ...) counts as its type.
    job_type = normalize_job_type(sub_job.get("job_type"))
    key = _CONFIG_KEY_BY_TYPE.get(job_type)
    if key is None:
        return []
    config = sub_job.get(key)
    if not isinstance(config, dict) or config.get("router_replay") is None:
        return []
    return check_router_replay(config["router_replay"], f"{location}.{key}.router_replay", job_type=job_type)
