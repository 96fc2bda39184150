"""Loading real Hugging Face causal LMs and their tokenizers for the local server's sub-jobs.

Which names are real and where their folders are is :mod:`ct_local.model.registry`'s business;
this module turns a folder into a model on the registry's device and dtype, a tokenizer, and
writes the tokenizer files next to saved weights so a weights-only checkpoint is a complete
Hugging Face folder (``AutoModelForCausalLM.from_pretrained`` and ``AutoTokenizer`` load it as is,
chat template included).

Everything goes through the Auto classes: no architecture is special here. Imported only by worker
threads (it imports torch).
"""

from __future__ import annotations

import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

import torch

from ct_core.fs import atomic_replace
from ct_local.model import registry, tinylm

#: The files of a tokenizer (and its chat template) that travel with saved weights.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
    "generation_config.json",
)
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# transformers resolves its Auto classes lazily; one thread at a time (see tinylm._IMPORT_LOCK).
_TOKENIZER_LOCK = threading.Lock()


def placement() -> tuple[str, torch.dtype]:
    """The device and dtype real models run on (the CPU in float32 without a registry)."""
    served = registry.current() or registry.Registry()
    return served.device, _DTYPES[served.dtype]


def place(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` moved to the registry's device and dtype."""
    device, dtype = placement()
    return model.to(device=device, dtype=dtype)


def load_model(folder: Path) -> torch.nn.Module:
    """The causal LM in ``folder``, on the registry's device and dtype (offline, safetensors only)."""
    device, dtype = placement()
    auto = tinylm._hf("AutoModelForCausalLM")
    model: torch.nn.Module = auto.from_pretrained(
        str(folder), local_files_only=True, use_safetensors=True, dtype=dtype
    )
    return model.to(device)


def load_for(model_name: str, folder: Path) -> torch.nn.Module:
    """The weights in ``folder`` as a model of ``model_name``: placed like a real model when the
    name is served with real weights, else as the tiny model (float32, CPU)."""
    if registry.real_entry(model_name) is not None:
        return load_model(folder)
    return tinylm.load_pretrained(folder)


def base_model(model_name: str) -> tuple[torch.nn.Module, str]:
    """The untrained model a sub-job of ``model_name`` starts from, and how to say where it came from."""
    entry = registry.real_entry(model_name)
    if entry is None or entry.path is None:
        return tinylm.build_model(model_name), f"{model_name} (tiny local model, seeded from its name)"
    return load_model(entry.path), f"{model_name} ({entry.architecture} weights from {entry.path})"


def load_tokenizer(folder: Path) -> Any:
    """The tokenizer saved in ``folder`` (offline)."""
    with _TOKENIZER_LOCK:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def tokenizer_for(model_name: str) -> Any | None:
    """The tokenizer of a real model name; None for the tiny model (bytes)."""
    entry = registry.real_entry(model_name)
    return load_tokenizer(entry.path) if entry is not None and entry.path is not None else None


def with_tokenizer(folder: Path, model_name: str, write: Any) -> None:
    """Run ``write(target)`` (which writes a checkpoint folder at ``target``) and, for a real model,
    add its tokenizer files, so ``folder`` appears complete in one rename or not at all."""
    entry = registry.real_entry(model_name)
    if entry is None or entry.path is None:
        write(folder)
        return
    staging = folder.parent / f".{folder.name}.{uuid.uuid4().hex}.tokenizer"
    try:
        write(staging)
        (staging / tinylm.TOKENIZER_FILE).unlink(missing_ok=True)
        for name in TOKENIZER_FILES:
            source = entry.path / name
            # generation_config.json comes from save_pretrained when the model has one.
            if source.is_file() and not (staging / name).exists():
                shutil.copyfile(source, staging / name)
        if folder.exists():
            shutil.rmtree(folder)
        atomic_replace(staging, folder, durable=False)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
