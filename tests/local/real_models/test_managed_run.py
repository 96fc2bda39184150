"""A managed run on a real model packs its rows with that model's own tokenizer and chat template.

The packing of a run (``ct_runs.packing``) takes the run's tokenizer (``ct_runs.tokenizers``): the
tiny model's bytes, which give exactly the ids runs have always trained on, or a real model's
tokenizer and template. These tests pack rows for the tiny random-init Qwen3 of the fixtures and
read the ids back with the folder's own tokenizer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ct_runs import packing, tokenizers

CHAT = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "hello world"},
    {"role": "assistant", "content": "the quick brown fox"},
]


@pytest.fixture(scope="module")
def qwen_tokenizer(model_folders: dict[str, Path]) -> tokenizers.ModelTokenizer:
    """The run tokenizer of a server that serves the Qwen3 folder as ``qwen``."""
    models = [{"name": "qwen", "weights": "huggingface", "path": str(model_folders["qwen3"])}]
    chosen = tokenizers.for_model("qwen", models)
    assert isinstance(chosen, tokenizers.ModelTokenizer)
    return chosen


def _trained(tokenizer: Any, example: packing.Example) -> str:
    return str(tokenizer.decode([t for t, m in zip(example.tokens, example.loss_mask, strict=True) if m]))


def test_a_chat_row_packs_as_the_models_template_renders_it(qwen_tokenizer, tokenizer):
    example = packing.encode_example({"messages": CHAT}, [], qwen_tokenizer)
    assert tokenizer.decode(list(example.tokens)) == tokenizer.apply_chat_template(CHAT, tokenize=False)
    assert max(example.tokens) < len(tokenizer)
    # Only what the assistant says, and the end of its turn, are targets.
    assert _trained(tokenizer, example) == "the quick brown fox<|end|>"


def test_prompt_completion_and_text_rows_use_the_models_tokens(qwen_tokenizer, tokenizer):
    example = packing.encode_example({"prompt": "hello", "completion": "world"}, [], qwen_tokenizer)
    messages = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "world"}]
    assert tokenizer.decode(list(example.tokens)) == tokenizer.apply_chat_template(messages, tokenize=False)
    assert _trained(tokenizer, example) == "world<|end|>"
    text = packing.encode_example({"text": "the lazy dog"}, [], qwen_tokenizer)
    assert list(text.tokens) == [
        tokenizer.bos_token_id,
        *tokenizer.encode("the lazy dog", add_special_tokens=False),
        tokenizer.eos_token_id,
    ]
    assert text.loss_mask == (0, *([1] * (len(text.tokens) - 1)))


def test_label_candidates_continue_the_prompt_as_training_encoded_the_answer(qwen_tokenizer, tokenizer):
    row = {"text": "what is two plus two?", "labels": {"topic": "sport", "mood": "happy"}}
    fields = ["topic", "mood"]
    encoded = list(packing.encode_example(row, fields, qwen_tokenizer).tokens)
    for field, values, true in (("topic", ["news", "sport"], 1), ("mood", ["happy", "sad"], 0)):
        prompt, candidates = packing.label_candidates(row, field, values, fields, qwen_tokenizer)
        # The prompt and the true value's candidate are exactly the training ids, up to that value's end.
        assert encoded[: len(prompt) + len(candidates[true])] == prompt + candidates[true]
        assert len({tuple(c) for c in candidates}) == len(values)
    # The last label's candidate ends with the template's end of turn.
    assert tokenizer.decode(candidates[0]).endswith("happy<|end|>")


def test_batches_pad_with_the_models_pad_token(qwen_tokenizer, tokenizer):
    rows = [{"messages": CHAT}, {"prompt": "hi", "completion": "yo"}]
    examples = packing.encode_rows(rows, [], qwen_tokenizer)
    pad = qwen_tokenizer.pad_id
    (batch,) = packing.validation_batches(examples, seq_len=64, batch_tokens=128, pad_id=pad)
    padded = batch.input_ids[batch.attention_mask == 0]
    assert padded.size > 0 and set(padded.tolist()) == {tokenizer.pad_token_id}
    prompt, candidates = packing.label_candidates(
        {"text": "x", "labels": {"a": "b"}}, "a", ["b", "cc d"], ["a"], qwen_tokenizer
    )
    input_ids, attention, _ = packing.candidate_batch(prompt, candidates, pad_id=qwen_tokenizer.pad_id)
    assert set(np.asarray(input_ids)[attention == 0].tolist()) <= {tokenizer.pad_token_id}


def test_a_run_finds_its_tokenizer_again_from_what_it_recorded(qwen_tokenizer, model_folders, tmp_path):
    recorded = tokenizers.config_value(qwen_tokenizer)
    assert recorded == qwen_tokenizer.record()
    assert recorded["name"] == str(model_folders["qwen3"])
    again = tokenizers.for_run({"config": {"tokenizer": recorded}})
    assert isinstance(again, tokenizers.ModelTokenizer) and again.record() == recorded
    # The tiny model's runs record the name they always did, and read bytes.
    assert tokenizers.config_value(tokenizers.ByteChat()) == packing.TOKENIZER == "byte"
    assert isinstance(tokenizers.for_run({"config": {"tokenizer": "byte"}}), tokenizers.ByteChat)
    # A tokenizer changed since the run started cannot replay its batches: refused, naming it.
    changed = {**recorded, "chat_template_sha256": "0" * 64}
    with pytest.raises(ValueError, match="changed since the run started"):
        tokenizers.for_run({"config": {"tokenizer": changed}})
