"""Tokenizing and packing a run's rows, and scoring label values from forward log-probabilities."""

from __future__ import annotations

import numpy as np
import pytest
from ct_runs import packing
from ct_runs.packing import BOS_ID, EOS_ID, IGNORE_INDEX, PAD_ID, Example

from ct_core import chat_template, wire
from ct_core.chat_template import END_OF_TURN_ID
from ct_core.data.payloads import serialize_forward_backward_args
from ct_local.model import tinylm


def _rows(count: int) -> list[dict]:
    return [
        {"text": f"row {i} says " + "ab" * (i % 7), "labels": {"topic": "sport" if i % 3 else "news"}}
        for i in range(count)
    ]


def test_special_ids_match_the_local_models_byte_vocabulary() -> None:
    assert (PAD_ID, BOS_ID, EOS_ID) == (tinylm.PAD_ID, tinylm.BOS_ID, tinylm.EOS_ID)
    assert (PAD_ID, BOS_ID, EOS_ID) == (chat_template.PAD_ID, chat_template.BOS_ID, chat_template.EOS_ID)
    # The end-of-turn token is a special token of the tiny vocabulary, not bytes.
    assert BOS_ID < END_OF_TURN_ID == tinylm.END_OF_TURN_ID < tinylm.VOCAB_SIZE


def _chat_tokens(messages: list[dict]) -> list[int]:
    """A conversation written out by hand in the tiny template: BOS, then per turn its marker, its
    content, the end-of-turn token 259 and a newline."""
    out = [BOS_ID]
    for message in messages:
        out += [*f"<|{message['role']}|>\n".encode(), *message["content"].encode(), END_OF_TURN_ID, ord("\n")]
    return out


def test_a_labels_row_is_the_text_asked_and_its_labels_answered_in_the_chat_template() -> None:
    row = {"text": "hi é", "labels": {"a": "x", "b": "yz", "c": "unused"}}
    example = packing.encode_example(row, ["b", "a"])
    expected = _chat_tokens(
        [{"role": "user", "content": "hi é"}, {"role": "assistant", "content": "b: yz\na: x"}]
    )
    assert list(example.tokens) == expected
    # The answer and its end of turn are trained; the text, the markers and the last newline are not.
    trained = [t for t, m in zip(example.tokens, example.loss_mask, strict=True) if m]
    assert trained == [*b"b: yz\na: x", END_OF_TURN_ID]
    # What a deployment is prompted with when the text is sent as a user message is the prefix.
    prompt = chat_template.prompt_ids([{"role": "user", "content": "hi é"}])
    assert expected[: len(prompt)] == prompt


def test_a_prompt_completion_row_is_a_user_turn_and_the_assistants_answer() -> None:
    example = packing.encode_example({"prompt": "2+2=", "completion": "4"}, [])
    assert list(example.tokens) == _chat_tokens(
        [{"role": "user", "content": "2+2="}, {"role": "assistant", "content": "4"}]
    )
    assert [t for t, m in zip(example.tokens, example.loss_mask, strict=True) if m] == [
        ord("4"),
        END_OF_TURN_ID,
    ]


def test_encode_example_without_labels_and_with_a_missing_value() -> None:
    row = {"text": "t", "labels": {"a": None}}
    assert list(packing.encode_example(row, []).tokens) == [BOS_ID, ord("t"), EOS_ID]
    assert list(packing.encode_example(row, ["a", "b"]).tokens) == [BOS_ID, ord("t"), EOS_ID]
    assert list(packing.encode_example({"text": "t"}, ["a"]).tokens) == [BOS_ID, ord("t"), EOS_ID]


@pytest.mark.parametrize(
    ("row", "message"),
    [({"labels": {}}, "text"), ({"text": 3}, "text"), ({"text": "t", "labels": {"a": 1}}, "label 'a'")],
)
def test_encode_example_refuses_rows_it_cannot_tokenize(row: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        packing.encode_example(row, ["a"])


def test_example_needs_one_mask_entry_per_token() -> None:
    with pytest.raises(ValueError):
        Example((1, 2), (1,))


def test_label_prompt_and_value_tokens() -> None:
    row = {"text": "abc", "labels": {"a": "x", "b": "y"}}
    asked = chat_template.prompt_ids([{"role": "user", "content": "abc"}])
    assert packing.label_prompt(row, "b") == [*asked, *b"b: "]
    # With the run's fields, earlier labels come first with their true values, as in training.
    assert packing.label_prompt(row, "b", label_fields=["a", "b"]) == [*asked, *b"a: x\nb: "]
    assert packing.label_value_tokens("yes") == [*b"yes", END_OF_TURN_ID]
    assert packing.label_value_tokens("yes", last=False) == [*b"yes\n"]
    prompt, candidates = packing.label_candidates(row, "a", ["x", "zz"], ["a", "b"])
    assert prompt == [*asked, *b"a: "]
    assert candidates == [[*b"x\n"], [*b"zz\n"]]
    # Prompt plus the true candidate is exactly the training encoding's prefix.
    encoded = list(packing.encode_example(row, ["a", "b"]).tokens)
    assert encoded[: len(prompt) + 2] == prompt + candidates[0]
    _, last = packing.label_candidates(row, "b", ["y"], ["a", "b"])
    assert last == [[*b"y", END_OF_TURN_ID]]
    assert encoded[-3:-1] == last[0]


def _rows_of(example: Example, seq_len: int) -> list[tuple[list[int], list[int]]]:
    """The (inputs, labels) rows one example packs into, written out plainly: its positions with a
    next token, ``seq_len`` at a time, labels the next token where it is a target; a row that would
    hold no target at all is left out."""
    tokens, mask = list(example.tokens), list(example.loss_mask)
    out = []
    for start in range(0, len(tokens) - 1, seq_len):
        end = min(start + seq_len, len(tokens) - 1)
        labels = [tokens[j + 1] if mask[j + 1] else IGNORE_INDEX for j in range(start, end)]
        pad = seq_len - (end - start)
        if all(label == IGNORE_INDEX for label in labels):
            continue
        out.append((tokens[start:end] + [PAD_ID] * pad, labels + [IGNORE_INDEX] * pad))
    return out


def _widen(array: np.ndarray, width: int, fill: int) -> np.ndarray:
    """A batch array padded on the right to ``width`` columns with ``fill``."""
    return np.pad(array, ((0, 0), (0, width - array.shape[1])), constant_values=fill)


def test_plan_epoch_gives_each_shuffled_example_rows_of_its_own_with_aligned_next_token_labels() -> None:
    examples = packing.encode_rows(_rows(40), ["topic"])
    seq_len, batch_tokens = 32, 100  # 3 rows a batch
    batches = packing.plan_epoch(examples, seed=7, epoch=2, seq_len=seq_len, batch_tokens=batch_tokens)
    order = packing.epoch_order(len(examples), seed=7, epoch=2)
    expected = [row for index in order for row in _rows_of(examples[int(index)], seq_len)]
    inputs = np.concatenate([_widen(b.input_ids, seq_len, PAD_ID) for b in batches])
    labels = np.concatenate([_widen(b.labels, seq_len, IGNORE_INDEX) for b in batches])
    attention = np.concatenate([_widen(b.attention_mask, seq_len, 0) for b in batches])
    # Each batch is as wide as its widest row: its last column is attended in some row.
    assert all(b.attention_mask[:, -1].any() for b in batches)
    assert inputs.tolist() == [row[0] for row in expected]
    assert labels.tolist() == [row[1] for row in expected]
    assert attention.tolist() == [[int(token != PAD_ID) for token in row[0]] for row in expected]
    # BOS is never a target.
    assert BOS_ID not in labels.reshape(-1).tolist()
    assert all(b.input_ids.shape[0] == 3 and b.input_ids.shape[1] <= seq_len for b in batches[:-1])
    assert batches[-1].input_ids.shape[0] <= 3
    assert sum(b.target_tokens for b in batches) == sum(sum(e.loss_mask) for e in examples)
    for batch in batches:
        assert batch.input_ids.dtype == np.int64 and batch.labels.dtype == np.int64
        assert batch.target_tokens == int((batch.labels != IGNORE_INDEX).sum())


def test_plan_epoch_is_deterministic_and_each_epoch_has_the_same_number_of_steps() -> None:
    examples = packing.encode_rows(_rows(57), ["topic"])
    options = {"seq_len": 24, "batch_tokens": 64}
    first = packing.plan_epoch(examples, seed=3, epoch=0, **options)
    again = packing.plan_epoch(examples, seed=3, epoch=0, **options)
    assert [b.input_ids.tolist() for b in first] == [b.input_ids.tolist() for b in again]
    counts = {len(packing.plan_epoch(examples, seed=3, epoch=e, **options)) for e in range(6)}
    assert counts == {packing.steps_per_epoch(examples, **options)}
    other_epoch = packing.plan_epoch(examples, seed=3, epoch=1, **options)
    other_seed = packing.plan_epoch(examples, seed=4, epoch=0, **options)
    assert first[0].input_ids.tolist() != other_epoch[0].input_ids.tolist()
    assert first[0].input_ids.tolist() != other_seed[0].input_ids.tolist()
    assert packing.train_tokens(examples) == sum(len(e.tokens) for e in examples)


@pytest.mark.parametrize(
    ("tokens", "seq_len", "batch_tokens", "steps"),
    [
        (33, 32, 64, 1),  # 32 target positions: exactly one row, no padding row
        (34, 32, 64, 1),  # 33 positions: two rows, one batch of two
        (34, 32, 10, 2),  # a budget below one row still takes one row a batch
        (1, 32, 64, 0),  # a lone token has nothing to predict
        (0, 32, 64, 0),
    ],
)
def test_steps_per_epoch_counts_rows_of_target_positions(
    tokens: int, seq_len: int, batch_tokens: int, steps: int
) -> None:
    examples = [Example(tuple([65] * tokens), (0, *([1] * (tokens - 1))) if tokens else ())]
    assert packing.steps_per_epoch(examples, seq_len=seq_len, batch_tokens=batch_tokens) == steps
    batches = packing.plan_epoch(examples, seed=0, epoch=0, seq_len=seq_len, batch_tokens=batch_tokens)
    assert len(batches) == steps


def test_sizes_are_checked() -> None:
    with pytest.raises(ValueError, match="seq_len"):
        packing.steps_per_epoch([], seq_len=0, batch_tokens=8)
    with pytest.raises(ValueError, match="batch_tokens"):
        packing.rows_per_batch(seq_len=8, batch_tokens=True)
    with pytest.raises(ValueError, match="epoch"):
        packing.epoch_order(3, seed=0, epoch=-1)
    assert packing.rows_per_batch(seq_len=256, batch_tokens=2048) == 8


def test_validation_batches_keep_the_given_order() -> None:
    examples = packing.encode_rows(_rows(9), [])
    batches = packing.validation_batches(examples, seq_len=16, batch_tokens=32)
    expected = [row[0] for example in examples for row in _rows_of(example, 16)]
    inputs = np.concatenate([_widen(b.input_ids, 16, PAD_ID) for b in batches])
    assert inputs.tolist() == expected
    assert packing.validation_batches(examples, seq_len=16, batch_tokens=32)[0].labels.tolist() == (
        batches[0].labels.tolist()
    )


def test_batch_kwargs_serialize_into_a_forward_backward_frame() -> None:
    examples = packing.encode_rows(_rows(5), ["topic"])
    batch = packing.plan_epoch(examples, seed=0, epoch=0, seq_len=16, batch_tokens=64)[0]
    frame = serialize_forward_backward_args(kwargs=batch.kwargs())
    decoded = wire.loads(frame, backend="numpy")
    kwargs = decoded["kwargs"]
    assert set(kwargs) == {"input_ids", "attention_mask", "labels"}
    for name in kwargs:
        assert np.array_equal(np.asarray(kwargs[name]), getattr(batch, name))


def test_mean_loss_weights_batches_by_their_target_tokens() -> None:
    batches = [
        packing.Batch(np.zeros((1, 2)), np.zeros((1, 2)), np.ones((1, 2)), target_tokens=3),
        packing.Batch(np.zeros((1, 2)), np.zeros((1, 2)), np.ones((1, 2)), target_tokens=1),
    ]
    assert packing.mean_loss([1.0, 5.0], batches) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        packing.mean_loss([1.0], batches)


def test_candidate_batch_and_scores_from_a_hand_made_logprobs_array() -> None:
    prompt = [BOS_ID, 10, 11]
    candidates = [[20], [21, 22, EOS_ID]]
    input_ids, attention, spans = packing.candidate_batch(prompt, candidates)
    assert input_ids.tolist() == [[BOS_ID, 10, 11, 20, PAD_ID, PAD_ID], [BOS_ID, 10, 11, 21, 22, EOS_ID]]
    assert attention.tolist() == [[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]]
    # logprobs[r, i] is the log-probability of input_ids[r, i + 1]: candidates start at index 2.
    assert spans == [(0, 2, 3), (1, 2, 5)]
    logprobs = np.array(
        [
            [-9.0, -9.0, -0.5, -7.0, -7.0],
            [-9.0, -9.0, -0.1, -0.2, -0.3],
        ]
    )
    scores = packing.candidate_scores(logprobs, spans)
    assert scores == pytest.approx([-0.5, -0.6])
    assert packing.best_candidate(scores) == 0
    assert packing.best_candidate([-1.0, -1.0]) == 0
    with pytest.raises(ValueError, match="outside"):
        packing.candidate_scores(logprobs[:, :3], spans)


def test_candidate_batch_trims_the_prompt_from_its_start_to_fit() -> None:
    input_ids, _, spans = packing.candidate_batch([1, 2, 3, 4, 5], [[7, 8]], max_len=5)
    assert input_ids.tolist() == [[3, 4, 5, 7, 8]]
    assert spans == [(0, 2, 4)]
    with pytest.raises(ValueError, match="no room"):
        packing.candidate_batch([1, 2], [[7, 8]], max_len=2)
    with pytest.raises(ValueError):
        packing.candidate_batch([1], [])
