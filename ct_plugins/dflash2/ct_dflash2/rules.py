"""The DFlash2 rules (docs/plugins/dflash2.md), checked on a create-job body before it is sent.

Training side: `training_config.model_provider` is one of the accepted providers, the `dflash2`
block is there exactly when the provider is `dflash2`, holds only known keys with valid values,
and a dflash2 job turns off what the draft trainer cannot use (activation checkpointing, fp32
parity/residual, text_config_overrides, the two bf16 DeepSpeed flags, model patches, sequence and
expert parallelism). Serving side: `vllm_config.speculative_config.from_source_checkpoint` names a
Cortex Training checkpoint as the draft, so it needs a sampling sub-job with a checkpoint source
and no `speculative_config.model`. The service enforces all of this; every message names its field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ct_core.config.typed import normalize_job_type

PROVIDER = "dflash2"
#: Providers a training sub-job may name. "arctic" is what users write; the SDK
#: sends it as "prime_rl" before plugins run, so both spellings are accepted here.
KNOWN_PROVIDERS = ("huggingface", "arctic", "prime_rl", PROVIDER)

ATTENTION_BACKENDS = ("sdpa", "flex_attention", "eager")
#: Every key of the dflash2 block; anything else is refused.
BLOCK_KEYS = (
    "draft_config",
    "init_from",
    "attention_backend",
    "num_anchors",
    "loss_decay_gamma",
    "selector_loss_alpha",
    "selector_stop_gradient",
    "objective_chunk_blocks",
    "seed",
)
#: training_config keys a dflash2 job must leave unset.
FORBIDDEN_KEYS = ("fp32_parity", "fp32_residual", "text_config_overrides")
#: ds_config.bf16 flags a dflash2 job must not enable: the service keeps these states in fp32.
FORBIDDEN_BF16_FLAGS = ("bf16_master_weights_and_grads", "bf16_optimizer_states")
#: training_config keys that ask for Liger kernels, a generic model patch dflash2 refuses.
LIGER_KEYS = ("liger", "use_liger", "use_liger_kernel", "liger_kernel", "apply_liger_kernel")
#: Parallelism a dflash2 job cannot use: data parallelism only, so these stay 1 or unset.
PARALLEL_KEYS = ("sp_size", "ep_size")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _provider_problem(provider: Any, where: str) -> str | None:
    if provider is None or provider in KNOWN_PROVIDERS:
        return None
    if isinstance(provider, str):
        # Catch "DFlash2", "dflash-2", "Prime_RL" and friends with a pointer to the real spelling.
        squashed = provider.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
        for known in KNOWN_PROVIDERS:
            if squashed == known.replace("_", ""):
                return f"{where} must be spelled {known!r}, got {provider!r}"
    return f"{where} must be one of {list(KNOWN_PROVIDERS)}, got {provider!r}"


def _block_problems(block: Any, where: str) -> list[str]:
    if not isinstance(block, Mapping):
        return [f"{where} must be an object with at least draft_config, got {block!r}"]
    problems: list[str] = []
    unknown = sorted(set(block) - set(BLOCK_KEYS))
    if unknown:
        problems.append(f"{where} has unknown key(s) {unknown}; known keys: {list(BLOCK_KEYS)}")
    draft = block.get("draft_config")
    if draft is None:
        problems.append(
            f"{where}.draft_config is required (the draft's config.json contents), even with init_from"
        )
    elif not isinstance(draft, Mapping) or not draft:
        problems.append(f"{where}.draft_config must be a non-empty object (the draft's config.json contents)")
    init_from = block.get("init_from")
    if init_from is not None and (not isinstance(init_from, str) or not init_from.strip()):
        problems.append(f"{where}.init_from must be a non-empty directory path, got {init_from!r}")
    backend = block.get("attention_backend")
    if backend is not None and backend not in ATTENTION_BACKENDS:
        problems.append(
            f"{where}.attention_backend must be one of {list(ATTENTION_BACKENDS)}, got {backend!r}"
        )
    for key in ("num_anchors", "objective_chunk_blocks"):
        value = block.get(key)
        if value is not None and (not _is_int(value) or value <= 0):
            problems.append(f"{where}.{key} must be an integer greater than zero, got {value!r}")
    gamma = block.get("loss_decay_gamma")
    # null is meaningful here: it turns the per-slot decay off.
    if gamma is not None and (not _is_number(gamma) or gamma <= 0):
        problems.append(
            f"{where}.loss_decay_gamma must be greater than zero, or null to disable, got {gamma!r}"
        )
    alpha = block.get("selector_loss_alpha")
    if alpha is not None and (not _is_number(alpha) or alpha < 0):
        problems.append(f"{where}.selector_loss_alpha must be a number of 0 or more, got {alpha!r}")
    stop = block.get("selector_stop_gradient")
    if stop is not None and not isinstance(stop, bool):
        problems.append(f"{where}.selector_stop_gradient must be true or false, got {stop!r}")
    seed = block.get("seed")
    if seed is not None and (not _is_int(seed) or seed < 0):
        problems.append(f"{where}.seed must be an integer of 0 or more, got {seed!r}")
    return problems


def _liger_requested(config: Mapping[str, Any]) -> list[str]:
    """The fields of a training config that request Liger kernels."""
    found = [key for key in LIGER_KEYS if config.get(key) not in (None, False)]
    options = config.get("model_options")
    if isinstance(options, Mapping) and options.get("liger") not in (None, False):
        # model_options.liger false "asks for nothing", so only a non-false value counts.
        found.append("model_options.liger")
    return found


def _dflash2_job_problems(config: Mapping[str, Any], where: str) -> list[str]:
    problems: list[str] = []
    checkpointing = config.get("activation_checkpointing", "<unset>")
    if checkpointing is not False:
        shown = "unset (it defaults to true)" if checkpointing == "<unset>" else repr(checkpointing)
        problems.append(
            f"{where}.activation_checkpointing must be false for model_provider 'dflash2' "
            f"(the draft recomputes its own forward), got {shown}"
        )
    for key in FORBIDDEN_KEYS:
        if config.get(key) is not None:
            problems.append(f"{where}.{key} cannot be set for model_provider 'dflash2'")
    ds_config = config.get("ds_config")
    bf16 = ds_config.get("bf16") if isinstance(ds_config, Mapping) else None
    if isinstance(bf16, Mapping):
        for flag in FORBIDDEN_BF16_FLAGS:
            if bf16.get(flag) not in (None, False):
                problems.append(
                    f"{where}.ds_config.bf16.{flag} cannot be enabled for model_provider 'dflash2' "
                    "(master weights and optimizer states stay fp32)"
                )
    for key in _liger_requested(config):
        problems.append(
            f"{where}.{key} requests a model patch (Liger kernels), which model_provider 'dflash2' refuses"
        )
    for key in PARALLEL_KEYS:
        value = config.get(key)
        if value is not None and value != 1:
            problems.append(
                f"{where}.{key} must be 1 or omitted for model_provider 'dflash2' "
                f"(data parallelism only), got {value!r}"
            )
    return problems


def training_problems(config: Mapping[str, Any], where: str) -> list[str]:
    """Every DFlash2 problem of one training_config; `where` is its location in the body."""
    problems: list[str] = []
    provider = config.get("model_provider")
    provider_problem = _provider_problem(provider, f"{where}.model_provider")
    if provider_problem:
        problems.append(provider_problem)
    has_block = config.get(PROVIDER) is not None
    if provider == PROVIDER:
        if not has_block:
            problems.append(f"{where}.{PROVIDER} is required when model_provider is 'dflash2'")
        else:
            problems.extend(_block_problems(config[PROVIDER], f"{where}.{PROVIDER}"))
        problems.extend(_dflash2_job_problems(config, where))
    elif has_block and provider_problem is None:
        problems.append(
            f"{where}.{PROVIDER} is only accepted with model_provider 'dflash2', "
            f"got model_provider {provider if provider is not None else 'unset'!r}"
        )
    return problems


def speculative_problems(sub_job: Mapping[str, Any], config: Mapping[str, Any], where: str) -> list[str]:
    """The from_source_checkpoint rules for a sub-job's vllm_config.speculative_config."""
    vllm = config.get("vllm_config")
    speculative = vllm.get("speculative_config") if isinstance(vllm, Mapping) else None
    if not isinstance(speculative, Mapping) or "from_source_checkpoint" not in speculative:
        return []
    field = f"{where}.vllm_config.speculative_config"
    flag = speculative["from_source_checkpoint"]
    if flag is None or flag is False:
        return []
    if flag is not True:
        return [f"{field}.from_source_checkpoint must be true or false, got {flag!r}"]
    problems: list[str] = []
    job_type = normalize_job_type(sub_job.get("job_type"))
    if job_type != "sampling":
        problems.append(
            f"{field}.from_source_checkpoint is only accepted on a sampling sub-job, not {job_type!r}"
        )
    if speculative.get("model") is not None:
        problems.append(f"{field}: set either model or from_source_checkpoint to name the draft, not both")
    source = sub_job.get("source_checkpoint_info")
    location = where.rsplit(".", 1)[0] + ".source_checkpoint_info"
    if not isinstance(source, Mapping):
        problems.append(
            f"{field}.from_source_checkpoint needs {location} naming the draft's checkpoint "
            "(checkpoint_id and source_job_id)"
        )
    elif source.get("external_stage_path") is not None:
        problems.append(
            f"{field}.from_source_checkpoint needs a checkpoint saved by Cortex Training; "
            f"{location}.external_stage_path cannot be the draft"
        )
    else:
        # The checkpoint always belongs to another job (the one that trained the draft), and a
        # checkpoint of another job is named by both ids.
        problems.extend(
            f"{field}.from_source_checkpoint needs {location}.{key}"
            for key in ("checkpoint_id", "source_job_id")
            if not source.get(key)
        )
    return problems


def check_sub_job(sub_job: Mapping[str, Any], location: str) -> list[str]:
    """All DFlash2 problems of one create-body sub-job."""
    problems: list[str] = []
    # Every spelling the core accepts ("TRAINING", "job_type_training", ...) counts as its type.
    job_type = normalize_job_type(sub_job.get("job_type"))
    training = sub_job.get("training_config")
    if job_type == "training" and isinstance(training, Mapping):
        problems.extend(training_problems(training, f"{location}.training_config"))
    for key in ("training_config", "inference_config"):
        config = sub_job.get(key)
        if isinstance(config, Mapping):
            problems.extend(speculative_problems(sub_job, config, f"{location}.{key}"))
    return problems
