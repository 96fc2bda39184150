"""Loss masking and example isolation of packed batches, at the level of the tokens and label masks
that packing hands the trainer.

The loss of a step is computed here by a fixed scorer: a seeded table of log-probabilities of a
token given the token before it, summed over the positions whose label is not -100, exactly as a
trainer reads labels. With it, a change the loss does not see is a change packing did not make a
target: a user or system turn, a prompt (away from its last byte, which conditions the first
completion byte), an assistant turn of weight 0. A change of an assistant turn or a completion does
move it.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from ct_runs import packing, templates
from ct_runs.packing import BOS_ID, IGNORE_INDEX, PAD_ID

from ct_core import chat_template

VOCAB = 260
SEQ_LEN, BATCH_TOKENS = 256, 512  # 2 rows a step, every example in one row
STEP = 1

_TABLE = np.log(np.random.default_rng(5).dirichlet(np.ones(VOCAB), size=VOCAB))


def step_loss(rows: list[dict[str, Any]], step: int = STEP) -> float:
    """The scorer's mean loss over the targets of one step of epoch 0."""
    examples = packing.encode_rows(rows, [])
    batch = packing.plan_epoch(examples, seed=3, epoch=0, seq_len=SEQ_LEN, batch_tokens=BATCH_TOKENS)[step]
    targeted = batch.labels != IGNORE_INDEX
    losses = -_TABLE[batch.input_ids[targeted], batch.labels[targeted]]
    return float(losses.sum() / batch.target_tokens)


def chat_rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(6):
        rows.append(
            {
                "messages": [
                    {"role": "system", "content": f"You answer in one word {i}."},
                    {"role": "user", "content": f"What comes after {i}?"},
                    {"role": "assistant", "content": f"{i + 1}"},
                    {"role": "user", "content": "And then?"},
                    {"role": "assistant", "content": f"{i + 2}", "weight": 0},
                    {"role": "user", "content": "Last one?"},
                    {"role": "assistant", "content": f"{i + 3}!"},
                ]
            }
        )
    return rows


def pc_rows() -> list[dict[str, Any]]:
    return [{"prompt": f"Translate {i} to words:", "completion": f" number {i}"} for i in range(6)]


def _edit_everywhere(rows: list[dict[str, Any]], index: int, content: str) -> list[dict[str, Any]]:
    changed = copy.deepcopy(rows)
    for row in changed:
        row["messages"][index]["content"] = content
    return changed


@pytest.mark.parametrize(
    ("message", "content"),
    [
        (1, "What, pray tell, would come right after that number?"),  # a user turn, longer
        (0, "x"),  # a system turn, shorter
        (3, "and then"),  # a later user turn
        (4, "zzz"),  # an assistant turn of weight 0
    ],
)
def test_changing_only_context_turns_leaves_the_step_loss_unchanged(message: int, content: str) -> None:
    rows = chat_rows()
    assert step_loss(_edit_everywhere(rows, message, content)) == step_loss(rows)


@pytest.mark.parametrize("message", [2, 6])  # the trained assistant turns
def test_changing_a_trained_assistant_turn_changes_the_step_loss(message: int) -> None:
    rows = chat_rows()
    assert step_loss(_edit_everywhere(rows, message, "something else")) != step_loss(rows)


def test_a_prompt_is_context_and_a_completion_is_trained() -> None:
    rows = pc_rows()
    other_prompt = copy.deepcopy(rows)
    for row in other_prompt:
        row["prompt"] = "Please write " + row["prompt"]
    assert step_loss(other_prompt) == step_loss(rows)
    other_completion = copy.deepcopy(rows)
    for row in other_completion:
        row["completion"] = " another answer"
    assert step_loss(other_completion) != step_loss(rows)


def _targets(example: packing.Example) -> list[int]:
    return [t for t, m in zip(example.tokens, example.loss_mask, strict=True) if m]


def test_chat_targets_are_the_trained_assistant_contents_and_their_end_of_turn_tokens() -> None:
    [row] = chat_rows()[:1]
    example = packing.encode_chat(row["messages"])
    end = templates.END_OF_TURN_ID
    assert _targets(example) == [ord("1"), end, *b"3!", end]
    assert list(example.tokens) == chat_template.conversation_ids(row["messages"])
    assert example.tokens[0] == BOS_ID and example.loss_mask[0] == 0


def test_prompt_completion_targets_are_the_completion_and_its_end_of_turn() -> None:
    example = packing.encode_prompt_completion("2+2=", "4")
    messages = [{"role": "user", "content": "2+2="}, {"role": "assistant", "content": "4"}]
    assert list(example.tokens) == chat_template.conversation_ids(messages)
    assert _targets(example) == [ord("4"), templates.END_OF_TURN_ID]


def _examples_of_row(inputs: np.ndarray, attention: np.ndarray) -> list[int]:
    """Indices (into the row) where an example starts, from the BOS tokens of the attended inputs."""
    attended = inputs[attention.astype(bool)]
    return [int(i) for i in np.flatnonzero(attended == BOS_ID)]


def test_no_row_holds_tokens_of_two_examples() -> None:
    # Short rows that a packer concatenating a stream would put several to a row; one long one that
    # needs three rows.
    rows = [{"text": f"row {i}"} for i in range(30)] + [{"text": "long " * 50}]
    examples = packing.encode_rows(rows, [])
    seq_len = 96
    for batches in (
        packing.plan_epoch(examples, seed=1, epoch=0, seq_len=seq_len, batch_tokens=4 * seq_len),
        packing.validation_batches(examples, seq_len=seq_len, batch_tokens=4 * seq_len),
    ):
        rows_seen = [
            (row_inputs, row_attention, row_labels)
            for batch in batches
            for row_inputs, row_attention, row_labels in zip(
                batch.input_ids, batch.attention_mask, batch.labels, strict=True
            )
        ]
        assert len(rows_seen) == 30 + 3
        pieces = []
        for row_inputs, row_attention, row_labels in rows_seen:
            width = int(row_attention.sum())
            # Attended tokens come first, then only padding: nothing of another example follows.
            assert row_attention[:width].all() and not row_attention[width:].any()
            assert set(row_inputs[width:].tolist()) <= {PAD_ID}
            assert set(row_labels[width:].tolist()) <= {IGNORE_INDEX}
            starts = _examples_of_row(row_inputs, row_attention)
            assert starts in ([], [0])  # at most one example begins in a row, at its start
            pieces.append(bytes(t for t in row_inputs[:width].tolist() if t < 256))
        # Every row is a piece of one example: short ones whole, the long one cut in order.
        whole = {f"row {i}".encode() for i in range(30)}
        assert whole <= set(pieces)
        rest = [p for p in pieces if p not in whole]
        assert b"".join(rest) == ("long " * 50).encode()


def test_a_row_without_any_target_is_left_out() -> None:
    # A chat whose user turn is longer than a row: the row that would hold only that turn teaches
    # nothing and is not packed; the assistant's answer still is.
    messages = [{"role": "user", "content": "q" * 200}, {"role": "assistant", "content": "ok"}]
    example = packing.encode_chat(messages)
    batches = packing.validation_batches([example], seq_len=64, batch_tokens=64)
    assert packing.steps_per_epoch([example], seq_len=64, batch_tokens=64) == len(batches)
    assert all(batch.target_tokens > 0 for batch in batches)
    assert sum(batch.target_tokens for batch in batches) == sum(example.loss_mask)
    assert len(batches) < -(-(len(example.tokens) - 1) // 64)
