"""Tiny real Hugging Face models for tests, built from a config: nothing is ever downloaded.

`save_model(folder, architecture, tokenizer=..., experts=0)` writes what a user's own model folder
holds (`config.json`, safetensors weights, the tokenizer files) for a random-init causal LM of a
real architecture, two layers of hidden size 64, so a server loads it exactly as it would load a
downloaded one. Two tokenizers go with them:

- `bpe_tokenizer()`: a small byte-level BPE trained here with `tokenizers` on a fixed corpus, with
  start, end and pad tokens and a chat template (one `<|start|>role` line per message, closed by
  `<|end|>`);
- `byte_tokenizer()`: every byte one token, no merges, a pad and an end token, no template.

transformers, tokenizers and torch are imported when a model is built, not with this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The chat template of `bpe_tokenizer`: one line per message, ending with the end token.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|start|>{{ m['role'] }}\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|pad|>", "<|start|>", "<|end|>"]
CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "hello world, this is a tiny model for tests",
    "user assistant system: what is two plus two? four.",
] * 20
#: The architectures `save_model` builds (any AutoModelForCausalLM config works the same way).
ARCHITECTURES = ("qwen3", "llama")


def bpe_tokenizer() -> Any:
    """A byte-level BPE of about 300 tokens trained on `CORPUS`, with `CHAT_TEMPLATE`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    raw.train_from_iterator(CORPUS, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, pad_token="<|pad|>", eos_token="<|end|>", bos_token="<|start|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def byte_tokenizer() -> Any:
    """A byte-level tokenizer (every byte one token, no merges) with a pad and an end token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    symbols = ["<|pad|>", "<|end|>", *sorted(pre_tokenizers.ByteLevel.alphabet())]
    raw = Tokenizer(models.BPE(vocab={symbol: index for index, symbol in enumerate(symbols)}, merges=[]))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<|pad|>", eos_token="<|end|>")


def build_config(architecture: str, tokenizer: Any, *, experts: int = 0) -> Any:
    """The config of a two-layer, hidden-size-64 model of `architecture` over `tokenizer`'s vocabulary;
    `experts` > 0 makes a Qwen3 a Qwen3-MoE with that many experts, two per token."""
    from transformers import LlamaConfig, Qwen3Config, Qwen3MoeConfig

    shape: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 512,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    if architecture == "llama":
        if experts:
            raise ValueError("only a qwen3 model can have experts here")
        return LlamaConfig(tie_word_embeddings=False, **shape)
    if architecture != "qwen3":
        raise ValueError(f"architecture must be one of {', '.join(ARCHITECTURES)}, got {architecture!r}")
    shape["head_dim"] = 16
    if experts:
        return Qwen3MoeConfig(moe_intermediate_size=32, num_experts=experts, num_experts_per_tok=2, **shape)
    return Qwen3Config(tie_word_embeddings=True, **shape)


def save_model(
    folder: Path, architecture: str, *, tokenizer: Any = None, experts: int = 0, seed: int = 0
) -> Path:
    """A random-init causal LM (see `build_config`) and its tokenizer (`bpe_tokenizer()` unless
    given), saved to `folder` with `save_pretrained`; returns `folder`."""
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = bpe_tokenizer() if tokenizer is None else tokenizer
    config = build_config(architecture, tokenizer, experts=experts)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder
