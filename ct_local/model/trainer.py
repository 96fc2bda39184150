"""The training backend of one sub-job: forward-backward, optimizer step, save, load, forward.

One :class:`Trainer` holds the model, the optimizer and the bookkeeping a real trainer reports
(global step count, the last forward-backward loss). A worker thread owns it and calls one method
per request, in arrival order; nothing here is thread-safe on purpose.

Batch layout: ``{"args": (), "kwargs": {"input_ids", "labels", ...}}`` with
labels already aligned to the predictions, as the reference's next-token helper builds them
(``labels[:, i]`` is the target of position ``i``; ``-100`` is ignored). An optional ``loss_mask``
(in kwargs or ``context``) weights each position. Forward returns log-probabilities in the shifted
convention: ``logprobs[:, i]`` is the log-probability of ``input_ids[:, i + 1]``.

LoRA: a sub-job whose config carries ``peft_config`` wraps the model with peft, so
only the adapter tensors train (the optimizer holds just those). Checkpoints stay loadable by a
plain model: a weights-only save writes the merged weights (base + adapter), which is what a
sampler or a deployment started from it serves; a resumable save writes the unmerged base
weights plus the adapter in ``adapter/`` and the optimizer state over the adapter tensors, so a
load restores the adapter itself. The helpers below translate between peft's tensor names and the
plain Hugging Face ones, for saving and for weight sync.
"""

from __future__ import annotations

import copy
import math
import resource
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import torch

from ct_local.model import hf, tinylm
from ct_local.model.training_spec import (
    CROSS_ENTROPY_LOSS_FNS,
    IGNORE_INDEX,
    LOSS_REDUCTIONS,
    PPO_CLIP_HIGH,
    PPO_CLIP_LOW,
    SUPPORTED_LOSS_FNS,
    TrainingSpec,
)

# Model kwargs passed to the model as given; rr_* router-replay inputs are accepted and ignored
# (the tiny model has no experts to replay).
_MODEL_KWARGS = frozenset({"input_ids", "attention_mask", "position_ids"})
_LOSS_KWARGS = frozenset({"labels", "loss_mask"})
# Per-token tensors a batch's context may carry (label-aligned, like labels): the weights of the
# cross-entropy, and the sampler's log-probabilities and the advantages of the policy losses.
_CONTEXT_TENSORS = frozenset({"loss_mask", "sampling_logprobs", "advantages"})
# processing.config keys, and what processing.post may ask for: "logprobs" adds each target's
# log-probability (label-aligned, 0 where no label) to the result's post_process_outputs.
_LOSS_CONFIG_KEYS = frozenset({"reduction", "clip_low_threshold", "clip_high_threshold"})
POST_LOGPROBS = "logprobs"
# processing.optimizer of a forward: Adam settings from that request on (betas, eps, weight_decay),
# and grad_clip_norm, the norm each later step clips gradients to (0: no clipping). A caller
# whose optimizer settings change per step (Tinker's AdamParams) sends them before its step.
_OPTIMIZER_SETTINGS = frozenset({"betas", "eps", "weight_decay", "grad_clip_norm"})


# The client's defaults of a normalized peft_config, applied here too for raw bodies.
LORA_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"r": 8, "lora_alpha": 8, "lora_dropout": 0.0, "bias": "none"}
)
# Where a resumable LoRA checkpoint keeps its adapter (a subfolder, so weight_files() skips it).
ADAPTER_FOLDER = "adapter"
ADAPTER_FILE = "adapter.safetensors"
_PEFT_PREFIX = "base_model.model."


def peft_config_of(sub_job: dict[str, Any]) -> dict[str, Any] | None:
    """The sub-job's peft_config (training_config or inference_config), or None without LoRA."""
    for section in ("training_config", "inference_config"):
        config = sub_job.get(section)
        if isinstance(config, dict) and isinstance(config.get("peft_config"), dict) and config["peft_config"]:
            return dict(config["peft_config"])
    return None


#: Seed of the adapter's random initialisation (the B matrices start at zero either way).
LORA_INIT_SEED = 1234


def with_lora(model: torch.nn.Module, peft_config: dict[str, Any]) -> torch.nn.Module:
    """Wrap ``model`` with a LoRA adapter; only the adapter tensors keep requires_grad."""
    import peft

    given = {k: v for k, v in peft_config.items() if k != "peft_type" and v is not None}
    # Without target_modules every linear layer but the output head gets an adapter, whatever the
    # architecture (no per-model table of layer names).
    values = {**LORA_DEFAULTS, "task_type": "CAUSAL_LM", "target_modules": "all-linear", **given}
    try:
        config = peft.LoraConfig(**values)
        # peft draws the A matrices from torch's global generator; a fixed seed keeps a LoRA job's
        # training as reproducible as the seeded base model.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(LORA_INIT_SEED)
            wrapped: torch.nn.Module = peft.get_peft_model(model, config)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise RuntimeError(f"peft_config cannot be applied to this model: {exc}") from exc
    return wrapped


def is_lora(model: torch.nn.Module) -> bool:
    return hasattr(model, "peft_config") and hasattr(model, "get_base_model")


def _plain_name(name: str) -> str:
    return name.removeprefix(_PEFT_PREFIX).replace(".base_layer.", ".")


def adapter_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The LoRA A/B tensors of a wrapped model, named without peft's outer prefix."""
    return {
        name.removeprefix(_PEFT_PREFIX): t.detach().clone()
        for name, t in model.state_dict().items()
        if ".lora_" in name
    }


def load_adapter(model: torch.nn.Module, tensors: dict[str, torch.Tensor]) -> None:
    """Copy adapter tensors (as :func:`adapter_tensors` names them) into a wrapped model."""
    own = {name.removeprefix(_PEFT_PREFIX): name for name in model.state_dict() if ".lora_" in name}
    if set(own) != set(tensors):
        raise ValueError("the adapter tensors do not match this model's LoRA layers")
    # The name sets are equal, so the only "missing" keys are the base weights, which stay as they are.
    model.load_state_dict({own[k]: v for k, v in tensors.items()}, strict=False)


def full_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Full-model weights under plain names; a LoRA model contributes its merged weights."""
    if is_lora(model):
        merged = copy.deepcopy(model).merge_and_unload()  # type: ignore[operator]
        return {name: t.detach().clone() for name, t in merged.state_dict().items()}
    return {name: t.detach().clone() for name, t in model.state_dict().items()}


def load_full(model: torch.nn.Module, tensors: dict[str, torch.Tensor]) -> None:
    """Load plain full-model weights; a LoRA model takes them as its base and restarts its adapter at zero."""
    if not is_lora(model):
        model.load_state_dict(tensors)
        return
    names = {_plain_name(n): n for n in model.state_dict() if ".lora_" not in n}
    renamed = {names[k]: v for k, v in tensors.items() if k in names}
    model.load_state_dict(renamed, strict=False)
    _zero_adapter(model)


def _zero_adapter(model: torch.nn.Module) -> None:
    # peft starts B at zero, so a zero B makes the adapter a no-op until it trains again.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".lora_B." in name:
                p.zero_()


class RequestError(ValueError):
    """A request the backend refuses; its message becomes the request's ``error``."""


def _loss_options(processing: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """processing's loss name (lower-cased; cross-entropy when absent) and its checked config."""
    raw = processing.get("loss_fn")
    loss_fn = "cross_entropy" if raw is None else str(raw).lower()
    if loss_fn not in SUPPORTED_LOSS_FNS:
        raise RequestError(
            f"unknown processing.loss_fn {raw!r}: this local server supports {', '.join(SUPPORTED_LOSS_FNS)}"
        )
    given = processing.get("config") or {}
    if not isinstance(given, dict):
        raise RequestError("processing.config must be a dict")
    unknown = sorted(str(k) for k in given if k not in _LOSS_CONFIG_KEYS)
    if unknown:
        raise RequestError(f"unsupported processing.config keys: {', '.join(unknown)}")
    reduction = str(given.get("reduction", "mean")).lower()
    if reduction not in LOSS_REDUCTIONS:
        raise RequestError(f"processing.config.reduction must be one of {', '.join(LOSS_REDUCTIONS)}")
    config: dict[str, Any] = {"reduction": reduction}
    if loss_fn == "ppo":
        bounds = []
        for key, default in (("clip_low_threshold", PPO_CLIP_LOW), ("clip_high_threshold", PPO_CLIP_HIGH)):
            value = given.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise RequestError(f"processing.config.{key} must be a finite number")
            bounds.append(float(value))
        if not 0 <= bounds[0] <= bounds[1]:
            raise RequestError("ppo needs 0 <= clip_low_threshold <= clip_high_threshold")
        config["clip_low_threshold"], config["clip_high_threshold"] = bounds
    elif "clip_low_threshold" in given or "clip_high_threshold" in given:
        raise RequestError(f"clip thresholds apply to ppo only, not to {loss_fn}")
    post = processing.get("post") or []
    if not isinstance(post, list | tuple) or any(p != POST_LOGPROBS for p in post):
        raise RequestError(f"processing.post may only ask for {POST_LOGPROBS!r}")
    return loss_fn, config


def _finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _post(processing: dict[str, Any], target_logprobs: torch.Tensor) -> dict[str, Any]:
    """The post_process_outputs processing.post asks for."""
    if POST_LOGPROBS in (processing.get("post") or []):
        return {POST_LOGPROBS: target_logprobs.detach().float().cpu().contiguous()}
    return {}


def _tensor(value: Any, name: str, dtype: torch.dtype) -> torch.Tensor:
    try:
        tensor = value if torch.is_tensor(value) else torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise RequestError(f"{name} must be a tensor or a nested list of numbers: {exc}") from exc
    if tensor.ndim == 1:
        tensor = tensor.unsqueeze(0)
    if tensor.ndim != 2:
        raise RequestError(f"{name} must have shape [batch, sequence], got {tuple(tensor.shape)}")
    return tensor.to(dtype)


def _current_rss() -> int:
    """This process's resident set size in bytes (a step reports it as peak_memory.cpu_peak)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
        return pages * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


class Trainer:
    """Model + optimizer of one training sub-job."""

    def __init__(
        self, spec: TrainingSpec, model: torch.nn.Module, peft_config: dict[str, Any] | None = None
    ) -> None:
        self.spec = spec
        self.model = with_lora(model, peft_config) if peft_config else model
        self.model.train()
        self.optimizer = self._new_optimizer()
        self.global_steps = 0
        self.last_avg_loss: float | None = None
        self._accumulated_calls = 0
        #: The clipping norm processing.optimizer set (0: none), or None for the spec's.
        self.grad_clip_norm: float | None = None

    # --- setup --------------------------------------------------------------------------------

    def _new_optimizer(self) -> torch.optim.Optimizer:
        o = self.spec.optimizer
        params = [p for p in self.model.parameters() if p.requires_grad]
        if o.name == "sgd":
            return torch.optim.SGD(params, lr=o.lr, momentum=o.momentum, weight_decay=o.weight_decay)
        cls = torch.optim.AdamW if o.name == "adamw" else torch.optim.Adam
        return cls(params, lr=o.lr, betas=o.betas, eps=o.eps, weight_decay=o.weight_decay)

    @property
    def device(self) -> torch.device:
        """Where the model's weights are (real models may run on a GPU; the tiny model on the CPU)."""
        return next(self.model.parameters()).device

    def vocab_size(self) -> int:
        return int(self.model.get_input_embeddings().weight.shape[0])  # type: ignore[operator]

    # --- batches ------------------------------------------------------------------------------

    def _read_batch(self, batch: Any) -> tuple[dict[str, torch.Tensor], dict[str, Any], dict[str, Any]]:
        if not isinstance(batch, dict):
            raise RequestError("the batch must be a dict with args and kwargs")
        args = batch.get("args") or ()
        if len(args):
            raise RequestError("positional args are not supported; send model inputs under kwargs")
        kwargs = batch.get("kwargs") or {}
        if not isinstance(kwargs, dict):
            raise RequestError("batch kwargs must be a dict")
        context = batch.get("context") or {}
        processing = batch.get("processing") or {}
        if not isinstance(context, dict) or not isinstance(processing, dict):
            raise RequestError("batch context and processing must be dicts")
        unknown = sorted(
            k for k in kwargs if k not in _MODEL_KWARGS | _LOSS_KWARGS and not k.startswith("rr_")
        )
        if unknown:
            raise RequestError(f"unsupported model kwargs: {', '.join(unknown)}")
        if "input_ids" not in kwargs:
            raise RequestError("kwargs.input_ids is required")
        inputs = {"input_ids": _tensor(kwargs["input_ids"], "input_ids", torch.long)}
        for name in ("attention_mask", "position_ids"):
            if kwargs.get(name) is not None:
                inputs[name] = _tensor(kwargs[name], name, torch.long)
                if inputs[name].shape != inputs["input_ids"].shape:
                    raise RequestError(f"{name} must have the shape of input_ids")
        ids = inputs["input_ids"]
        if ids.numel() == 0:
            raise RequestError("input_ids is empty")
        vocab = self.vocab_size()
        if int(ids.min()) < 0 or int(ids.max()) >= vocab:
            raise RequestError(f"input_ids must lie in [0, {vocab}) for this model")
        limit = self.spec.max_seq_len
        if limit is not None and ids.shape[1] > limit:
            raise RequestError(f"sequence length {ids.shape[1]} exceeds the sub-job's max_seq_len of {limit}")
        placed = {name: tensor.to(self.device) for name, tensor in inputs.items()}
        unknown_context = sorted(k for k in context if k not in _CONTEXT_TENSORS)
        if unknown_context:
            raise RequestError(f"unsupported batch context keys: {', '.join(unknown_context)}")
        return placed, {**kwargs, **context}, processing

    def _per_token(self, name: str, value: Any, like: torch.Tensor) -> torch.Tensor:
        tensor = _tensor(value, name, torch.float32).to(like.device)
        if tensor.shape != like.shape:
            raise RequestError(f"{name} must have the shape of labels {tuple(like.shape)}")
        if not bool(torch.isfinite(tensor).all()):
            raise RequestError(f"{name} must be finite")
        return tensor

    def _loss(
        self, logits: torch.Tensor, extras: dict[str, Any], processing: dict[str, Any]
    ) -> tuple[torch.Tensor, int, torch.Tensor]:
        """The loss processing.loss_fn names, the number of positions it trains, and every label's
        log-probability (0 where there is none; label-aligned, with the graph kept)."""
        loss_fn, config = _loss_options(processing)
        if extras.get("labels") is None:
            raise RequestError("kwargs.labels is required for forward-backward")
        labels = _tensor(extras["labels"], "labels", torch.long).to(logits.device)
        if labels.shape != logits.shape[:2]:
            raise RequestError(f"labels must have the shape of input_ids {tuple(logits.shape[:2])}")
        present = labels != IGNORE_INDEX
        targets = labels[present]
        vocab = logits.shape[-1]
        if targets.numel() and (int(targets.min()) < 0 or int(targets.max()) >= vocab):
            raise RequestError(f"labels must lie in [0, {vocab}) or be {IGNORE_INDEX} for this model")
        chosen = torch.log_softmax(logits, dim=-1).gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        valid = present.to(chosen.dtype)
        if "attention_mask" in extras and extras["attention_mask"] is not None:
            attention = _tensor(extras["attention_mask"], "attention_mask", chosen.dtype)
            valid = valid * attention.to(logits.device)
        target_logprobs = torch.where(valid > 0, chosen, torch.zeros_like(chosen))
        if float(valid.sum()) <= 0:
            raise RequestError("no position carries a label: every label is -100 or masked out")
        if loss_fn in CROSS_ENTROPY_LOSS_FNS:
            weights = valid
            if extras.get("loss_mask") is not None:
                weights = weights * self._per_token("loss_mask", extras["loss_mask"], chosen)
            summed = -(target_logprobs * weights).sum()
            tokens = int((weights != 0).sum())
            if config["reduction"] == "sum":
                return summed, tokens, target_logprobs
            total = weights.sum()
            if float(total) <= 0:
                raise RequestError("no position carries a label: every label is -100 or masked out")
            return summed / total, tokens, target_logprobs
        # The policy losses: ratio = exp(logprob - sampling logprob) at each target, times its advantage.
        for name in ("sampling_logprobs", "advantages"):
            if extras.get(name) is None:
                raise RequestError(f"loss_fn {loss_fn} needs context.{name}")
        sampling = self._per_token("sampling_logprobs", extras["sampling_logprobs"], chosen)
        advantages = self._per_token("advantages", extras["advantages"], chosen)
        ratio = torch.exp(target_logprobs - torch.where(valid > 0, sampling, torch.zeros_like(sampling)))
        objective = ratio * advantages
        if loss_fn == "ppo":
            clipped = torch.clamp(ratio, config["clip_low_threshold"], config["clip_high_threshold"])
            objective = torch.minimum(objective, clipped * advantages)
        summed = -(objective * valid).sum()
        tokens = int(valid.sum())
        loss = summed if config["reduction"] == "sum" else summed / tokens
        return loss, tokens, target_logprobs

    # --- requests -----------------------------------------------------------------------------

    def forward_backward(self, batch: Any) -> dict[str, Any]:
        inputs, extras, processing = self._read_batch(batch)
        _loss_options(processing)  # a bad loss is refused before the model runs
        self.model.train()
        logits = self.model(**inputs).logits
        loss, tokens, target_logprobs = self._loss(logits.float(), extras, processing)
        value = float(loss.detach())
        # Refused before backward, so a failed request adds nothing to the accumulated gradients.
        if not math.isfinite(value):
            raise RequestError(f"the loss is not finite ({value})")
        loss.backward()
        self._accumulated_calls += 1
        self.last_avg_loss = value
        metrics = {
            "loss": value,
            "num_tokens": tokens,
            "num_sequences": int(inputs["input_ids"].shape[0]),
            "accumulated_calls": self._accumulated_calls,
        }
        return {
            "avg_loss": value,
            "metrics": metrics,
            "post_process_outputs": _post(processing, target_logprobs),
        }

    def step(self, learning_rate: float | None) -> dict[str, Any]:
        configured = [group["lr"] for group in self.optimizer.param_groups]
        if learning_rate is not None:
            for group in self.optimizer.param_groups:
                group["lr"] = learning_rate
        result: dict[str, Any] = {}
        clip = self.spec.gradient_clipping if self.grad_clip_norm is None else self.grad_clip_norm or None
        if clip is not None:
            params = [p for p in self.model.parameters() if p.grad is not None]
            norm = torch.nn.utils.clip_grad_norm_(params, clip) if params else 0.0
            result["grad_norm"] = float(norm)
        used = self.optimizer.param_groups[0]["lr"]
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        # A per-step lr applies to this step only; the next one without lr uses the job's setting.
        for group, lr in zip(self.optimizer.param_groups, configured, strict=True):
            group["lr"] = lr
        self._accumulated_calls = 0
        self.global_steps += 1
        result.update({"global_steps": self.global_steps, "last_lr": float(used)})
        if self.spec.step_peak_memory_log:
            gpu = int(torch.cuda.max_memory_allocated()) if torch.cuda.is_available() else 0
            result["peak_memory"] = {"gpu_peak": gpu, "cpu_peak": _current_rss()}
        return result

    def set_optimizer(self, settings: Any) -> dict[str, Any]:
        """Apply processing.optimizer (see _OPTIMIZER_SETTINGS); returns what now holds."""
        if not isinstance(settings, dict):
            raise RequestError("processing.optimizer must be a dict")
        unknown = sorted(str(k) for k in settings if k not in _OPTIMIZER_SETTINGS)
        if unknown:
            raise RequestError(f"unsupported processing.optimizer keys: {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for key in ("eps", "weight_decay", "grad_clip_norm"):
            if key in settings:
                value = settings[key]
                if not _finite_number(value):
                    raise RequestError(f"processing.optimizer.{key} must be a finite number")
                if value < 0:
                    raise RequestError(f"processing.optimizer.{key} must be >= 0")
                values[key] = float(value)
        if "betas" in settings:
            betas = settings["betas"]
            if (
                not isinstance(betas, list | tuple)
                or len(betas) != 2
                or not all(_finite_number(b) and 0 <= b < 1 for b in betas)
            ):
                raise RequestError("processing.optimizer.betas must be two numbers in [0, 1)")
            values["betas"] = (float(betas[0]), float(betas[1]))
        adam_only = {"betas", "eps"} & set(values)
        if adam_only and self.spec.optimizer.name == "sgd":
            raise RequestError(f"{', '.join(sorted(adam_only))} apply to Adam, not to this job's SGD")
        if "grad_clip_norm" in values:
            self.grad_clip_norm = values.pop("grad_clip_norm")
        for group in self.optimizer.param_groups:
            group.update(values)
        group = self.optimizer.param_groups[0]
        applied: dict[str, Any] = {k: group[k] for k in ("eps", "weight_decay", "betas") if k in group}
        return {**applied, "grad_clip_norm": self.grad_clip_norm}

    def forward(self, batch: Any) -> dict[str, Any]:
        inputs, extras, processing = self._read_batch(batch)
        if processing.get("optimizer") is not None:
            # Before the pass: settings the trainer refuses fail the request and change nothing.
            self.set_optimizer(processing["optimizer"])
        self.model.eval()
        try:
            with torch.no_grad():
                logits = self.model(**inputs).logits.float()
        finally:
            self.model.train()
        ids = inputs["input_ids"]
        logprobs = (
            torch.log_softmax(logits[:, :-1, :], dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        )
        result: dict[str, Any] = {"logprobs": logprobs.cpu().contiguous()}
        if extras.get("labels") is not None:
            loss, tokens, target_logprobs = self._loss(logits, extras, processing)
            result["avg_loss"] = float(loss)
            result["metrics"] = {"num_tokens": tokens}
            result["post_process_outputs"] = _post(processing, target_logprobs)
        return result

    # --- the whole state, for snapshots -----------------------------------------------------------

    def base_config(self) -> dict[str, Any]:
        """The architecture of the (unwrapped) model, enough to build an untrained copy of it."""
        base = self.model.get_base_model() if is_lora(self.model) else self.model  # type: ignore[operator]
        config: dict[str, Any] = base.config.to_dict()  # type: ignore[union-attr,operator]
        return config

    def state_nbytes(self) -> int:
        """Bytes of everything :meth:`state` holds: weights, optimizer tensors, pending gradients."""
        total = sum(t.numel() * t.element_size() for t in self.model.state_dict().values())
        for entry in self.optimizer.state.values():
            total += sum(v.numel() * v.element_size() for v in entry.values() if torch.is_tensor(v))
        total += sum(
            p.grad.numel() * p.grad.element_size() for p in self.model.parameters() if p.grad is not None
        )
        return int(total)

    def state(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """Every tensor and number that decides what the next request does, to restore exactly."""
        tensors: dict[str, torch.Tensor] = {f"model.{k}": v for k, v in self.model.state_dict().items()}
        optimizer_tensors, rest = tinylm.flatten_optimizer(self.optimizer.state_dict())
        tensors.update({f"optim.{k}": v for k, v in optimizer_tensors.items()})
        for name, p in self.model.named_parameters():
            if p.grad is not None:
                tensors[f"grad.{name}"] = p.grad
        numbers = {
            "global_steps": self.global_steps,
            "last_avg_loss": self.last_avg_loss,
            "accumulated_calls": self._accumulated_calls,
            "optimizer": rest,
            "grad_clip_norm": self.grad_clip_norm,
        }
        return tensors, numbers

    def restore(self, tensors: dict[str, torch.Tensor], numbers: dict[str, Any]) -> None:
        """Put back what :meth:`state` returned (on a trainer built for the same model and spec)."""

        def section(prefix: str) -> dict[str, torch.Tensor]:
            return {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}

        self.model.load_state_dict(section("model."), strict=True)
        self.optimizer = self._new_optimizer()
        self.optimizer.load_state_dict(tinylm.unflatten_optimizer(section("optim."), numbers["optimizer"]))
        grads = section("grad.")
        for name, p in self.model.named_parameters():
            p.grad = grads.get(name)
        self.global_steps = int(numbers["global_steps"])
        loss = numbers.get("last_avg_loss")
        self.last_avg_loss = float(loss) if isinstance(loss, int | float) else None
        self._accumulated_calls = int(numbers.get("accumulated_calls") or 0)
        clip = numbers.get("grad_clip_norm")
        self.grad_clip_norm = float(clip) if isinstance(clip, int | float) else None

    def save(self, folder: Path, checkpoint_type: str) -> None:
        state = {
            "global_steps": self.global_steps,
            "avg_loss": self.last_avg_loss,
            "model_name": self.spec.model_name,
        }
        optimizer = self.optimizer if checkpoint_type == "resumable" else None
        # A real model's checkpoint also carries its tokenizer files (and chat template).
        hf.with_tokenizer(folder, self.spec.model_name, lambda target: self._write(target, optimizer, state))

    def _write(self, folder: Path, optimizer: torch.optim.Optimizer | None, state: dict[str, Any]) -> None:
        if not is_lora(self.model):
            tinylm.write_checkpoint(folder, self.model, optimizer=optimizer, trainer_state=state)
            return
        if optimizer is None:
            merged = copy.deepcopy(self.model).merge_and_unload()  # type: ignore[operator]
            tinylm.write_checkpoint(folder, merged, optimizer=None, trainer_state=state)
            return
        base = copy.deepcopy(self.model).unload()  # type: ignore[operator]
        extra = {f"{ADAPTER_FOLDER}/{ADAPTER_FILE}": adapter_tensors(self.model)}
        tinylm.write_checkpoint(folder, base, optimizer=optimizer, trainer_state=state, extra=extra)

    def load(self, folder: Path, *, with_optimizer: bool) -> dict[str, Any]:
        """Restore weights (and optimizer state when asked and present); pending gradients are dropped."""
        if is_lora(self.model):
            self._load_lora(folder)
        else:
            tinylm.load_weights(self.model, folder)
        self.optimizer.zero_grad(set_to_none=True)
        self._accumulated_calls = 0
        self.optimizer = self._new_optimizer()
        state = tinylm.read_trainer_state(folder)
        restored = with_optimizer and tinylm.load_optimizer_state(self.optimizer, folder)
        if restored:
            self.global_steps = int(state.get("global_steps") or 0)
        loss = state.get("avg_loss")
        self.last_avg_loss = float(loss) if isinstance(loss, int | float) else None
        return {"loaded_optimizer_states": bool(restored), "global_steps": self.global_steps}

    def _load_lora(self, folder: Path) -> None:
        """Base weights from the folder; the adapter too when it holds one, else a fresh (zero) one."""
        from safetensors.torch import load_file

        state: dict[str, torch.Tensor] = {}
        for path in tinylm.weight_files(folder):
            state.update(load_file(str(path)))
        if not state:
            raise ValueError(f"no safetensors weights in {folder}")
        base = {_plain_name(n) for n in self.model.state_dict() if ".lora_" not in n}
        missing = sorted(base - set(state) - {"lm_head.weight"})
        unexpected = sorted(set(state) - base)
        if missing or unexpected:
            raise ValueError(
                f"checkpoint does not match the model: missing {missing[:5]}, unexpected {unexpected[:5]}"
            )
        load_full(self.model, state)
        adapter = folder / ADAPTER_FOLDER / ADAPTER_FILE
        if adapter.is_file():
            load_adapter(self.model, load_file(str(adapter)))
