"""Typed create-job configs: `JobType`, `Hardware`, `TrainingConfig`, `InferenceConfig` and
`SubJobConfig` with its `training_job` / `sampling_job` factories.

Constructor names and fields match the reference client so code ports by changing an import. Each
config checks itself in `validate()` (raising `ValidationError`, a `ValueError`) and renders the REST
shape with `to_dict()` (`to_wire()` is the reference's name for the same thing). The optimizer block is
canonicalized when a TrainingConfig is built. Whole-body rules (one training sub-job, the
log-probability refusal, timeouts, ZeRO-3, plugin hooks) live in `ct_core.config.validation`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ct_core.config.optimizer import canonicalize_optimizer
from ct_core.errors import ValidationError

LOG_PROBABILITY_REFUSAL = "log_probability sub-jobs are not currently supported"
#: The server accepts the "arctic" training provider only under this name for now.
MODEL_PROVIDER_WIRE_NAMES = {"arctic": "prime_rl"}
#: Keys of source_checkpoint_info: a saved checkpoint, or external weights in a stage.
_SAVED_CHECKPOINT_KEYS = ("checkpoint_id", "source_job_id")
_EXTERNAL_WEIGHTS_KEY = "external_stage_path"


class JobType(StrEnum):
    """The `job_type` of a sub-job. `log_probability` exists in the schema but cannot be submitted."""

    TRAINING = "training"
    SAMPLING = "sampling"
    LOG_PROBABILITY = "log_probability"


class Hardware(StrEnum):
    """GPU type of every sub-job of a job, and the scope of a capacity query. The server default is H200."""

    H200 = "H200"
    B200 = "B200"
    B300 = "B300"


def hardware_wire(hardware: Hardware | str) -> str:
    """The wire spelling (upper case) of `hardware`: the enum, or its name in any case (`h200` is
    sent as `H200`, as deployments take it); ValueError for anything else."""
    if isinstance(hardware, Hardware):
        return hardware.value
    if isinstance(hardware, str):
        wanted = hardware.strip().upper()
        for member in Hardware:
            if member.value == wanted:
                return member.value
    allowed = ", ".join(member.value for member in Hardware)
    raise ValueError(f"hardware must be one of {allowed}, got {hardware!r}")


def normalize_job_type(value: Any) -> str:
    """Lower-case, trimmed, without a `job_type_` prefix; the short `log_prob` maps to `log_probability`."""
    text = str(value if value is not None else "").strip().lower().removeprefix("job_type_")
    return JobType.LOG_PROBABILITY.value if text == "log_prob" else text


def _require_positive_int(value: Any, name: str, problems: list[str]) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(f"{name} must be an integer, got {value!r}")
    elif value <= 0:
        problems.append(f"{name} must be > 0")


def source_checkpoint_problems(info: Any, location: str = "sub_job.source_checkpoint_info") -> list[str]:
    """Our pre-check of `source_checkpoint_info`: exactly one source, and never credentials.

    The service stamps scoped stage credentials itself, so a `stage_info` the caller supplies is refused.
    """
    if info is None:
        return []
    if not isinstance(info, dict):
        return [f"{location} must be an object"]
    found: list[str] = []
    external = info.get(_EXTERNAL_WEIGHTS_KEY)
    saved = [key for key in _SAVED_CHECKPOINT_KEYS if info.get(key) is not None]
    if external is not None and saved:
        found.append(
            f"{location}.{_EXTERNAL_WEIGHTS_KEY} cannot be combined with {' or '.join(saved)}: "
            "name either a saved checkpoint or external weights"
        )
    elif external is None and info.get("checkpoint_id") is None:
        found.append(f"{location} needs checkpoint_id (with source_job_id) or {_EXTERNAL_WEIGHTS_KEY}")
    if "stage_info" in info:
        found.append(f"{location}.stage_info must not be sent: the service provides stage credentials")
    return found


def _check_lm_head_combination(extra: dict[str, Any], location: str, problems: list[str]) -> None:
    """Fused cross-entropy cannot be combined with an fp32 or chunked LM head."""
    if extra.get("fused_cross_entropy", "liger") is False:
        return
    chunk = extra.get("fused_lm_head_token_chunk_size")
    chunked = isinstance(chunk, int) and not isinstance(chunk, bool)
    if extra.get("fp32_lm_head", False) or chunked:
        problems.append(
            f"{location} cannot combine fused_cross_entropy with fp32_lm_head or "
            "fused_lm_head_token_chunk_size. Set fused_cross_entropy=false to use fp32/chunked LM head, "
            "or remove fp32/chunked LM-head knobs to use fused CE."
        )


@dataclass
class TrainingConfig:
    """The `training_config` of a training sub-job.

    `optimizer` is rewritten into its canonical flat form on construction; `extra` holds every other
    training key (ds_config, peft_config, model_options, ...) and never overrides a typed field.
    """

    optimizer: dict[str, Any]
    max_seq_len: int
    train_batch_size: int
    n_gpus: int
    gradient_clipping: float | None = None
    """Gradient-norm clip; when unset, a clipping value inside the optimizer block is used instead."""
    multiplex_job_id: str | None = None
    """Share the GPUs of this `{job_id}:{type}:{index}` sub-job of another job."""
    load_optimizer_states: bool | None = None
    """False restores only the weights of a checkpoint; None leaves it to the server (true)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            canonical, nested_clipping = canonicalize_optimizer(self.optimizer, location="training.optimizer")
        except ValueError as error:
            raise ValidationError(str(error)) from None
        self.optimizer = canonical
        # The server reads clipping from the typed field; the typed field wins when both are set.
        if self.gradient_clipping is None and nested_clipping is not None:
            self.gradient_clipping = nested_clipping

    def problems(self) -> list[str]:
        found: list[str] = []
        if not self.optimizer and self.gradient_clipping is None:
            found.append("training.optimizer is required and must be a non-empty dict")
        _require_positive_int(self.max_seq_len, "training.max_seq_len", found)
        _require_positive_int(self.train_batch_size, "training.train_batch_size", found)
        _require_positive_int(self.n_gpus, "training.n_gpus", found)
        if not isinstance(self.extra, dict):
            found.append("training.extra must be a dict")
            return found
        prime_rl = self.extra.get("prime_rl")
        # The trainer overlays the prime_rl block on the top level, so check the merged view too.
        merged = {**self.extra, **prime_rl} if isinstance(prime_rl, dict) else self.extra
        _check_lm_head_combination(merged, "training.extra", found)
        if isinstance(prime_rl, dict):
            _check_lm_head_combination(prime_rl, "training.extra.prime_rl", found)
        return found

    def validate(self) -> None:
        found = self.problems()
        if found:
            raise ValidationError(found)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "optimizer": copy.deepcopy(self.optimizer),
            "max_seq_len": self.max_seq_len,
            "train_batch_size": self.train_batch_size,
            "n_gpus": self.n_gpus,
        }
        for key in ("gradient_clipping", "multiplex_job_id", "load_optimizer_states"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        for key, value in self.extra.items():
            out.setdefault(key, copy.deepcopy(value))
        provider = out.get("model_provider")
        if isinstance(provider, str) and provider in MODEL_PROVIDER_WIRE_NAMES:
            out["model_provider"] = MODEL_PROVIDER_WIRE_NAMES[provider]
        return out

    to_wire = to_dict


@dataclass
class InferenceConfig:
    """The `inference_config` of a sampling sub-job; `extra` is open passthrough (vllm_config, ...)."""

    max_seq_len: int
    n_gpus: int
    multiplex_job_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def problems(self) -> list[str]:
        found: list[str] = []
        _require_positive_int(self.max_seq_len, "sampling.max_seq_len", found)
        _require_positive_int(self.n_gpus, "sampling.n_gpus", found)
        if not isinstance(self.extra, dict):
            found.append("sampling.extra must be a dict")
        return found

    def validate(self) -> None:
        found = self.problems()
        if found:
            raise ValidationError(found)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"max_seq_len": self.max_seq_len, "n_gpus": self.n_gpus}
        if self.multiplex_job_id is not None:
            out["multiplex_job_id"] = self.multiplex_job_id
        for key, value in self.extra.items():
            out.setdefault(key, copy.deepcopy(value))
        return out

    to_wire = to_dict


@dataclass
class SubJobConfig:
    """One entry of `sub_job_configs`: exactly one of `training` / `sampling` is set."""

    job_type: JobType
    model_name: str
    training: TrainingConfig | None = None
    """Set on training sub-jobs only."""
    sampling: InferenceConfig | None = None
    """Set on sampling sub-jobs only."""
    global_batch_size: int | None = None
    dtype: str | None = None
    """Model dtype name such as "bfloat16"; passed through as is."""
    seed: int | None = None
    model_post_init: list[str] | None = None
    """Names of post-init hooks the server runs on the loaded model."""
    source_checkpoint_info: dict[str, Any] | None = None
    """Start from a saved checkpoint or from external weights in a stage."""

    def __post_init__(self) -> None:
        # Spellings such as "Training ", "JOB_TYPE_SAMPLING" or "log_prob" name a known type;
        # anything else is kept as given and reported by problems().
        if not isinstance(self.job_type, JobType):
            known = {member.value: member for member in JobType}
            self.job_type = known.get(normalize_job_type(self.job_type), self.job_type)

    @classmethod
    def training_job(
        cls,
        model_name: str,
        *,
        optimizer: dict[str, Any],
        train_batch_size: int,
        max_seq_len: int,
        n_gpus: int,
        load_optimizer_states: bool | None = None,
        gradient_clipping: float | None = None,
        multiplex_job_id: str | None = None,
        extra_training: dict[str, Any] | None = None,
        seed: int | None = None,
        dtype: str | None = None,
        global_batch_size: int | None = None,
        model_post_init: list[str] | None = None,
        source_checkpoint_info: dict[str, Any] | None = None,
    ) -> SubJobConfig:
        """A training sub-job. `extra_training` carries every training key without a typed field.

        `load_optimizer_states=False` resumes weights only, which is needed to change the
        data-parallel size; it is fixed when the job is created.
        """
        training = TrainingConfig(
            optimizer=optimizer,
            train_batch_size=train_batch_size,
            max_seq_len=max_seq_len,
            n_gpus=n_gpus,
            load_optimizer_states=load_optimizer_states,
            gradient_clipping=gradient_clipping,
            multiplex_job_id=multiplex_job_id,
            extra=dict(extra_training or {}),
        )
        return cls(
            JobType.TRAINING,
            model_name,
            training=training,
            seed=seed,
            dtype=dtype,
            global_batch_size=global_batch_size,
            source_checkpoint_info=source_checkpoint_info,
            model_post_init=model_post_init,
        )

    @classmethod
    def sampling_job(
        cls,
        model_name: str,
        *,
        max_seq_len: int,
        n_gpus: int,
        job_type: JobType = JobType.SAMPLING,
        multiplex_job_id: str | None = None,
        extra_sampling: dict[str, Any] | None = None,
        seed: int | None = None,
        dtype: str | None = None,
        global_batch_size: int | None = None,
        model_post_init: list[str] | None = None,
        source_checkpoint_info: dict[str, Any] | None = None,
    ) -> SubJobConfig:
        """A sampling sub-job. `extra_sampling` carries vllm_config, peft_config, router_replay, ..."""
        kind = normalize_job_type(job_type.value if isinstance(job_type, JobType) else job_type)
        if kind == JobType.LOG_PROBABILITY.value:
            raise ValidationError(f"sampling_job().job_type: {LOG_PROBABILITY_REFUSAL}")
        if kind != JobType.SAMPLING.value:
            raise ValidationError(f"sampling_job() only accepts SAMPLING, got {job_type!r}")
        sampling = InferenceConfig(
            max_seq_len, n_gpus, multiplex_job_id=multiplex_job_id, extra=dict(extra_sampling or {})
        )
        return cls(
            JobType.SAMPLING,
            model_name,
            sampling=sampling,
            seed=seed,
            dtype=dtype,
            global_batch_size=global_batch_size,
            source_checkpoint_info=source_checkpoint_info,
            model_post_init=model_post_init,
        )

    def problems(self) -> list[str]:
        found: list[str] = []
        if not isinstance(self.model_name, str) or not self.model_name.strip():
            found.append("sub_job.model_name is required")
        if self.training is not None and self.sampling is not None:
            found.append("sub_job.training and sub_job.sampling are mutually exclusive")
        if not isinstance(self.job_type, JobType):
            allowed = ", ".join(member.value for member in JobType)
            found.append(f"sub_job.job_type must be one of {allowed}, got {self.job_type!r}")
            return found + source_checkpoint_problems(self.source_checkpoint_info)
        kind = self.job_type
        if kind is JobType.TRAINING:
            if self.training is None:
                found.append("training sub-job requires a `training` block")
            else:
                found.extend(self.training.problems())
        else:
            if self.sampling is None:
                found.append(f"{kind.value} sub-job requires a `sampling` block")
            else:
                found.extend(self.sampling.problems())
        found.extend(source_checkpoint_problems(self.source_checkpoint_info))
        return found

    def validate(self) -> None:
        found = self.problems()
        if found:
            raise ValidationError(found)

    def to_dict(self) -> dict[str, Any]:
        kind = self.job_type.value if isinstance(self.job_type, JobType) else self.job_type
        out: dict[str, Any] = {"job_type": kind, "model_name": self.model_name}
        for key in ("global_batch_size", "dtype", "seed"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.model_post_init is not None:
            out["model_post_init"] = list(self.model_post_init)
        if self.training is not None:
            out["training_config"] = self.training.to_dict()
        if self.sampling is not None:
            out["inference_config"] = self.sampling.to_dict()
        if self.source_checkpoint_info is not None:
            out["source_checkpoint_info"] = copy.deepcopy(self.source_checkpoint_info)
        return out

    to_wire = to_dict
