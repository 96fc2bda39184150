"""Tokenizing and packing a run's rows into forward-backward batches, and scoring label values.

Everything here is pure and deterministic: the same rows, seed and epoch give the same batches on
every machine with the same numpy, which is what exact resume replays.

**Tokens.** Rows are tokenized by the run's tokenizer (``ct_runs.tokenizers``), which the functions
here take as an argument and which is the tiny model's byte vocabulary when none is given
(``ct_core.chat_template``, which ``ct_local`` serves with: ids 0-255 are UTF-8 bytes, then PAD,
BOS, EOS and END_OF_TURN). A run on a real model packs with that model's own tokenizer and chat
template instead, so it trains on ids that mean something to the model; the rules below are the
same, only the ids differ. One row becomes one :class:`Example`, its tokens and, per token,
whether the model is trained to say it (its loss mask). Every format but plain text is a
conversation of the model's chat template (``ct_runs.templates`` says which conversation), so a
deployment of the trained model answers a chat in the layout it learned:

- **chat** (a row with ``messages``): the conversation. Only the content and end-of-turn token of
  assistant turns of weight 1 are targets; system and user turns, role markers and assistant turns
  of weight 0 are context.
- **prompt/completion**: the prompt as the user turn, the completion as the assistant's answer; the
  completion and its end-of-turn token are the targets.
- **labels** (label fields selected and the row has a value for one of them): the text as the user
  turn, the answer one ``field: value`` line per selected field with a value, in the run's order;
  the answer and its end-of-turn token are the targets.
- **text** (no label fields, or no value for any): ``BOS, text, EOS``, every token after BOS a
  target (language modelling, no template; a real tokenizer without a BOS token starts with the
  text).

**Packing.** An epoch shuffles the examples (numpy PCG64 seeded from ``(seed, epoch)`` alone) and
gives every example rows of its own: examples never share a row, so no example attends to
another's tokens and no mask across examples is needed. An example of ``n`` tokens has ``n - 1``
positions with a next token; they are cut into rows of at most ``seq_len`` inputs, row ``k``
reading the example's positions ``[k * seq_len, (k + 1) * seq_len)`` with the next tokens as labels
(``labels[:, i]`` is the target of position ``i``; ``-100`` where the token is context or there is
none). Most examples fit one row; a longer one continues in the next row without the earlier part
as context, and a row that would hold no target at all (a long system or user turn) is left out.
The rest of a row is padding (the tokenizer's PAD inputs, attention 0, label -100), and a batch is
only as wide as its widest row (at most ``seq_len``), so short examples cost little padding.
``batch_tokens // seq_len`` rows (at least 1) make a batch; the last, partial batch is kept. The
number of rows does not depend on the order, so every epoch has the same number of batches
(:func:`steps_per_epoch`).

**Label scoring.** Validation scores each candidate value of a label by the summed forward
log-probability of its tokens after the prompt (the text asked, the answer so far up to
``field: ``); :func:`candidate_batch` builds one forward with all candidates and
:func:`candidate_scores` reads the sums back from the server's ``logprobs`` (``logprobs[:, i]`` is
the log-probability of ``input_ids[:, i + 1]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ct_core import chat_template
from ct_core.data.payloads import BYTE_PAD_ID, DEFAULT_IGNORE_INDEX
from ct_runs import templates
from ct_runs.tokenizers import ByteChat, RunTokenizer

#: Row of a dataset split: ``{"text": str, "labels": {field: value}}``, plus ``messages`` for a chat
#: row or ``prompt`` and ``completion`` for a prompt/completion row (ct_runs.datasets).
Row = Mapping[str, Any]

#: Padding id of the byte vocabulary (from ct_core's byte tokenizer).
PAD_ID = BYTE_PAD_ID
#: Begin and end of sequence, and the end of a turn: the template's special tokens, right after PAD.
BOS_ID = chat_template.BOS_ID
EOS_ID = chat_template.EOS_ID
END_OF_TURN_ID = chat_template.END_OF_TURN_ID
#: Label id the trainer skips.
IGNORE_INDEX = DEFAULT_IGNORE_INDEX
#: Name of the tokenizer, as the run config records it.
TOKENIZER = "byte"
#: Version of the encoding and packing rules above; part of the run config, so a change of rules
#: gives a new fingerprint instead of silently replaying an old run differently.
PACKING_VERSION = "byte-chat-rows-3"

#: The tiny model's tokenizer, what packing uses when a caller names none.
BYTES: RunTokenizer = ByteChat()


@dataclass(frozen=True)
class Example:
    """One encoded row: its token ids and, per token, 1 when it is a training target."""

    tokens: tuple[int, ...]
    loss_mask: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.loss_mask):
            raise ValueError("an example needs one loss-mask entry per token")


@dataclass
class Batch:
    """One forward-backward batch: ``[B, L]`` int64 arrays and the number of target tokens."""

    input_ids: np.ndarray
    labels: np.ndarray
    attention_mask: np.ndarray
    target_tokens: int

    def kwargs(self) -> dict[str, Any]:
        """The model kwargs for ``serialize_forward_backward_args(kwargs=...)``."""
        return {
            "input_ids": np.ascontiguousarray(self.input_ids),
            "attention_mask": np.ascontiguousarray(self.attention_mask),
            "labels": np.ascontiguousarray(self.labels),
        }

    @property
    def rows(self) -> int:
        return int(self.input_ids.shape[0])


# --- encoding ------------------------------------------------------------------------------------


def _text_bytes(value: Any, what: str) -> list[int]:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    return list(value.encode("utf-8"))


def _row_text(row: Row) -> list[int]:
    if "text" not in row:
        raise ValueError("a row needs a text field")
    return _text_bytes(row["text"], "a row's text")


def _row_labels(row: Row) -> Mapping[str, Any]:
    labels = row.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise ValueError("a row's labels must be an object of field: value")
    return labels


def _valued_fields(row: Row, label_fields: Sequence[str]) -> list[str]:
    labels = _row_labels(row)
    for field in label_fields:
        value = labels.get(field)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"label {field!r} must be a string, got {type(value).__name__}")
    return [field for field in label_fields if labels.get(field) is not None]


def _chosen(tokenizer: RunTokenizer | None) -> RunTokenizer:
    return BYTES if tokenizer is None else tokenizer


def encode_example(row: Row, label_fields: Sequence[str], tokenizer: RunTokenizer | None = None) -> Example:
    """Tokenize one row by its format (see the module's notes) with its loss mask, in the run's
    ``tokenizer`` (the tiny model's bytes when None)."""
    chosen = _chosen(tokenizer)
    if "messages" in row:
        return encode_chat(row["messages"], chosen)
    if "completion" in row:
        return encode_prompt_completion(row.get("prompt", ""), row["completion"], chosen)
    _row_text(row)
    fields = _valued_fields(row, label_fields)
    if fields:
        return encode_chat(templates.label_messages(row["text"], _row_labels(row), fields), chosen)
    return _from_pieces(chosen.text_pieces(row["text"]))


def _from_pieces(pieces: Sequence[tuple[Sequence[int], bool]]) -> Example:
    tokens: list[int] = []
    mask: list[int] = []
    for piece, trained in pieces:
        tokens.extend(piece)
        mask.extend([int(trained)] * len(piece))
    return Example(tuple(tokens), tuple(mask))


def encode_chat(messages: Sequence[Mapping[str, Any]], tokenizer: RunTokenizer | None = None) -> Example:
    """A conversation in the chat template of the run's model (the tiny model's when ``tokenizer``
    is None); targets only what the assistant learns."""
    return _from_pieces(_chosen(tokenizer).conversation_pieces(messages))


def encode_prompt_completion(prompt: Any, completion: Any, tokenizer: RunTokenizer | None = None) -> Example:
    """The prompt as the user turn, the completion as the answer; the answer and its end are the targets."""
    _text_bytes(prompt, "a prompt")
    _text_bytes(completion, "a completion")
    return encode_chat(templates.prompt_completion_messages(prompt, completion), tokenizer)


def encode_rows(
    rows: Sequence[Row], label_fields: Sequence[str], tokenizer: RunTokenizer | None = None
) -> list[Example]:
    """:func:`encode_example` over every row, in order."""
    chosen = _chosen(tokenizer)
    return [encode_example(row, label_fields, chosen) for row in rows]


def _label_answer_prefix(row: Row, field: str, label_fields: Sequence[str] | None) -> str:
    """The answer up to a value of ``field``: the earlier fields' lines (with ``label_fields``), then
    ``field: ``."""
    lines = []
    if label_fields is not None:
        if field not in label_fields:
            raise ValueError(f"label field {field!r} is not among the run's label fields")
        labels = _row_labels(row)
        for earlier in label_fields[: list(label_fields).index(field)]:
            value = labels.get(earlier)
            if value is not None:
                lines.append(templates.label_line(earlier, value) + "\n")
    _text_bytes(field, "a label field")
    return "".join(lines) + field + templates.LABEL_SEPARATOR


def label_prompt(
    row: Row, field: str, *, label_fields: Sequence[str] | None = None, tokenizer: RunTokenizer | None = None
) -> list[int]:
    """The prompt a value of ``field`` is scored after: the row's text asked in the chat template,
    then the answer up to ``field: ``.

    With ``label_fields`` (the run's selected fields, in order), the lines of the fields before
    ``field`` come first with their true values, which is the context the model was trained in;
    without it, the answer starts with ``field`` (the same thing for the first field).
    """
    chosen = _chosen(tokenizer)
    text = row.get("text")
    _text_bytes(text, "a row's text")
    asked = chosen.prompt_ids([{"role": "user", "content": text}])
    return [*asked, *chosen.encode(_label_answer_prefix(row, field, label_fields))]


def label_value_tokens(value: str, *, last: bool = True, tokenizer: RunTokenizer | None = None) -> list[int]:
    """A candidate value's tokens, with the token that follows it in training as its terminator.

    The terminator (the end-of-turn token after the last label line, the newline before the next
    line otherwise) is what makes a value and its prefixes distinguishable: without it "ab" could
    never beat "a".
    """
    chosen = _chosen(tokenizer)
    _text_bytes(value, "a label value")
    return [*chosen.encode(value), *(chosen.end_of_turn_ids if last else chosen.encode("\n"))]


def label_candidates(
    row: Row,
    field: str,
    values: Sequence[str],
    label_fields: Sequence[str],
    tokenizer: RunTokenizer | None = None,
) -> tuple[list[int], list[list[int]]]:
    """Prompt and candidate token lists for scoring every value of ``field`` on ``row``, as trained.

    A tokenizer that merges characters (a real model's) may join the space of ``field: `` to the
    value's first word, so each candidate is the whole answer so far tokenized at once, and the
    prompt keeps only the tokens every candidate shares with the answer's prefix: the prompt and
    the true candidate are then exactly the ids training saw. For bytes that is the prefix itself.
    """
    chosen = _chosen(tokenizer)
    fields = list(label_fields)
    labels = _row_labels(row)
    later = fields[fields.index(field) + 1 :] if field in fields else []
    last = not any(labels.get(other) is not None for other in later)
    text = row.get("text")
    _text_bytes(text, "a row's text")
    asked = chosen.prompt_ids([{"role": "user", "content": text}])
    prefix = _label_answer_prefix(row, field, fields)
    ending = list(chosen.end_of_turn_ids) if last else chosen.encode("\n")
    answers = []
    for value in values:
        _text_bytes(value, "a label value")
        answers.append([*chosen.encode(prefix + value), *ending])
    shared = chosen.encode(prefix)
    for answer in answers:
        same = 0
        while same < min(len(shared), len(answer)) and shared[same] == answer[same]:
            same += 1
        shared = shared[:same]
    return [*asked, *shared], [answer[len(shared) :] for answer in answers]


# --- packing -------------------------------------------------------------------------------------


def train_tokens(examples: Sequence[Example]) -> int:
    """Tokens of the examples of one epoch (the same every epoch), padding not counted."""
    return sum(len(example.tokens) for example in examples)


def _check_sizes(seq_len: int, batch_tokens: int) -> int:
    for name, value in (("seq_len", seq_len), ("batch_tokens", batch_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return max(1, batch_tokens // seq_len)


def rows_per_batch(*, seq_len: int, batch_tokens: int) -> int:
    """Rows of one batch: ``max(1, batch_tokens // seq_len)``."""
    return _check_sizes(seq_len, batch_tokens)


def _windows(example: Example, seq_len: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` input positions of an example's rows: ``seq_len`` positions that have a
    next token at a time, leaving out a window without any target (it would teach nothing)."""
    positions = len(example.tokens) - 1
    mask = example.loss_mask
    return [
        (start, min(start + seq_len, positions))
        for start in range(0, positions, seq_len)
        if any(mask[start + 1 : min(start + seq_len, positions) + 1])
    ]


def steps_per_epoch(examples: Sequence[Example], *, seq_len: int, batch_tokens: int) -> int:
    """Batches (optimizer steps) of one epoch, without building them."""
    per_batch = _check_sizes(seq_len, batch_tokens)
    rows = sum(len(_windows(example, seq_len)) for example in examples)
    return -(-rows // per_batch)


def epoch_order(count: int, *, seed: int, epoch: int) -> np.ndarray:
    """The shuffled order of ``count`` examples in ``epoch`` (0-based): PCG64 seeded by (seed, epoch)."""
    for name, value in (("seed", seed), ("epoch", epoch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    generator = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, epoch])))
    return generator.permutation(count)


def _pack(
    examples: Sequence[Example],
    order: Sequence[int] | np.ndarray,
    seq_len: int,
    batch_tokens: int,
    pad_id: int,
) -> list[Batch]:
    per_batch = _check_sizes(seq_len, batch_tokens)
    windows = [(examples[int(index)], _windows(examples[int(index)], seq_len)) for index in order]
    rows = sum(len(spans) for _, spans in windows)
    if rows == 0:
        return []
    # One [rows, seq_len] array each for inputs, targets and attention, filled example by example
    # (each example in rows of its own), then every batch is a view of a slice of them.
    inputs = np.full((rows, seq_len), pad_id, dtype=np.int64)
    targets = np.full((rows, seq_len), IGNORE_INDEX, dtype=np.int64)
    attention = np.zeros((rows, seq_len), dtype=np.int64)
    row = 0
    for example, spans in windows:
        tokens = np.asarray(example.tokens, dtype=np.int64)
        mask = np.asarray(example.loss_mask, dtype=bool)
        for start, end in spans:
            width = end - start
            inputs[row, :width] = tokens[start:end]
            targets[row, :width] = np.where(
                mask[start + 1 : end + 1], tokens[start + 1 : end + 1], IGNORE_INDEX
            )
            attention[row, :width] = 1
            row += 1
    counted = targets != IGNORE_INDEX
    for array in (inputs, targets, attention):
        array.flags.writeable = False
    batches = []
    for first in range(0, rows, per_batch):
        last = min(rows, first + per_batch)
        # A batch is as wide as its widest row: columns that are padding in every row are left off.
        width = int(attention[first:last].sum(axis=1).max())
        batches.append(
            Batch(
                input_ids=inputs[first:last, :width],
                labels=targets[first:last, :width],
                attention_mask=attention[first:last, :width],
                target_tokens=int(counted[first:last].sum()),
            )
        )
    return batches


def plan_epoch(
    examples: Sequence[Example],
    *,
    seed: int,
    epoch: int,
    seq_len: int,
    batch_tokens: int,
    pad_id: int = PAD_ID,
) -> list[Batch]:
    """The batches of ``epoch`` (0-based), shuffled by ``(seed, epoch)``, in the order they are
    trained; ``pad_id`` is the run's tokenizer's padding id."""
    order = epoch_order(len(examples), seed=seed, epoch=epoch)
    return _pack(examples, order, seq_len, batch_tokens, pad_id)


def validation_batches(
    examples: Sequence[Example], *, seq_len: int, batch_tokens: int, pad_id: int = PAD_ID
) -> list[Batch]:
    """The validation split packed the same way, in its own order (no shuffle)."""
    return _pack(examples, range(len(examples)), seq_len, batch_tokens, pad_id)


def mean_loss(avg_losses: Sequence[float], batches: Sequence[Batch]) -> float:
    """The token-weighted mean of per-batch average losses (what one big forward would report)."""
    if len(avg_losses) != len(batches):
        raise ValueError("one loss per batch is needed")
    total = sum(batch.target_tokens for batch in batches)
    if total == 0:
        raise ValueError("the batches hold no target tokens")
    weighted = sum(loss * batch.target_tokens for loss, batch in zip(avg_losses, batches, strict=True))
    return float(weighted / total)


# --- scoring label values ------------------------------------------------------------------------


def candidate_batch(
    prompt: Sequence[int],
    candidates: Sequence[Sequence[int]],
    *,
    max_len: int | None = None,
    pad_id: int = PAD_ID,
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """One forward's ``input_ids`` and ``attention_mask`` ``[C, L]`` (prompt + candidate, ``pad_id`` after),
    and per candidate its span ``(row, start, end)`` in the ``logprobs`` the forward returns.

    ``logprobs[row, i]`` is the log-probability of ``input_ids[row, i + 1]``, so the candidate
    tokens at positions ``p .. p + n - 1`` (``p = len(prompt)``) are read at ``p - 1 .. p + n - 2``.
    With ``max_len``, the prompt loses tokens from its start so the longest row fits.
    """
    if not candidates:
        raise ValueError("at least one candidate is needed")
    if any(len(candidate) == 0 for candidate in candidates):
        raise ValueError("a candidate needs at least one token")
    longest = max(len(candidate) for candidate in candidates)
    kept = list(prompt)
    if max_len is not None:
        room = max_len - longest
        if room < 1:
            raise ValueError(f"max_len {max_len} leaves no room for a prompt before {longest} tokens")
        kept = kept[-room:]
    if not kept:
        raise ValueError("the prompt needs at least one token")
    width = len(kept) + longest
    input_ids = np.full((len(candidates), width), pad_id, dtype=np.int64)
    attention = np.zeros((len(candidates), width), dtype=np.int64)
    spans = []
    start = len(kept) - 1
    for row, candidate in enumerate(candidates):
        length = len(kept) + len(candidate)
        input_ids[row, : len(kept)] = kept
        input_ids[row, len(kept) : length] = list(candidate)
        attention[row, :length] = 1
        spans.append((row, start, start + len(candidate)))
    return input_ids, attention, spans


def candidate_scores(logprobs: np.ndarray, spans: Sequence[tuple[int, int, int]]) -> list[float]:
    """Summed log-probability of each candidate's tokens, read from a ``[C, L - 1]`` logprobs array."""
    values = np.asarray(logprobs, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"logprobs must have shape [batch, seq_len - 1], got {values.shape}")
    scores = []
    for row, start, end in spans:
        if row >= values.shape[0] or end > values.shape[1] or start < 0:
            raise ValueError(f"span {(row, start, end)} lies outside logprobs of shape {values.shape}")
        scores.append(float(values[row, start:end].sum()))
    return scores


def best_candidate(scores: Sequence[float]) -> int:
    """Index of the highest score; the first one on a tie, so the choice is deterministic."""
    if not scores:
        raise ValueError("no scores")
    return int(np.argmax(np.asarray(scores, dtype=np.float64)))
