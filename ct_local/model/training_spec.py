"""What a training sub-job's config means to the local backend, read without importing torch.

The server canonicalizes the optimizer block itself (a raw create body is forwarded as given,
so the service owns the rewrite): ``type`` becomes ``name``, a DeepSpeed-style ``params``
object is flattened, ``beta1``/``beta2`` become ``betas`` and a nested ``gradient_clipping`` is
hoisted. :func:`training_spec` turns a stored sub-job into a :class:`TrainingSpec`, and
:func:`create_problems` lists what a create body gets wrong, so a job the worker could not start
is refused up front with 400 instead of failing later.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Optimizers the local backend runs, by lower-cased name.
SUPPORTED_OPTIMIZERS = ("adamw", "adam", "sgd")
# Defaults the server fills in when the optimizer block leaves them out (the client never does).
DEFAULT_LR = 1e-5
DEFAULT_BETAS = (0.9, 0.999)
DEFAULT_EPS = 1e-8
DEFAULT_WEIGHT_DECAY = 0.0
# Loss functions: processing.loss_fn values the local backend understands (None means SFT). The
# cross-entropy names weight each target's negative log-probability; the two policy losses weight
# the ratio exp(logprob - sampling logprob) by an advantage (ppo also clips it), per token.
CROSS_ENTROPY_LOSS_FNS = ("sft", "cross_entropy", "ce")
POLICY_LOSS_FNS = ("importance_sampling", "ppo")
SUPPORTED_LOSS_FNS = (*CROSS_ENTROPY_LOSS_FNS, *POLICY_LOSS_FNS)
# How processing.config.reduction folds the per-token losses: "mean" divides the sum by the total
# weight (cross-entropy) or the number of target tokens (policy losses); "sum" keeps the sum.
LOSS_REDUCTIONS = ("mean", "sum")
# ppo's ratio bounds when processing.config leaves them out: 1 - 0.2 and 1 + 0.2.
PPO_CLIP_LOW = 0.8
PPO_CLIP_HIGH = 1.2
# A label of this value marks a position without a target (cross-entropy's ignore index).
IGNORE_INDEX = -100
_OPTIMIZER_KEYS = frozenset(
    {
        "name",
        "type",
        "lr",
        "weight_decay",
        "betas",
        "beta1",
        "beta2",
        "eps",
        "fused",
        "momentum",
    }
)


class SpecError(ValueError):
    """A training config the local backend cannot run."""


@dataclass(frozen=True)
class OptimizerSpec:
    name: str = "adamw"
    lr: float = DEFAULT_LR
    weight_decay: float = DEFAULT_WEIGHT_DECAY
    betas: tuple[float, float] = DEFAULT_BETAS
    eps: float = DEFAULT_EPS
    momentum: float = 0.0


@dataclass(frozen=True)
class SourceSpec:
    """Create-time initialization of a sub-job: a saved checkpoint or a local HF folder."""

    checkpoint_id: str | None = None
    source_job_id: str | None = None
    external_path: Path | None = None


@dataclass(frozen=True)
class TrainingSpec:
    model_name: str
    optimizer: OptimizerSpec = field(default_factory=OptimizerSpec)
    max_seq_len: int | None = None
    gradient_clipping: float | None = None
    load_optimizer_states: bool = True
    step_peak_memory_log: bool = False
    source: SourceSpec | None = None


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SpecError(f"{where} must be a finite number, got {value!r}")
    return float(value)


def parse_optimizer(block: Any) -> tuple[OptimizerSpec, float | None]:
    """Canonicalize an optimizer block; returns the spec and a hoisted gradient_clipping, if any."""
    if block is None:
        return OptimizerSpec(), None
    if not isinstance(block, dict):
        raise SpecError("optimizer must be an object")
    flat = dict(block)
    params = flat.pop("params", None)
    if isinstance(params, dict):
        for key, value in params.items():
            if key in flat and flat[key] != value:
                raise SpecError(f"optimizer.{key} is set twice with different values")
            flat[key] = value
    clipping = flat.pop("gradient_clipping", None)
    unknown = sorted(set(flat) - _OPTIMIZER_KEYS)
    if unknown:
        raise SpecError(f"optimizer: unsupported key(s) {', '.join(unknown)}")
    names = {str(flat[k]) for k in ("name", "type") if flat.get(k) is not None}
    if len({n.lower() for n in names}) > 1:
        raise SpecError("optimizer.name and optimizer.type disagree")
    name = (names.pop() if names else "AdamW").lower()
    if name not in SUPPORTED_OPTIMIZERS:
        raise SpecError(
            f"optimizer {name!r} is not supported by the local server; "
            f"use one of {', '.join(SUPPORTED_OPTIMIZERS)}"
        )
    betas = DEFAULT_BETAS
    if flat.get("betas") is not None:
        raw = flat["betas"]
        if not isinstance(raw, list | tuple) or len(raw) != 2:
            raise SpecError("optimizer.betas must be a pair of numbers")
        betas = (_number(raw[0], "optimizer.betas[0]"), _number(raw[1], "optimizer.betas[1]"))
    if flat.get("beta1") is not None or flat.get("beta2") is not None:
        b1 = _number(flat.get("beta1", betas[0]), "optimizer.beta1")
        b2 = _number(flat.get("beta2", betas[1]), "optimizer.beta2")
        betas = (b1, b2)
    spec = OptimizerSpec(
        name=name,
        lr=_number(flat.get("lr", DEFAULT_LR), "optimizer.lr"),
        weight_decay=_number(flat.get("weight_decay", DEFAULT_WEIGHT_DECAY), "optimizer.weight_decay"),
        betas=betas,
        eps=_number(flat.get("eps", DEFAULT_EPS), "optimizer.eps"),
        momentum=_number(flat.get("momentum", 0.0), "optimizer.momentum"),
    )
    if spec.lr < 0:
        raise SpecError("optimizer.lr must not be negative")
    # torch's own bounds, checked here so a job that could never build its optimizer is refused
    # at create instead of failing when its worker starts.
    for key in ("weight_decay", "eps", "momentum"):
        if getattr(spec, key) < 0:
            raise SpecError(f"optimizer.{key} must not be negative, got {getattr(spec, key)!r}")
    if not all(0 <= beta < 1 for beta in spec.betas):
        raise SpecError(f"optimizer.betas (beta1, beta2) must each lie in [0, 1), got {list(spec.betas)}")
    hoisted = None if clipping is None else _clipping(clipping, "optimizer.gradient_clipping")
    return spec, hoisted


def _clipping(value: Any, where: str) -> float:
    """A gradient-clipping norm: 0 turns clipping off, a negative norm means nothing."""
    norm = _number(value, where)
    if norm < 0:
        raise SpecError(f"{where} must be 0 (off) or a positive norm, got {value!r}")
    return norm


def external_folder(path: str) -> Path:
    """Resolve ``external_stage_path`` to a local folder of Hugging Face safetensors."""
    text = path.removeprefix("file://")
    if text.startswith("@"):
        raise SpecError(
            f"external_stage_path {path!r} names a Snowflake stage; the local server reads a local folder "
            "(an absolute path or file:// URL) holding config.json and *.safetensors"
        )
    folder = Path(text).expanduser()
    if not folder.is_dir():
        raise SpecError(f"external_stage_path {path!r} is not a folder on this machine")
    if not (folder / "config.json").is_file() or not any(folder.glob("*.safetensors")):
        raise SpecError(f"external_stage_path {path!r} must hold config.json and *.safetensors files")
    return folder.resolve()


def parse_source(info: Any) -> SourceSpec | None:
    """Exactly one source: a saved checkpoint or an external folder."""
    if info is None:
        return None
    if not isinstance(info, dict):
        raise SpecError("source_checkpoint_info must be an object")
    external = info.get("external_stage_path")
    checkpoint_id = info.get("checkpoint_id")
    source_job_id = info.get("source_job_id")
    if external is not None:
        if checkpoint_id is not None or source_job_id is not None:
            raise SpecError(
                "source_checkpoint_info.external_stage_path cannot be combined with "
                "checkpoint_id or source_job_id"
            )
        return SourceSpec(external_path=external_folder(str(external)))
    if not isinstance(checkpoint_id, str) or not checkpoint_id:
        raise SpecError(
            "source_checkpoint_info needs checkpoint_id (with source_job_id) or external_stage_path"
        )
    if not isinstance(source_job_id, str) or not source_job_id:
        raise SpecError("source_checkpoint_info.source_job_id is required with checkpoint_id")
    return SourceSpec(checkpoint_id=checkpoint_id, source_job_id=source_job_id)


def training_spec(sub_job: dict[str, Any]) -> TrainingSpec:
    """Read a stored training sub-job record (raises SpecError on anything the backend cannot run)."""
    config = sub_job.get("training_config") or {}
    if not isinstance(config, dict):
        raise SpecError("training_config must be an object")
    optimizer, hoisted = parse_optimizer(config.get("optimizer"))
    clipping = config.get("gradient_clipping")
    clip = _clipping(clipping, "gradient_clipping") if clipping is not None else hoisted
    max_seq_len = config.get("max_seq_len")
    if max_seq_len is not None:
        max_seq_len = int(_number(max_seq_len, "max_seq_len"))
    return TrainingSpec(
        model_name=str(sub_job.get("model_name") or "ct-local-tiny"),
        optimizer=optimizer,
        max_seq_len=max_seq_len,
        gradient_clipping=clip if clip and clip > 0 else None,
        load_optimizer_states=config.get("load_optimizer_states") is not False,
        step_peak_memory_log=bool(config.get("step_peak_memory_log")),
        source=parse_source(sub_job.get("source_checkpoint_info")),
    )


def create_problems(index: int, sub_job: dict[str, Any]) -> list[str]:
    """Problems that would keep a training sub-job from starting, for the create route (400)."""
    try:
        training_spec(sub_job)
    except SpecError as exc:
        return [f"sub_job_configs[{index}]: {exc}"]
    return []
