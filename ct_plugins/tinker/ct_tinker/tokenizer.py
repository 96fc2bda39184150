"""The tokenizer folder of the local server's tiny byte model, for the SDK's `get_tokenizer()`.

The SDK loads the tokenizer that get-info names with `transformers.AutoTokenizer.from_pretrained`.
For the tiny model (ids 0..255 are the bytes, then pad, bos, eos and end of turn:
`ct_core.chat_template`) ct writes, once, a folder holding a `tokenizer.json` built with the
`tokenizers` library and the model's chat template in Jinja, so nothing is ever downloaded and
`apply_chat_template` renders a conversation exactly as a run trains on it and a deployment serves it.
"""

from __future__ import annotations

import json
from pathlib import Path

from ct_core import chat_template
from ct_core.fs import atomic_write, exclusive_lock

#: The byte model's special tokens, with the ids the local server's tiny model gives them.
SPECIALS = {name: token for token, name in sorted(chat_template.SPECIAL_TOKENS.items())}
#: The folder's name; a new layout gets a new name, so a folder an older ct wrote is never reused.
FOLDER_NAME = "byte-tokenizer-2"


def _byte_to_unicode() -> dict[int, str]:
    # The printable stand-in of every byte, as byte-level tokenizers spell them.
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars = list(keep)
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(keep, chars, strict=True)}


def byte_tokenizer_json() -> str:
    """The `tokenizer.json` of the byte model: byte b is id b, no merges, the specials after."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab = {char: b for b, char in _byte_to_unicode().items()}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(name, special=True) for name in SPECIALS])
    return str(tokenizer.to_str())


def ensure_byte_tokenizer(parent: Path) -> Path:
    """The byte tokenizer folder under `parent`, written the first time it is asked for."""
    folder = parent / FOLDER_NAME
    marker = folder / "tokenizer_config.json"
    if marker.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(folder / ".lock"):
        if not marker.exists():
            atomic_write(folder / "tokenizer.json", byte_tokenizer_json().encode("utf-8"))
            config = {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "pad_token": chat_template.SPECIAL_TOKENS[chat_template.PAD_ID],
                "bos_token": chat_template.SPECIAL_TOKENS[chat_template.BOS_ID],
                "eos_token": chat_template.SPECIAL_TOKENS[chat_template.EOS_ID],
                "model_max_length": 1 << 20,
                "chat_template": chat_template.JINJA,
            }
            atomic_write(marker, json.dumps(config, indent=2).encode("utf-8"))
    return folder
