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

import functools
import gc
import json
import shutil
import threading
import uuid
import weakref
from pathlib import Path
from types import MappingProxyType
from typing import Any

import torch

from ct_core.fs import atomic_replace
from ct_local.model import registry, tinylm

#: The files of a tokenizer (and its chat template) that travel with saved weights: the vocabulary in its
#: fast or slow form, its settings and special tokens, the chat template, and what generation stops on.
TOKENIZER_FILES = tuple(
    " ".join(
        (
            "tokenizer.json tokenizer.model vocab.json merges.txt",
            "tokenizer_config.json special_tokens_map.json added_tokens.json",
            "chat_template.jinja chat_template.json generation_config.json",
        )
    ).split()
)
_DTYPES = MappingProxyType({"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16})
# transformers resolves its Auto classes lazily; one thread at a time (see tinylm._IMPORT_LOCK).
_TOKENIZER_LOCK = threading.RLock()


def placement() -> tuple[str, torch.dtype]:
    """The device and dtype real models run on (the CPU in float32 without a registry)."""
    served = registry.current() or registry.Registry()
    return served.device, _DTYPES[served.dtype]


def weight_bytes(model: torch.nn.Module) -> int:
    """The bytes of ``model``'s parameters (a tied weight counted once; small buffers aside)."""
    return sum(t.numel() * t.element_size() for t in model.parameters())


def account(model: torch.nn.Module, model_name: str, source: str) -> torch.nn.Module:
    """Count ``model`` among the loaded models until the object is collected (a worker that
    ends drops its backend, and with it the model), then drop it from the account."""
    loaded = registry.loaded_models()
    key = loaded.add(registry.LoadedModel(model_name, source, weight_bytes(model)))
    weakref.finalize(model, loaded.drop, key)
    return model


def free_memory() -> None:
    """Give back what ended sub-jobs held: collect the objects only a reference cycle kept (a
    backend and the worker that logs for it), then return the device's cached blocks."""
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def place(model: torch.nn.Module, model_name: str = "") -> torch.nn.Module:
    """``model`` moved to the registry's device and dtype (counted as loaded: a real model's)."""
    device, dtype = placement()
    return account(model.to(device=device, dtype=dtype), model_name, "restored state")


def load_model(folder: Path, model_name: str = "") -> torch.nn.Module:
    """The causal LM in ``folder``, on the registry's device and dtype (offline, safetensors only),
    counted among the loaded models."""
    device, dtype = placement()
    auto = tinylm._hf("AutoModelForCausalLM")
    model: torch.nn.Module = auto.from_pretrained(
        str(folder), local_files_only=True, use_safetensors=True, dtype=dtype
    )
    return account(model.to(device), model_name or folder.name, str(folder))


def load_for(model_name: str, folder: Path) -> torch.nn.Module:
    """The weights in ``folder`` as a model of ``model_name``: placed like a real model when the
    name is served with real weights, else as the tiny model (float32, CPU)."""
    if registry.real_entry(model_name) is not None:
        return load_model(folder, model_name)
    return tinylm.load_pretrained(folder)


def base_model(model_name: str) -> tuple[torch.nn.Module, str]:
    """The untrained model a sub-job of ``model_name`` starts from, and how to say where it came from."""
    entry = registry.real_entry(model_name)
    if entry is None or entry.path is None:
        return tinylm.build_model(model_name), f"{model_name} (tiny local model, seeded from its name)"
    origin = f"{model_name} ({entry.architecture} weights from {entry.path})"
    return load_model(entry.path, model_name), origin


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


class TextTokenizer:
    """A real model's tokenizer as the sampler and the chat endpoint use it: ids in, text out, the
    ids that end a generation, and the model's own chat template."""

    def __init__(self, tokenizer: Any, stop_ids: frozenset[int]) -> None:
        self.tokenizer = tokenizer
        self.stop_ids = stop_ids
        self.vocab_size = len(tokenizer)

    def encode(self, text: str, *, add_bos: bool = False) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=add_bos))

    def decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=True))

    def token_text(self, token: int) -> str:
        """One token as text, specials included (for log-probability entries)."""
        return str(self.tokenizer.decode([token], skip_special_tokens=False))

    def render_chat(self, messages: list[dict[str, Any]]) -> list[int]:
        """The prompt ids of ``messages`` through the model's chat template, ready for the reply."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError("this model's tokenizer has no chat template")
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return self.encode(str(text))


def _stop_ids(folder: Path, tokenizer: Any) -> frozenset[int]:
    """The end-of-sequence ids: the tokenizer's and those of ``generation_config.json``."""
    ids: set[int] = set()
    if isinstance(tokenizer.eos_token_id, int):
        ids.add(tokenizer.eos_token_id)
    path = folder / "generation_config.json"
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("eos_token_id") if path.is_file() else None
    except (OSError, ValueError, AttributeError):
        value = None
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, int) and not isinstance(item, bool):
            ids.add(item)
    return frozenset(ids)


@functools.lru_cache(maxsize=8)
def _text_tokenizer(folder: Path) -> TextTokenizer:
    tokenizer = load_tokenizer(folder)
    return TextTokenizer(tokenizer, _stop_ids(folder, tokenizer))


def text_tokenizer(model_name: str) -> TextTokenizer | None:
    """The tokenizer of a real model name (loaded once per folder); None for the tiny model."""
    entry = registry.real_entry(model_name)
    if entry is None or entry.path is None:
        return None
    with _TOKENIZER_LOCK:
        return _text_tokenizer(entry.path)


def max_positions(model: torch.nn.Module) -> int:
    """The longest sequence the model's config allows (the tiny model's window without one)."""
    value = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    return int(value) if isinstance(value, int) and value > 0 else tinylm.MAX_POSITIONS
