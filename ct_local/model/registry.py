"""Which model names the local server serves, and by what: the built-in tiny model or real weights.

``ct local serve`` builds one :class:`Registry` at start-up from its flags and installs it for the
whole process (:func:`install`); the models route, the job checks and every sub-job's worker read
it through :func:`current`.

- ``--model NAME`` serves NAME with the built-in tiny model (seeded from the name), as always.
- ``--model NAME=SOURCE`` serves NAME with the Hugging Face causal LM at SOURCE: a folder holding
  ``config.json`` and safetensors weights, or a hub name (``Org/Model``) already in the local
  Hugging Face cache (``HF_HOME`` / ``HF_HUB_CACHE``). The cache is read offline; nothing is ever
  downloaded.
- ``--models-dir DIR`` serves every such folder directly under DIR by its folder name.

Nothing here depends on the architecture: transformers' ``AutoModelForCausalLM`` loads whatever
the folder's ``config.json`` names. Device and dtype (``--device``, ``--dtype``) are resolved once,
and only when real models are served (the tiny model always runs in float32 on the CPU), so a
server of tiny models starts without importing torch.

Importing this module stays cheap: torch and huggingface_hub are imported inside functions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

#: The kinds of weights a served name has.
TINY = "tiny"
HUGGINGFACE = "huggingface"
#: Where a real model's folder came from, as the models route reports it.
ORIGIN_FOLDER = "folder"
ORIGIN_MODELS_DIR = "models dir"
ORIGIN_HF_CACHE = "huggingface cache"
#: The device and dtype choices of ``--device`` and ``--dtype``.
DEVICE_CHOICES = ("auto", "cpu", "cuda", "mps")
DTYPE_CHOICES = ("auto", "float32", "bfloat16", "float16")
#: Files a folder must hold to be served as a real model (weights: any ``*.safetensors``).
CONFIG_FILE = "config.json"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


class RegistryError(ValueError):
    """A model registration the server cannot serve (start-up refuses it)."""


@dataclass(frozen=True)
class ModelEntry:
    """One served model name."""

    name: str
    weights: str = TINY
    path: Path | None = None
    origin: str | None = None
    #: The folder's ``config.json`` (empty for the tiny model).
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_real(self) -> bool:
        return self.weights == HUGGINGFACE

    @property
    def architecture(self) -> str | None:
        names = self.config.get("architectures")
        return str(names[0]) if isinstance(names, list) and names else None

    @property
    def vocab_size(self) -> int | None:
        for section in (self.config, self.config.get("text_config")):
            size = section.get("vocab_size") if isinstance(section, Mapping) else None
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                return size
        return None

    def describe(self) -> dict[str, Any]:
        """The models route's entry for this name."""
        if not self.is_real:
            return {"name": self.name, "weights": TINY}
        entry: dict[str, Any] = {
            "name": self.name,
            "weights": HUGGINGFACE,
            "path": str(self.path),
            "origin": self.origin,
        }
        if self.architecture:
            entry["architecture"] = self.architecture
        return entry


@dataclass(frozen=True)
class Registry:
    """Every served name, with the device and dtype real models run on."""

    entries: Mapping[str, ModelEntry] = field(default_factory=dict)
    device: str = "cpu"
    dtype: str = "float32"
    #: The memory real models' sub-jobs may take on the device (None: not checked).
    memory_bytes: int | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def entry(self, name: str) -> ModelEntry:
        """The entry of ``name``; a name the registry does not know is served by the tiny model."""
        return self.entries.get(name) or ModelEntry(name)

    def real(self, name: str) -> ModelEntry | None:
        found = self.entries.get(name)
        return found if found is not None and found.is_real else None

    @property
    def has_real_models(self) -> bool:
        return any(e.is_real for e in self.entries.values())

    def describe(self) -> list[dict[str, Any]]:
        return [entry.describe() for entry in self.entries.values()]


_LOCK = threading.Lock()
_CURRENT: Registry | None = None


def install(registry: Registry) -> None:
    """Make ``registry`` the one this process serves (``ct local serve`` calls it once at start-up)."""
    global _CURRENT
    with _LOCK:
        _CURRENT = registry


def current() -> Registry | None:
    """The installed registry; None when the server was started without one (tiny models only)."""
    with _LOCK:
        return _CURRENT


def real_entry(model_name: str) -> ModelEntry | None:
    """The real-weights entry of ``model_name`` in the installed registry, or None (tiny model)."""
    registry = current()
    return registry.real(model_name) if registry is not None else None


# --- what is loaded ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedModel:
    """One real model held in memory: its name, where its weights came from, their bytes."""

    model_name: str
    source: str
    bytes: int

    def describe(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "source": self.source, "bytes": self.bytes}


class LoadedModels:
    """The real models this process holds, one entry per model object, from its load until the
    object itself is gone (see ``ct_local.model.hf``, which adds each and drops it when the model is
    collected). Process-wide like the registry: the device's memory is one for every app."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, LoadedModel] = {}
        self._next = 0

    def add(self, entry: LoadedModel) -> int:
        """Count ``entry``; the key :meth:`drop` takes."""
        with self._lock:
            self._next += 1
            self._entries[self._next] = entry
            return self._next

    def drop(self, key: int) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def entries(self) -> list[LoadedModel]:
        with self._lock:
            return list(self._entries.values())

    def describe(self) -> dict[str, Any]:
        """``/healthz``'s ``loaded_models``: how many, their bytes in all, and each one."""
        held = self.entries()
        return {
            "count": len(held),
            "bytes": sum(e.bytes for e in held),
            "models": [e.describe() for e in held],
        }


_LOADED = LoadedModels()


def loaded_models() -> LoadedModels:
    """The account of real models this process holds (see :class:`LoadedModels`)."""
    return _LOADED


# --- building a registry --------------------------------------------------------------------------


def read_model_folder(folder: Path) -> dict[str, Any]:
    """The ``config.json`` of a folder that holds a causal LM; :class:`RegistryError` otherwise."""
    if not folder.is_dir():
        raise RegistryError(f"{folder} is not a folder")
    config_path = folder / CONFIG_FILE
    if not config_path.is_file():
        raise RegistryError(f"{folder} holds no {CONFIG_FILE}, so it is not a Hugging Face model folder")
    if not any(folder.glob("*.safetensors")):
        raise RegistryError(f"{folder} holds no *.safetensors weights (only safetensors are loaded)")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RegistryError(f"{config_path} cannot be read: {exc}") from exc
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        raise RegistryError(f"{config_path} names no model_type")
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise RegistryError(
            f"{folder} holds no tokenizer ({' or '.join(TOKENIZER_FILES)}); "
            "text goes through the model's own tokenizer"
        )
    return config


def looks_like_hub_name(text: str) -> bool:
    parts = text.split("/")
    return len(parts) == 2 and all(parts) and not text.startswith((".", "~"))


def cached_snapshot(repo_id: str) -> Path:
    """The folder of ``repo_id``'s snapshot in the local Hugging Face cache, never downloading."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError) as exc:
        raise RegistryError(
            f"{repo_id} is neither a folder nor in the local Hugging Face cache "
            f"(HF_HOME / HF_HUB_CACHE); the local server never downloads weights: {exc}"
        ) from exc


def resolve_source(name: str, source: str) -> ModelEntry:
    """The entry serving ``name`` from ``source`` (a folder, else a hub name in the local cache)."""
    folder = Path(source).expanduser()
    origin = ORIGIN_FOLDER
    if not folder.exists() and looks_like_hub_name(source):
        folder, origin = cached_snapshot(source), ORIGIN_HF_CACHE
    folder = folder.resolve()
    return ModelEntry(name, HUGGINGFACE, folder, origin, read_model_folder(folder))


def scan_models_dir(directory: Path) -> list[ModelEntry]:
    """An entry for every model folder directly under ``directory``, named by its folder name."""
    if not directory.is_dir():
        raise RegistryError(f"--models-dir {directory} is not a folder")
    found = []
    for child in sorted(directory.iterdir()):
        if child.is_dir() and (child / CONFIG_FILE).is_file():
            resolved = child.resolve()
            found.append(
                ModelEntry(child.name, HUGGINGFACE, resolved, ORIGIN_MODELS_DIR, read_model_folder(resolved))
            )
    return found


def build_registry(
    specs: Iterable[str],
    models_dirs: Iterable[Path] = (),
    *,
    default_names: Iterable[str] = (),
    device: str = "auto",
    dtype: str = "auto",
    memory: str | None = None,
) -> Registry:
    """The registry of ``--model`` specs and ``--models-dir`` folders.

    Without any of either, the ``default_names`` (the catalog's) are served by the tiny model.
    """
    entries: dict[str, ModelEntry] = {}

    def add(entry: ModelEntry) -> None:
        if entry.name in entries:
            raise RegistryError(f"model {entry.name!r} is registered twice")
        entries[entry.name] = entry

    for spec in specs:
        name, sep, source = spec.partition("=")
        name, source = name.strip(), source.strip()
        if not name:
            raise RegistryError(f"--model {spec!r}: the name is empty")
        if sep and not source:
            raise RegistryError(f"--model {spec!r}: give NAME=PATH (a model folder or a cached hub name)")
        add(resolve_source(name, source) if sep else ModelEntry(name))
    for directory in models_dirs:
        for entry in scan_models_dir(Path(directory).expanduser()):
            add(entry)
    if not entries:
        for name in default_names:
            entries.setdefault(name, ModelEntry(name))
    registry = Registry(entries)
    if registry.has_real_models or device != "auto" or dtype != "auto":
        resolved = resolve_device(device)
        limit = parse_memory(memory) if memory is not None else device_memory(resolved)
        registry = Registry(entries, resolved, resolve_dtype(dtype, resolved), limit)
    return registry


# --- device and dtype -----------------------------------------------------------------------------


def resolve_device(choice: str) -> str:
    """``auto``: CUDA, then MPS, then the CPU; an explicit device must exist on this machine."""
    import torch

    text = choice.strip().lower()
    base = text.split(":", 1)[0]
    if base not in DEVICE_CHOICES or (base != "cuda" and ":" in text):
        raise RegistryError(f"--device must be auto, cpu, cuda, cuda:N or mps, got {choice!r}")
    if base == "auto":
        if torch.cuda.is_available():
            return "cuda:0"
        if torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if base == "cuda":
        if not torch.cuda.is_available():
            raise RegistryError("--device cuda: no CUDA device is available on this machine")
        index = text.split(":", 1)[1] if ":" in text else "0"
        if not index.isdigit() or int(index) >= torch.cuda.device_count():
            raise RegistryError(
                f"--device {choice}: this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
        return f"cuda:{int(index)}"
    if base == "mps" and not torch.backends.mps.is_available():
        raise RegistryError("--device mps: MPS is not available on this machine")
    return base


def resolve_dtype(choice: str, device: str) -> str:
    """``auto``: bfloat16 where the device computes in it, float32 on the CPU."""
    text = choice.strip().lower()
    if text not in DTYPE_CHOICES:
        raise RegistryError(f"--dtype must be one of {', '.join(DTYPE_CHOICES)}, got {choice!r}")
    if text != "auto":
        return text
    if device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    if device == "mps":
        return "bfloat16"
    return "float32"


def vocab_size_of(sub_job: Mapping[str, Any]) -> int | None:
    """The vocabulary size of a sub-job's model when its name is served with real weights."""
    entry = real_entry(str(sub_job.get("model_name") or ""))
    return entry.vocab_size if entry is not None else None


# --- memory ---------------------------------------------------------------------------------------

#: Bytes per element of each dtype the server runs real models in.
DTYPE_BYTES: Mapping[str, int] = MappingProxyType({"float32": 4, "bfloat16": 2, "float16": 2})
#: Bytes of safetensors' element types, to count parameters from the file headers.
#: Activation bytes kept for backward per token, per layer, per hidden unit, in units of the dtype
#: (attention and MLP inputs, norms, the MLP's wider intermediate): a rough, generous constant.
ACTIVATION_FACTOR = 34
#: The sequence length assumed for a sub-job that sets no max_seq_len.
DEFAULT_ESTIMATE_SEQ_LEN = 2048
#: Prompts a sampler decodes together (ct_local.model.sampler.MAX_BATCH_PROMPTS), for its cache.
SAMPLING_BATCH = 64
_MEMORY_UNITS: Mapping[str, int] = MappingProxyType(
    {
        **{"": 1, "b": 1, "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4},
        **{"kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4},
    }
)


def parse_memory(text: str) -> int:
    """``--device-memory``: bytes, or a number with KiB/MiB/GiB/TiB (or KB/MB/GB/TB)."""
    value = text.strip().lower().replace(" ", "")
    number = value.rstrip("kmgtib")
    unit = value[len(number) :]
    try:
        amount = float(number)
    except ValueError as exc:
        raise RegistryError(f"--device-memory {text!r}: expected e.g. 24GiB or a number of bytes") from exc
    if unit not in _MEMORY_UNITS or amount <= 0:
        raise RegistryError(f"--device-memory {text!r}: expected e.g. 24GiB or a number of bytes")
    return int(amount * _MEMORY_UNITS[unit])


def shown_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def parameter_count(folder: Path) -> int:
    """The parameters of the safetensors files in ``folder``, read from their headers only."""
    total = 0
    for path in sorted(folder.glob("*.safetensors")):
        with path.open("rb") as f:
            size = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(size))
        for name, info in header.items():
            if name == "__metadata__" or not isinstance(info, dict):
                continue
            count = 1
            for dim in info.get("shape", []):
                count *= int(dim)
            total += count
    return total


def _config_int(config: Mapping[str, Any], key: str, default: int) -> int:
    for section in (config, config.get("text_config")):
        value = section.get(key) if isinstance(section, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return default


def estimate_bytes(entry: ModelEntry, sub_job: Mapping[str, Any], dtype: str) -> int:
    """A generous estimate of the memory a sub-job of ``entry`` needs on its device.

    Training: weights, their gradients and two AdamW moments (only the adapter's, about 1 % of the
    weights, with LoRA), plus activations for one sequence of ``max_seq_len`` and its float32
    logits. Sampling: weights plus the key/value cache of a full batch at ``max_seq_len``.
    """
    assert entry.path is not None
    width = DTYPE_BYTES[dtype]
    params = parameter_count(entry.path)
    weights = params * width
    hidden = _config_int(entry.config, "hidden_size", 1)
    layers = _config_int(entry.config, "num_hidden_layers", 1)
    vocab = entry.vocab_size or 1
    heads = _config_int(entry.config, "num_attention_heads", 1)
    kv_heads = _config_int(entry.config, "num_key_value_heads", heads)
    head_dim = _config_int(entry.config, "head_dim", max(hidden // heads, 1))
    section = "training_config" if sub_job.get("job_type") == "training" else "inference_config"
    config = sub_job.get(section)
    config = config if isinstance(config, Mapping) else {}
    seq = config.get("max_seq_len")
    seq = (
        int(seq)
        if isinstance(seq, int | float) and not isinstance(seq, bool) and seq > 0
        else DEFAULT_ESTIMATE_SEQ_LEN
    )
    if sub_job.get("job_type") == "training":
        trained = params // 100 if config.get("peft_config") else params
        states = trained * width * 3  # gradients and AdamW's two moments
        activations = ACTIVATION_FACTOR * seq * hidden * layers * width + seq * vocab * 4
        return weights + states + activations
    cache = 2 * layers * kv_heads * head_dim * seq * width * SAMPLING_BATCH
    return weights + cache


def memory_problems(sub_jobs: Iterable[Mapping[str, Any]]) -> list[str]:
    """Why each sub-job of a real model would not fit the memory the server may use (none: fits)."""
    served = current()
    if served is None or served.memory_bytes is None:
        return []
    problems = []
    for sub in sub_jobs:
        entry = served.real(str(sub.get("model_name") or ""))
        if entry is None:
            continue
        need = estimate_bytes(entry, sub, served.dtype)
        if need > served.memory_bytes:
            problems.append(
                f"{sub.get('job_type')} sub-job of {entry.name} needs about {shown_bytes(need)} of "
                f"{served.device} memory in {served.dtype}, more than the {shown_bytes(served.memory_bytes)} "
                "this server may use; shorten max_seq_len, use LoRA, a smaller model or --dtype bfloat16"
            )
    return problems


def device_memory(device: str) -> int | None:
    """The memory of ``device``: a CUDA device's total, else the machine's physical memory."""
    if device.startswith("cuda"):
        import torch

        return int(torch.cuda.get_device_properties(torch.device(device)).total_memory)
    try:
        import os

        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None
