"""A managed run's tokenizer (ct_runs.tokenizers): the tiny model's bytes, or a real model's own
tokenizer and chat template, picked from the model as the local server's models route shows it."""

from __future__ import annotations

from typing import Any

import pytest
from ct_runs import packing, tokenizers

CONVERSATION = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "hello world"},
    {"role": "assistant", "content": "the quick brown fox"},
    {"role": "user", "content": "what is two plus two?"},
    {"role": "assistant", "content": "four.", "weight": 0},
    {"role": "user", "content": "again"},
    {"role": "assistant", "content": "four"},
]
#: A template that renders the last assistant turn unlike the earlier ones (as Qwen3's does with its
#: empty thinking block), so a prefix of the conversation renders unlike the whole's beginning.
LAST_TURN_DIFFERS = (
    "{% for m in messages %}<|start|>{{ m['role'] }}\n"
    "{% if m['role'] == 'assistant' and loop.last %}<think></think>{% endif %}"
    "{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant\n{% endif %}"
)


def _models(real_server: Any) -> list[dict[str, Any]]:
    with real_server.http() as http:
        answer = http.get("/api/v2/cortex-training/models")
    assert answer.status_code == 200, answer.text
    return list(answer.json()["models"])


def _flat(pieces: list[tokenizers.Piece]) -> tuple[list[int], list[int]]:
    ids = [token for piece, _ in pieces for token in piece]
    mask = [int(trained) for piece, trained in pieces for _ in piece]
    return ids, mask


def _trained_texts(tokenizer: Any, pieces: list[tokenizers.Piece]) -> list[str]:
    return [tokenizer.decode(piece) for piece, trained in pieces if trained]


def test_the_tiny_model_reads_bytes_as_packing_always_did():
    chosen = tokenizers.for_model("toy", [{"name": "toy", "weights": "tiny"}])
    assert isinstance(chosen, tokenizers.ByteChat)
    ids, mask = _flat(chosen.conversation_pieces(CONVERSATION))
    example = packing.encode_chat(CONVERSATION)
    assert (tuple(ids), tuple(mask)) == (example.tokens, example.loss_mask)
    assert chosen.encode("hé") == list("hé".encode())


def test_a_real_model_uses_its_own_tokenizer_and_template(real_server, tokenizer):
    chosen = tokenizers.for_model("tiny-qwen3", _models(real_server))
    assert isinstance(chosen, tokenizers.ModelTokenizer)
    pieces = chosen.conversation_pieces(CONVERSATION)
    ids, mask = _flat(pieces)
    rendered = tokenizer.apply_chat_template(CONVERSATION, tokenize=False)
    # The whole conversation tokenized at once, as the model reads it (BPE tokens, not bytes).
    assert ids == tokenizer(rendered, add_special_tokens=False)["input_ids"]
    assert len(ids) < len(rendered.encode())
    # Only the assistant turns of weight 1 are trained: their content and end of turn.
    assert _trained_texts(tokenizer, pieces) == ["the quick brown fox<|end|>", "four<|end|>"]
    assert sum(mask) == len(tokenizer("the quick brown fox<|end|>four<|end|>")["input_ids"])
    assert chosen.end_of_turn_ids == (tokenizer.convert_tokens_to_ids("<|end|>"),)
    prompt = tokenizer.apply_chat_template(CONVERSATION[:2], tokenize=False, add_generation_prompt=True)
    assert chosen.prompt_ids(CONVERSATION[:2]) == tokenizer(prompt, add_special_tokens=False)["input_ids"]
    assert chosen.encode("hello world") == tokenizer("hello world", add_special_tokens=False)["input_ids"]
    text = chosen.text_pieces("hello world")
    assert text[0] == ([tokenizer.bos_token_id], False)
    assert text[-1] == ([tokenizer.eos_token_id], True)
    record = chosen.record()
    assert record["vocab_size"] == len(tokenizer) and record["name"].endswith("qwen3")


def test_a_template_that_renders_the_last_turn_differently(model_folders):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_folders["llama"]), local_files_only=True)
    tokenizer.chat_template = LAST_TURN_DIFFERS
    chosen = tokenizers.ModelTokenizer(tokenizer, "last-turn-differs")
    pieces = chosen.conversation_pieces(CONVERSATION)
    assert _trained_texts(tokenizer, pieces) == ["the quick brown fox<|end|>", "four<|end|>"]
    rendered = tokenizer.apply_chat_template(CONVERSATION, tokenize=False)
    assert "<think></think>four" in rendered
    assert _flat(pieces)[0] == tokenizer(rendered, add_special_tokens=False)["input_ids"]


def test_a_tokenizer_that_is_nowhere_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    with pytest.raises(
        ValueError, match=r"'Org/Not-Cached' is neither a folder nor in the local Hugging Face"
    ):
        tokenizers.for_model("Org/Not-Cached", [{"name": "Org/Not-Cached"}])
