"""The tokenizer folder ct writes for the tiny model is the model's own: its ids and its chat template.

The Tinker SDK (and tinker-cookbook's renderers) load it with transformers; what they tokenize and
render must be exactly what a managed run trains on and a deployment serves (ct_core.chat_template).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ct_tinker.tokenizer import ensure_byte_tokenizer

from ct_core import chat_template

CONVERSATIONS = [
    [{"role": "user", "content": "shout abc"}, {"role": "assistant", "content": "ABC"}],
    [
        {"role": "system", "content": "Be brief. Ünïcode ✓"},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "and 3+3?"},
    ],
]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from transformers import AutoTokenizer

    folder = ensure_byte_tokenizer(tmp_path_factory.mktemp("tokenizer"))
    return AutoTokenizer.from_pretrained(str(folder))


def _ids(encoded: Any) -> list[int]:
    return list(encoded["input_ids"] if not isinstance(encoded, list) else encoded)


def test_bytes_and_specials_have_the_tiny_models_ids(tokenizer: Any) -> None:
    text = "héllo <|end|>"
    assert tokenizer.encode("héllo ", add_special_tokens=False) == list("héllo ".encode())
    assert tokenizer.encode(text, add_special_tokens=False)[-1] == chat_template.END_OF_TURN_ID
    for token, name in chat_template.SPECIAL_TOKENS.items():
        assert tokenizer.convert_tokens_to_ids(name) == token
    assert (tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id) == (
        chat_template.PAD_ID,
        chat_template.BOS_ID,
        chat_template.EOS_ID,
    )


@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_the_chat_template_renders_what_runs_train_on_and_deployments_serve(
    tokenizer: Any, messages: list[dict[str, str]]
) -> None:
    whole = tokenizer.apply_chat_template(messages, tokenize=True)
    assert _ids(whole) == chat_template.conversation_ids(messages)
    prompt = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
    assert _ids(prompt) == chat_template.prompt_ids(messages)
    assert tokenizer.decode(chat_template.conversation_ids(messages)) == "<|bos|>" + chat_template.render(
        messages
    )


def test_the_folder_is_written_once_and_read_again(tmp_path: Path) -> None:
    first = ensure_byte_tokenizer(tmp_path)
    written = {path.name: path.read_bytes() for path in first.iterdir() if path.is_file()}
    assert ensure_byte_tokenizer(tmp_path) == first
    assert {path.name: path.read_bytes() for path in first.iterdir() if path.is_file()} == written
