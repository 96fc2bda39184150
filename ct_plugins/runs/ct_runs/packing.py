"""Tokenizing and packing a run's rows into forward-backward batches, and scoring label values.

Everything here is pure and deterministic: the same rows, seed and epoch give the same batches on
every machine with the same numpy, which is what exact resume replays.

**Tokens.** The byte tokenizer of ``ct_core.data.payloads`` (the vocabulary the local tiny model
uses): ids 0-255 are UTF-8 bytes, then PAD, BOS and EOS. One row becomes one :class:`Example`::

    BOS, text bytes, then for each selected label field in order: "\\n" field ": " value, then EOS

Every token after BOS is a training target (predicted from everything before it), the label parts
included: the label value after the text is the supervised "prediction head" of that label. BOS is
not a target, so the EOS-to-BOS seam between two packed examples teaches nothing.

**Packing.** An epoch shuffles the examples (numpy PCG64 seeded from ``(seed, epoch)`` alone),
concatenates them into one token stream of ``N`` tokens, and cuts the ``N - 1`` positions that
have a next token into rows of ``seq_len`` inputs. Row ``r`` reads stream positions
``[r * seq_len, (r + 1) * seq_len)`` and its labels are the next tokens, positions
``[r * seq_len + 1, (r + 1) * seq_len + 1)``, already aligned to the predictions as the trainer
expects (``labels[:, i]`` is the target of position ``i``; ``-100`` where there is none). So the
rows are ``seq_len`` wide, every target of the stream is used exactly once, and only the final row
is padded (PAD inputs, attention 0, label -100). ``batch_tokens // seq_len`` rows (at least 1) make
a batch; the last, partial batch is kept. ``N`` is the sum of the example lengths, independent of
the order, so every epoch has the same number of batches (:func:`steps_per_epoch`).

Documents share a row without an attention barrier between them (plain causal packing).

**Label scoring.** Validation scores each candidate value of a label by the summed forward
log-probability of its tokens after the prompt; :func:`candidate_batch` builds one forward with all
candidates and :func:`candidate_scores` reads the sums back from the server's ``logprobs``
(``logprobs[:, i]`` is the log-probability of ``input_ids[:, i + 1]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ct_core.data.payloads import BYTE_PAD_ID, DEFAULT_IGNORE_INDEX

#: Row of a dataset split: ``{"text": str, "labels": {field: value}}``.
Row = Mapping[str, Any]

#: Padding id of the byte vocabulary (from ct_core's byte tokenizer).
PAD_ID = BYTE_PAD_ID
#: Begin and end of sequence: the two ids right after PAD in the byte vocabulary. ct_core.data.payloads
#: names only the pad id; a test checks these against the local tiny model's vocabulary.
BOS_ID = BYTE_PAD_ID + 1
EOS_ID = BYTE_PAD_ID + 2
#: Label id the trainer skips.
IGNORE_INDEX = DEFAULT_IGNORE_INDEX
#: Name of the tokenizer, as the run config records it.
TOKENIZER = "byte"
#: Version of the encoding and packing rules above; part of the run config, so a change of rules
#: gives a new fingerprint instead of silently replaying an old run differently.
PACKING_VERSION = "byte-concat-1"

_NEWLINE = list(b"\n")
_SEPARATOR = list(b": ")


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


def _label_part(field: str, value: Any) -> list[int]:
    """``"\\n" field ": " value`` as tokens."""
    return [*_label_header(field), *_text_bytes(value, f"label {field!r}")]


def _label_header(field: str) -> list[int]:
    return [*_NEWLINE, *_text_bytes(field, "a label field"), *_SEPARATOR]


def encode_example(row: Row, label_fields: Sequence[str]) -> Example:
    """Tokenize one row: BOS, text, each selected label part in order, EOS; every token but BOS a target.

    A row without a value for a selected field (absent or null) simply has no part for it.
    """
    tokens = [BOS_ID, *_row_text(row)]
    labels = _row_labels(row)
    for field in label_fields:
        value = labels.get(field)
        if value is not None:
            tokens.extend(_label_part(field, value))
    tokens.append(EOS_ID)
    return Example(tuple(tokens), (0, *([1] * (len(tokens) - 1))))


def encode_rows(rows: Sequence[Row], label_fields: Sequence[str]) -> list[Example]:
    """:func:`encode_example` over every row, in order."""
    return [encode_example(row, label_fields) for row in rows]


def label_prompt(row: Row, field: str, *, label_fields: Sequence[str] | None = None) -> list[int]:
    """The prompt a value of ``field`` is scored after: ``BOS text "\\n" field ": "``.

    With ``label_fields`` (the run's selected fields, in order), the parts of the fields before
    ``field`` are included with their true values, which is the context the model was trained in;
    without it, only the text precedes the field (the same thing for the first field).
    """
    tokens = [BOS_ID, *_row_text(row)]
    if label_fields is not None:
        if field not in label_fields:
            raise ValueError(f"label field {field!r} is not among the run's label fields")
        labels = _row_labels(row)
        for earlier in label_fields[: list(label_fields).index(field)]:
            value = labels.get(earlier)
            if value is not None:
                tokens.extend(_label_part(earlier, value))
    tokens.extend(_label_header(field))
    return tokens


def label_value_tokens(value: str, *, last: bool = True) -> list[int]:
    """A candidate value's tokens, with the token that follows it in training as its terminator.

    The terminator (EOS after the last label part, the next part's newline otherwise) is what makes
    a value and its prefixes distinguishable: without it "ab" could never beat "a".
    """
    return [*_text_bytes(value, "a label value"), *([EOS_ID] if last else _NEWLINE)]


def label_candidates(
    row: Row, field: str, values: Sequence[str], label_fields: Sequence[str]
) -> tuple[list[int], list[list[int]]]:
    """Prompt and candidate token lists for scoring every value of ``field`` on ``row``, as trained."""
    fields = list(label_fields)
    labels = _row_labels(row)
    later = fields[fields.index(field) + 1 :] if field in fields else []
    last = not any(labels.get(other) is not None for other in later)
    prompt = label_prompt(row, field, label_fields=fields)
    return prompt, [label_value_tokens(value, last=last) for value in values]


# --- packing -------------------------------------------------------------------------------------


def train_tokens(examples: Sequence[Example]) -> int:
    """Tokens in the packed stream of one epoch (the same every epoch)."""
    return sum(len(example.tokens) for example in examples)


def _check_sizes(seq_len: int, batch_tokens: int) -> int:
    for name, value in (("seq_len", seq_len), ("batch_tokens", batch_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return max(1, batch_tokens // seq_len)


def rows_per_batch(*, seq_len: int, batch_tokens: int) -> int:
    """Rows of one batch: ``max(1, batch_tokens // seq_len)``."""
    return _check_sizes(seq_len, batch_tokens)


def _row_count(stream_tokens: int, seq_len: int) -> int:
    positions = max(0, stream_tokens - 1)  # positions that have a next token
    return -(-positions // seq_len)


def steps_per_epoch(examples: Sequence[Example], *, seq_len: int, batch_tokens: int) -> int:
    """Batches (optimizer steps) of one epoch, without building them."""
    per_batch = _check_sizes(seq_len, batch_tokens)
    return -(-_row_count(train_tokens(examples), seq_len) // per_batch)


def epoch_order(count: int, *, seed: int, epoch: int) -> np.ndarray:
    """The shuffled order of ``count`` examples in ``epoch`` (0-based): PCG64 seeded by (seed, epoch)."""
    for name, value in (("seed", seed), ("epoch", epoch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    generator = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, epoch])))
    return generator.permutation(count)


def _stream(examples: Sequence[Example], order: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    total = train_tokens(examples)
    tokens = np.empty(total, dtype=np.int64)
    mask = np.empty(total, dtype=bool)
    at = 0
    for index in order:
        example = examples[int(index)]
        end = at + len(example.tokens)
        tokens[at:end] = example.tokens
        mask[at:end] = np.asarray(example.loss_mask, dtype=bool)
        at = end
    return tokens, mask


def _pack(tokens: np.ndarray, mask: np.ndarray, seq_len: int, batch_tokens: int) -> list[Batch]:
    per_batch = _check_sizes(seq_len, batch_tokens)
    rows = _row_count(len(tokens), seq_len)
    if rows == 0:
        return []
    width = rows * seq_len
    # Inputs are the stream's positions; targets the next tokens where they are targets. Both are
    # padded once to whole rows, then every batch is a reshaped view of them (no per-batch copies).
    inputs = np.full(width, PAD_ID, dtype=np.int64)
    targets = np.full(width, IGNORE_INDEX, dtype=np.int64)
    attention = np.zeros(width, dtype=np.int64)
    used = len(tokens) - 1
    inputs[:used] = tokens[:used]
    targets[:used] = np.where(mask[1:], tokens[1:], IGNORE_INDEX)
    attention[:used] = 1
    counted = targets != IGNORE_INDEX
    for array in (inputs, targets, attention):
        array.flags.writeable = False
    batches = []
    for first in range(0, rows, per_batch):
        last = min(rows, first + per_batch)
        span = slice(first * seq_len, last * seq_len)
        shape = (last - first, seq_len)
        batches.append(
            Batch(
                input_ids=inputs[span].reshape(shape),
                labels=targets[span].reshape(shape),
                attention_mask=attention[span].reshape(shape),
                target_tokens=int(counted[span].sum()),
            )
        )
    return batches


def plan_epoch(
    examples: Sequence[Example], *, seed: int, epoch: int, seq_len: int, batch_tokens: int
) -> list[Batch]:
    """The batches of ``epoch`` (0-based), shuffled by ``(seed, epoch)``, in the order they are trained."""
    tokens, mask = _stream(examples, epoch_order(len(examples), seed=seed, epoch=epoch))
    return _pack(tokens, mask, seq_len, batch_tokens)


def validation_batches(examples: Sequence[Example], *, seq_len: int, batch_tokens: int) -> list[Batch]:
    """The validation split packed the same way, in its own order (no shuffle)."""
    tokens, mask = _stream(examples, range(len(examples)))
    return _pack(tokens, mask, seq_len, batch_tokens)


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
    prompt: Sequence[int], candidates: Sequence[Sequence[int]], *, max_len: int | None = None
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """One forward's ``input_ids`` and ``attention_mask`` ``[C, L]`` (prompt + candidate, PAD after),
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
    input_ids = np.full((len(candidates), width), PAD_ID, dtype=np.int64)
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
