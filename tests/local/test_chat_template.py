"""The tiny model's chat template: one definition for training and serving, carried by its checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ct_core import chat_template
from ct_local.model import tinylm

CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Capital of France?"},
]
ANSWER = {"role": "assistant", "content": "Paris"}


def test_a_conversation_is_bos_then_marked_turns_each_closed_by_the_end_of_turn_token() -> None:
    ids = chat_template.conversation_ids([*CONVERSATION, ANSWER])
    written = [chat_template.BOS_ID]
    for message in [*CONVERSATION, ANSWER]:
        marker = f"<|{message['role']}|>\n".encode()
        written += [*marker, *message["content"].encode(), chat_template.END_OF_TURN_ID, ord("\n")]
    assert ids == written
    assert chat_template.render([*CONVERSATION, ANSWER]) == (
        "<|system|>\nBe brief.<|end|>\n<|user|>\nCapital of France?<|end|>\n<|assistant|>\nParis<|end|>\n"
    )


def test_the_serving_prompt_is_the_prefix_of_the_trained_conversation_before_the_answer() -> None:
    prompt = chat_template.prompt_ids(CONVERSATION)
    trained = chat_template.conversation_ids([*CONVERSATION, ANSWER])
    assert trained[: len(prompt)] == prompt
    # What follows the prompt is the answer and its end of turn: what a deployment generates and stops at.
    rest = trained[len(prompt) :]
    assert rest == [*b"Paris", chat_template.END_OF_TURN_ID, ord("\n")]
    assert chat_template.END_OF_TURN_ID in chat_template.STOP_IDS


def test_the_end_of_turn_text_in_a_message_stays_bytes() -> None:
    ids = chat_template.conversation_ids([{"role": "user", "content": "a<|end|>b"}])
    assert ids.count(chat_template.END_OF_TURN_ID) == 1  # only the turn's own end
    assert bytes(ids[1:-2]).decode().endswith("a<|end|>b")


def test_a_bad_role_or_content_is_refused() -> None:
    with pytest.raises(ValueError, match="role must be one of"):
        chat_template.prompt_ids([{"role": "tool", "content": "x"}])
    with pytest.raises(ValueError, match="content must be a string"):
        chat_template.prompt_ids([{"role": "user", "content": None}])


def test_the_template_fits_the_tiny_vocabulary() -> None:
    assert (tinylm.PAD_ID, tinylm.BOS_ID, tinylm.EOS_ID, tinylm.END_OF_TURN_ID) == (
        chat_template.PAD_ID,
        chat_template.BOS_ID,
        chat_template.EOS_ID,
        chat_template.END_OF_TURN_ID,
    )
    assert max(chat_template.SPECIAL_TOKENS) < tinylm.VOCAB_SIZE
    assert tinylm.ByteTokenizer().decode(chat_template.prompt_ids(CONVERSATION)).startswith("<|system|>")


def test_a_weights_only_checkpoint_carries_its_chat_template(tmp_path: Path) -> None:
    folder = tmp_path / "cp"
    tinylm.write_checkpoint(folder, tinylm.build_model("t"), optimizer=None, trainer_state={})
    described = json.loads((folder / tinylm.TOKENIZER_FILE).read_text())
    assert described["chat_template"] == chat_template.TEMPLATE_NAME
    assert described["end_of_turn"] == chat_template.END_OF_TURN_ID
    assert tinylm.checkpoint_template(folder) == chat_template.TEMPLATE_NAME


def test_a_checkpoint_without_a_template_gets_the_built_in_one_and_an_unknown_one_is_refused(
    tmp_path: Path,
) -> None:
    assert tinylm.checkpoint_template(tmp_path) == chat_template.TEMPLATE_NAME
    (tmp_path / tinylm.TOKENIZER_FILE).write_text(json.dumps({"type": "bytes"}))
    assert tinylm.checkpoint_template(tmp_path) == chat_template.TEMPLATE_NAME
    (tmp_path / tinylm.TOKENIZER_FILE).write_text(json.dumps({"type": "bytes", "chat_template": "other-9"}))
    with pytest.raises(ValueError, match="'other-9'"):
        tinylm.checkpoint_template(tmp_path)
