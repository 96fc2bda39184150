"""Dataset builds: a JSONL file becomes fingerprinted train and validation splits behind leakage gates.

Pure computation, no HTTP and no database: the service hands :func:`build_dataset` the uploaded
bytes and the options parsed from the request (:func:`options_from_query`), and stores the
:class:`DatasetBuild` it returns. Every refusal is a :class:`ct_runs.errors.RunsRefusal` with code
``invalid_argument`` that names the query parameter, or the file's line, at fault; a build either
succeeds as a whole or refuses as a whole, so a half-read file never becomes a dataset.

What a build does, in order:

1. Parse the file: UTF-8, one JSON object per line, blank lines skipped. The first row decides the
   file's format and every other row must have the same (:data:`FORMATS`): **text** (the text
   field, a non-empty string), **labels** (the text field and every label field, a string or a
   number kept as a string), **chat** (``messages``: system, user and assistant turns, an
   assistant turn optionally weighted 0 or 1) or **prompt/completion**. A chat row's text is its
   conversation rendered in the tiny model's chat template (``ct_core.chat_template``, with the
   end of turn spelled ``<|end|>``); a prompt/completion row's text is the prompt
   followed by the completion. That text is what the gates compare and the token counts measure.
2. Split it by seed: each row's index is hashed with the seed and the rows with the smallest
   hashes go to validation, exactly ``round(val_fraction * rows)`` of them (at least one when there
   are two rows or more). The hash is BLAKE2b of fixed-width integers, so the split depends on
   nothing but the file and the options: no library version or platform changes it.
3. Fingerprint the source bytes and each split's canonical JSON with SHA-256.
4. Run the leakage gates between the splits: exact duplicates of the normalized text, and
   near-duplicates by MinHash over word n-grams (datasketch), confirmed by the estimated Jaccard
   similarity. Violations are reported, not raised: the build succeeds and records them, and a run
   on a build with any violation is refused (:func:`require_leak_free`).
5. Describe each label field as a label with an id and its sorted distinct values.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import math
import re
import unicodedata
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ct_core.constants import DATASET_VAL_FRACTION_MAX
from ct_core.errors import describe_service_error
from ct_runs import templates
from ct_runs.errors import failed_precondition, invalid_argument
from ct_runs.ids import new_id

#: The largest file a build reads (512 MiB), in bytes; the service refuses a bigger upload unread.
MAX_SOURCE_BYTES = 512 * 1024 * 1024

#: At most this many rows in one file: a build holds every row, its hashes and sketches in memory.
MAX_ROWS = 1_000_000
#: The longest text of one row, in UTF-8 bytes (1 MiB): longer is a document, not a training row.
MAX_TEXT_BYTES = 1 << 20
#: Longest text field, label field or dataset name, in characters.
MAX_FIELD_NAME_CHARS = 128
MAX_NAME_CHARS = 128
#: At most this many label fields; each becomes a prediction head scored at every validation.
MAX_LABEL_FIELDS = 64
#: At most this many distinct values per label field. A label is a class to predict, and every
#: validation scores each of its values on each validation row, so a field with a value per row
#: (an id, a timestamp) would make validation cost rows x rows forward passes.
MAX_LABEL_VALUES = 256
#: The largest validation fraction (shared with the SDK, which checks it before uploading): beyond
#: half the rows, the "training" split is the smaller one.
MAX_VAL_FRACTION = DATASET_VAL_FRACTION_MAX
#: Seeds are stored as signed 64-bit integers.
MAX_SEED = 2**63 - 1
#: The violation report lists at most this many pairs; the rest are only counted.
MAX_VIOLATIONS = 1_000
#: The MinHash permutations are drawn from this fixed seed, so the near-duplicate gate (and its
#: similarities) are the same on every build of the same file; it is not the split seed.
MINHASH_SEED = 1

#: The query parameters of a build request (``label_field`` may repeat).
QUERY_PARAMETERS = ("text_field", "label_field", "val_fraction", "seed", "name")

#: {"text": str, "labels": {field: str}}, plus "messages" (chat) or "prompt" and "completion".
Row = dict[str, Any]

#: The formats a file may have, as the Dataset record echoes them.
FORMATS = ("chat", "prompt_completion", "text", "labels")
_FORMAT_NAMES = {
    "chat": "a chat row",
    "prompt_completion": "a prompt/completion row",
    "text": "a text row",
    "labels": "a labels row",
}
#: The keys a chat message may hold.
MESSAGE_KEYS = ("role", "content", "weight")

#: What every refusal of a row's shape ends with: the accepted shapes, an example of each, the limits.
ACCEPTED_ROWS = (
    "each line is one JSON object and every line of a file has the same shape, one of: "
    'chat {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]} '
    '(roles system, user and assistant; an assistant message may add "weight": 0 or 1); '
    'prompt/completion {"prompt": "2+2=", "completion": "4"}; '
    'text {"text": "A sentence to learn."} (another key with text_field); '
    'labels {"text": "Clear skies all day.", "topic": "weather"} (with label_field=topic); '
    f"limits: {MAX_SOURCE_BYTES >> 20} MiB a file, {MAX_ROWS} rows, {MAX_TEXT_BYTES >> 20} MiB of text a row"
)

_UTF8_BOM = b"\xef\xbb\xbf"
_UNSIGNED_INT = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|[0-9]+\.")
_WORD = re.compile(r"\w+")


# --- options -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetOptions:
    """How to read and split one file. Checked on construction, so an instance is always valid.

    Refusals name the request's query parameter (``label_field`` for an entry of `label_fields`).
    The three last options tune the near-duplicate gate; the service keeps their defaults.
    """

    text_field: str = "text"
    label_fields: tuple[str, ...] = ()
    val_fraction: float = 0.1
    seed: int = 0
    name: str | None = None
    near_duplicate_threshold: float = 0.8
    shingle_size: int = 5
    num_perm: int = 128

    def __post_init__(self) -> None:
        _check_field_name("text_field", self.text_field)
        if isinstance(self.label_fields, str) or not isinstance(self.label_fields, Iterable):
            raise invalid_argument("label_field must be a list of field names", field="label_field")
        labels = tuple(self.label_fields)
        object.__setattr__(self, "label_fields", labels)
        if len(labels) > MAX_LABEL_FIELDS:
            raise invalid_argument(
                f"{len(labels)} label fields given; at most {MAX_LABEL_FIELDS} are allowed",
                field="label_field",
            )
        seen: set[str] = set()
        for label in labels:
            _check_field_name("label_field", label)
            if label == self.text_field:
                raise invalid_argument(
                    f"label field {label!r} is also the text field; a label must be another field",
                    field="label_field",
                )
            if label in seen:
                raise invalid_argument(f"label field {label!r} is given twice", field="label_field")
            seen.add(label)
        fraction = _real("val_fraction", self.val_fraction)
        if not 0 < fraction <= MAX_VAL_FRACTION:
            raise invalid_argument(
                f"val_fraction must be greater than 0 and at most {MAX_VAL_FRACTION}, not {fraction!r}",
                field="val_fraction",
            )
        object.__setattr__(self, "val_fraction", fraction)
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed <= MAX_SEED:
            raise invalid_argument(
                f"seed must be an integer from 0 to {MAX_SEED}, not {self.seed!r}", field="seed"
            )
        if self.name is not None:
            if not isinstance(self.name, str) or not self.name:
                raise invalid_argument("name must be a non-empty string when given", field="name")
            if len(self.name) > MAX_NAME_CHARS:
                raise invalid_argument(
                    f"name is {len(self.name)} characters long; at most {MAX_NAME_CHARS} are allowed",
                    field="name",
                )
            if not self.name.isprintable():
                raise invalid_argument("name must not hold control characters", field="name")
        threshold = _real("near_duplicate_threshold", self.near_duplicate_threshold)
        if not 0 < threshold <= 1:
            raise invalid_argument(
                f"near_duplicate_threshold must be greater than 0 and at most 1, not {threshold!r}",
                field="near_duplicate_threshold",
            )
        object.__setattr__(self, "near_duplicate_threshold", threshold)
        _check_int_range("shingle_size", self.shingle_size, 1, 32)
        _check_int_range("num_perm", self.num_perm, 2, 1024)


def _check_field_name(parameter: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise invalid_argument(f"{parameter} must be a non-empty field name", field=parameter)
    if len(value) > MAX_FIELD_NAME_CHARS:
        raise invalid_argument(
            f"{parameter} {value[:32]!r}... is {len(value)} characters long; "
            f"at most {MAX_FIELD_NAME_CHARS} are allowed",
            field=parameter,
        )
    if not value.isprintable():
        raise invalid_argument(f"{parameter} {value!r} must not hold control characters", field=parameter)


def _real(parameter: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise invalid_argument(f"{parameter} must be a finite number, not {value!r}", field=parameter)
    return float(value)


def _check_int_range(parameter: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid_argument(
            f"{parameter} must be an integer from {low} to {high}, not {value!r}", field=parameter
        )


def options_from_query(query: Mapping[str, str | list[str]]) -> DatasetOptions:
    """The options of a build request from its query string (each value a string or a list of them).

    ``label_field`` may repeat; every other parameter may be given once. An unknown parameter is
    refused rather than ignored, so a misspelt ``label_fields=`` does not silently build a dataset
    without labels.
    """
    for key in query:
        if key not in QUERY_PARAMETERS:
            raise invalid_argument(
                f"unknown query parameter {key!r}; a build takes {', '.join(QUERY_PARAMETERS)}", field=key
            )
    kwargs: dict[str, Any] = {}
    text_field = _single(query, "text_field")
    if text_field is not None:
        kwargs["text_field"] = text_field
    raw_labels = query.get("label_field", [])
    kwargs["label_fields"] = tuple([raw_labels] if isinstance(raw_labels, str) else raw_labels)
    fraction = _single(query, "val_fraction")
    if fraction is not None:
        if not _DECIMAL.fullmatch(fraction):
            raise invalid_argument(
                f"val_fraction must be a decimal number, not {fraction!r}", field="val_fraction"
            )
        kwargs["val_fraction"] = float(fraction)
    seed = _single(query, "seed")
    if seed is not None:
        if not _UNSIGNED_INT.fullmatch(seed):
            raise invalid_argument(f"seed must be a non-negative integer, not {seed!r}", field="seed")
        kwargs["seed"] = int(seed)
    name = _single(query, "name")
    if name is not None:
        kwargs["name"] = name
    return DatasetOptions(**kwargs)


def _single(query: Mapping[str, str | list[str]], key: str) -> str | None:
    value = query.get(key)
    if value is None or isinstance(value, str):
        return value
    values = list(value)
    if len(values) > 1:
        raise invalid_argument(f"{key} is given {len(values)} times; give it once", field=key)
    return values[0] if values else None


# --- the build -----------------------------------------------------------------------------------


@dataclass
class DatasetBuild:
    """The result of a build: the two splits' rows and everything the Dataset record reports.

    Rows are plain JSON-safe dicts ``{"text": str, "labels": {field: str}}`` (with ``messages``
    for chat, ``prompt`` and ``completion`` for prompt/completion) in source order within their
    split; violation rows are indices into `train` and `validation`.
    """

    options: DatasetOptions
    #: One of FORMATS: the shape of every row of the file.
    format: str
    train: list[Row]
    validation: list[Row]
    splits: dict[str, dict[str, int]]
    fingerprints: dict[str, str]
    labels: list[dict[str, Any]]
    violations: list[dict[str, Any]]
    source: dict[str, Any]
    #: How many violations exist beyond the first MAX_VIOLATIONS listed in `violations`.
    violations_truncated: int = 0

    def summary(self) -> dict[str, Any]:
        """The Dataset JSON of this build, without `dataset_id`, `status` and `created_at`.

        ``violations_truncated`` appears only when the report was cut.
        """
        out: dict[str, Any] = {
            "name": self.options.name,
            "format": self.format,
            "source": dict(self.source),
            "text_field": self.options.text_field,
            "label_fields": list(self.options.label_fields),
            "val_fraction": self.options.val_fraction,
            "seed": self.options.seed,
            "splits": {name: dict(split) for name, split in self.splits.items()},
            "fingerprints": dict(self.fingerprints),
            "labels": [{**label, "values": list(label["values"])} for label in self.labels],
            "violations": [dict(v) for v in self.violations],
            "error": None,
        }
        if self.violations_truncated:
            out["violations_truncated"] = self.violations_truncated
        return out


def build_dataset(content: bytes, options: DatasetOptions) -> DatasetBuild:
    """Parse, split, fingerprint and gate one JSONL file; refuses the whole file on any bad line."""
    rows, text_bytes, file_format = _parse(content, options)
    validation_set = set(validation_indices(len(rows), options.val_fraction, options.seed))
    train_idx = [i for i in range(len(rows)) if i not in validation_set]
    val_idx = sorted(validation_set)
    train = [rows[i] for i in train_idx]
    validation = [rows[i] for i in val_idx]
    violations, truncated = leakage_violations(
        [row["text"] for row in train], [row["text"] for row in validation], options
    )
    labels = [
        {"label_id": new_id("lbl"), "field": name, "values": sorted({row["labels"][name] for row in rows})}
        for name in options.label_fields
    ]
    source_sha = hashlib.sha256(content).hexdigest()
    return DatasetBuild(
        options=options,
        format=file_format,
        train=train,
        validation=validation,
        splits={
            "train": {"rows": len(train), "tokens": sum(text_bytes[i] for i in train_idx)},
            "validation": {"rows": len(validation), "tokens": sum(text_bytes[i] for i in val_idx)},
        },
        fingerprints={
            "source": source_sha,
            "train": split_fingerprint(train),
            "validation": split_fingerprint(validation),
        },
        labels=labels,
        violations=violations,
        violations_truncated=truncated,
        source={"bytes": len(content), "sha256": source_sha, "rows": len(rows)},
    )


def require_leak_free(dataset: Mapping[str, Any]) -> None:
    """Refuse (``failed_precondition``, field ``dataset_id``) a Dataset record a run cannot use.

    A run needs a succeeded build whose violation report is empty: the gates fail closed.
    """
    dataset_id = dataset.get("dataset_id", "the dataset")
    status = dataset.get("status")
    if status != "succeeded":
        detail = (
            f": {describe_service_error(dataset['error'])}"
            if status == "failed" and dataset.get("error")
            else ""
        )
        raise failed_precondition(
            f"dataset {dataset_id} is {status}{detail}; a run needs a succeeded build", field="dataset_id"
        )
    violations = dataset.get("violations") or []
    if violations:
        total = len(violations) + int(dataset.get("violations_truncated") or 0)
        first = violations[0]
        raise failed_precondition(
            f"dataset {dataset_id} failed its leakage gates with {total} violation(s), the first a "
            f"{first['gate']} between train row {first['train_row']} and validation row "
            f"{first['validation_row']}; remove the overlap from the file and build it again",
            field="dataset_id",
        )


# --- parsing -------------------------------------------------------------------------------------


class _BadLine(Exception):
    """A problem of one line, raised from inside the JSON decoder's hooks."""


def _no_constants(name: str) -> Any:
    raise _BadLine(f"{name} is not valid JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _BadLine(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return out


#: One decoder for every line (``json.loads`` with options builds a new one per call): JSON's
#: NaN and Infinity extensions and repeated keys are refused.
_DECODER = json.JSONDecoder(parse_constant=_no_constants, object_pairs_hook=_no_duplicate_keys)


def _check_row_count(lines: Sequence[bytes]) -> None:
    """Refuse a file of more than MAX_ROWS rows before parsing any of it, naming the first line over."""
    if len(lines) <= MAX_ROWS:
        return
    rows = 0
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            rows += 1
            if rows > MAX_ROWS:
                raise invalid_argument(
                    f"line {number}: the file has more than {MAX_ROWS} rows, the limit of one build"
                )


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _parse(content: bytes, options: DatasetOptions) -> tuple[list[Row], list[int], str]:
    """The rows of the file, each row's text length in UTF-8 bytes, and the file's format."""
    if not isinstance(content, bytes | bytearray | memoryview):
        raise TypeError("build_dataset takes the file's bytes")
    data = bytes(content)
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    label_fields = options.label_fields
    lines = data.split(b"\n")
    _check_row_count(lines)
    rows: list[Row] = []
    text_bytes: list[int] = []
    distinct: dict[str, set[str]] = {name: set() for name in label_fields}
    file_format: str | None = None
    first_line = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        obj = _decode_line(raw, number)
        row_format = _row_format(obj, options)
        if row_format is None:
            raise _unfit(number, file_format, options)
        if file_format is None:
            file_format, first_line = row_format, number
            if label_fields and row_format in ("chat", "prompt_completion"):
                raise invalid_argument(
                    f"line {number}: label_field applies to text rows, and this file holds "
                    f"{_FORMAT_NAMES[row_format]}s; build it without label_field",
                    field="label_field",
                )
        elif row_format != file_format:
            raise invalid_argument(
                f"line {number}: this is {_FORMAT_NAMES[row_format]}, but line {first_line} is "
                f"{_FORMAT_NAMES[file_format]}: a file holds rows of one format; {ACCEPTED_ROWS}"
            )
        if row_format == "chat":
            row, size = _chat_row(obj, number)
        elif row_format == "prompt_completion":
            row, size = _prompt_completion_row(obj, number)
        else:
            row, size = _text_row(obj, number, options, distinct)
        rows.append(row)
        text_bytes.append(size)
    if not rows or file_format is None:
        raise invalid_argument("the file has no rows: a build needs at least one JSON object line")
    return rows, text_bytes, file_format


def _decode_line(raw: bytes, number: int) -> dict[str, Any]:
    """One line as a JSON object, or the refusal naming the line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid_argument(f"line {number}: not valid UTF-8 (byte {exc.start + 1} of the line)") from None
    try:
        obj = _DECODER.decode(line)
    except _BadLine as exc:
        raise invalid_argument(f"line {number}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise invalid_argument(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise invalid_argument(f"line {number}: the JSON is nested too deeply") from None
    if not isinstance(obj, dict):
        raise invalid_argument(f"line {number}: a row must be a JSON object, not {_json_type(obj)}")
    return obj


def _row_format(obj: Mapping[str, Any], options: DatasetOptions) -> str | None:
    """The format a row has by its keys: the text field first (so ``text_field=prompt`` reads a
    prompt as plain text), then ``messages``, then ``prompt`` or ``completion``; None for none."""
    if options.text_field in obj:
        return "labels" if options.label_fields else "text"
    if "messages" in obj:
        return "chat"
    if "prompt" in obj or "completion" in obj:
        return "prompt_completion"
    return None


def _unfit(number: int, file_format: str | None, options: DatasetOptions) -> Exception:
    """The refusal of a row of none of the accepted shapes, worded after the file's format so far."""
    if file_format == "chat":
        return invalid_argument(
            f"line {number}: the row has no 'messages', which every row of this chat file has; "
            f"{ACCEPTED_ROWS}",
            field="messages",
        )
    if file_format == "prompt_completion":
        return invalid_argument(
            f"line {number}: the row has neither 'prompt' nor 'completion', which every row of this "
            f"prompt/completion file has; {ACCEPTED_ROWS}",
            field="completion",
        )
    return invalid_argument(
        f"line {number}: the text field {options.text_field!r} is missing, and the row has no "
        f"'messages' nor 'prompt' and 'completion' either; {ACCEPTED_ROWS}",
        field=options.text_field,
    )


def _check_size(number: int, what: str, size: int, field: str) -> None:
    if size > MAX_TEXT_BYTES:
        raise invalid_argument(
            f"line {number}: {what} is {size} bytes long; the limit is {MAX_TEXT_BYTES} bytes (1 MiB)",
            field=field,
        )


def _string(obj: Mapping[str, Any], key: str, number: int, what: str, *, field: str) -> str:
    """``obj[key]`` as a string that encodes as UTF-8, or the refusal naming it as ``what``."""
    value = obj.get(key)
    if not isinstance(value, str):
        raise invalid_argument(
            f"line {number}: {what} must be a string, not {_json_type(value)}", field=field
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_argument(
            f"line {number}: {what} holds an unpaired surrogate escape, not text", field=field
        ) from None
    return value


def _text_row(
    obj: Mapping[str, Any], number: int, options: DatasetOptions, distinct: dict[str, set[str]]
) -> tuple[Row, int]:
    text_field = options.text_field
    text = _string(obj, text_field, number, f"the text field {text_field!r}", field=text_field)
    if not text.strip():
        raise invalid_argument(f"line {number}: the text field {text_field!r} is empty", field=text_field)
    size = len(text.encode("utf-8"))
    _check_size(number, f"the text field {text_field!r}", size, text_field)
    labels: dict[str, str] = {}
    for name in options.label_fields:
        value = labels[name] = _label_value(obj, name, number)
        seen = distinct[name]
        if value not in seen:
            if len(seen) == MAX_LABEL_VALUES:
                raise invalid_argument(
                    f"line {number}: the label field {name!r} takes more than {MAX_LABEL_VALUES} "
                    "distinct values; a label is a class to predict (like a sentiment or a topic), "
                    "not a per-row value such as an id",
                    field=name,
                )
            seen.add(value)
    return {"text": text, "labels": labels}, size


def _chat_row(obj: Mapping[str, Any], number: int) -> tuple[Row, int]:
    """A chat row: its checked messages and, as its text, the rendered conversation."""
    messages = obj["messages"]
    if not isinstance(messages, list) or not messages:
        raise invalid_argument(
            f"line {number}: 'messages' must be a non-empty array of messages, not "
            f"{'an empty array' if isinstance(messages, list) else _json_type(messages)}; {ACCEPTED_ROWS}",
            field="messages",
        )
    checked: list[dict[str, Any]] = []
    for index, message in enumerate(messages, start=1):
        where = f"message {index}"
        if not isinstance(message, dict):
            raise invalid_argument(
                f"line {number}: {where} must be an object, not {_json_type(message)}; {ACCEPTED_ROWS}",
                field="messages",
            )
        unknown = sorted(key for key in message if key not in MESSAGE_KEYS)
        if unknown:
            raise invalid_argument(
                f"line {number}: {where} has the key {unknown[0]!r}; a message holds role, content "
                "and, on an assistant message, weight",
                field="messages",
            )
        role = message.get("role")
        if role not in templates.ROLES:
            raise invalid_argument(
                f"line {number}: {where} has the role {role!r}; a role is system, user or assistant",
                field="messages",
            )
        content = _string(message, "content", number, f"the content of {where}", field="messages")
        if not content.strip():
            raise invalid_argument(f"line {number}: the content of {where} is empty", field="messages")
        entry: dict[str, Any] = {"role": role, "content": content}
        if "weight" in message:
            weight = message["weight"]
            if role != templates.TRAINED_ROLE:
                raise invalid_argument(
                    f"line {number}: {where} is a {role} message with a weight; only assistant "
                    "messages are weighted (a weight says whether the model learns that answer)",
                    field="messages",
                )
            if isinstance(weight, bool) or weight not in (0, 1):
                raise invalid_argument(
                    f"line {number}: the weight of {where} must be 0 or 1, not {weight!r}", field="messages"
                )
            entry["weight"] = int(weight)
        checked.append(entry)
    if not any(m["role"] == templates.TRAINED_ROLE and m.get("weight", 1) == 1 for m in checked):
        raise invalid_argument(
            f"line {number}: the conversation has no assistant message of weight 1, so nothing to "
            "learn from it; add the answer the model should give",
            field="messages",
        )
    text = templates.render(checked)
    size = len(text.encode("utf-8"))
    _check_size(number, "the rendered conversation", size, "messages")
    return {"text": text, "labels": {}, "messages": checked}, size


def _prompt_completion_row(obj: Mapping[str, Any], number: int) -> tuple[Row, int]:
    """A prompt/completion row; its text is the prompt followed by the completion."""
    for key in ("prompt", "completion"):
        if key not in obj:
            raise invalid_argument(
                f"line {number}: a prompt/completion row needs both 'prompt' and 'completion', and "
                f"{key!r} is missing; {ACCEPTED_ROWS}",
                field=key,
            )
    prompt = _string(obj, "prompt", number, "'prompt'", field="prompt")
    completion = _string(obj, "completion", number, "'completion'", field="completion")
    if not completion.strip():
        raise invalid_argument(f"line {number}: 'completion' is empty", field="completion")
    text = prompt + completion
    size = len(text.encode("utf-8"))
    _check_size(number, "the prompt and completion together", size, "completion")
    return {"text": text, "labels": {}, "prompt": prompt, "completion": completion}, size


def _label_value(obj: Mapping[str, Any], name: str, number: int) -> str:
    if name not in obj:
        raise invalid_argument(f"line {number}: the label field {name!r} is missing", field=name)
    value = obj[name]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise invalid_argument(
            f"line {number}: the label field {name!r} must be a string or a number, not {_json_type(value)}",
            field=name,
        )
    text = value if isinstance(value, str) else str(value)
    if not text.strip():
        raise invalid_argument(f"line {number}: the label field {name!r} is empty", field=name)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_argument(
            f"line {number}: the label field {name!r} holds an unpaired surrogate escape, not text",
            field=name,
        ) from None
    return text


# --- split and fingerprints ----------------------------------------------------------------------


def validation_count(rows: int, val_fraction: float) -> int:
    """How many of `rows` go to validation: round(val_fraction × rows), at least 1 from two rows on.

    Python's `round` (half to even). With a fraction of at most one half the training split
    always keeps at least one row.
    """
    count = round(val_fraction * rows)
    if rows >= 2:
        count = max(count, 1)
    return min(count, max(rows - 1, 0))


def validation_indices(rows: int, val_fraction: float, seed: int) -> list[int]:
    """The source indices of the validation rows, ascending.

    Each index gets the key BLAKE2b(seed, index) (both as 8-byte big-endian integers); the rows
    with the smallest keys are the validation split. The key of a row depends on its index and the
    seed only, so the split is reproducible anywhere, forever.
    """
    count = validation_count(rows, val_fraction)
    prefix = seed.to_bytes(8, "big")

    def key(index: int) -> bytes:
        return hashlib.blake2b(
            prefix + index.to_bytes(8, "big"), digest_size=16, person=b"ct-dataset-split"
        ).digest()

    chosen = heapq.nsmallest(count, range(rows), key=key)
    return sorted(chosen)


def canonical_row(row: Row) -> bytes:
    """A row as canonical JSON: keys sorted, no insignificant whitespace, UTF-8."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def split_fingerprint(rows: Sequence[Row]) -> str:
    """SHA-256 hex of the split's rows as one canonical JSON array, in split order."""
    digest = hashlib.sha256(b"[")
    for index, row in enumerate(rows):
        if index:
            digest.update(b",")
        digest.update(canonical_row(row))
    digest.update(b"]")
    return digest.hexdigest()


# --- leakage gates -------------------------------------------------------------------------------


def normalize_text(text: str) -> str:
    """The form both gates compare: NFKC, case-folded, whitespace runs collapsed to one space, stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def shingles(normalized: str, size: int) -> set[bytes]:
    """The word `size`-grams of a normalized text (words: runs of letters, digits and underscores).

    A text of fewer words is one shingle of all its words; a text without words is one shingle
    of itself. So every text has at least one shingle and short texts compare as wholes.
    """
    words = _WORD.findall(normalized)
    if not words:
        return {normalized.encode("utf-8")}
    if len(words) <= size:
        return {" ".join(words).encode("utf-8")}
    return {" ".join(words[i : i + size]).encode("utf-8") for i in range(len(words) - size + 1)}


def leakage_violations(
    train: Sequence[str], validation: Sequence[str], options: DatasetOptions
) -> tuple[list[dict[str, Any]], int]:
    """Pairs of a train text and a validation text that leak, sorted, and how many were left off.

    Texts are grouped by the hash of their normalized form first: a group present in both splits
    gives exact duplicates, and the near-duplicate gate compares one sketch per group, so a text
    repeated a thousand times costs one sketch and its exact pairs are never reported twice. The
    list holds the first MAX_VIOLATIONS pairs by (train_row, validation_row); the count covers the
    rest.
    """
    if not train or not validation:
        return [], 0
    train_groups = _groups(train)
    val_groups = _groups(validation)
    # (train rows, validation rows, gate, similarity) per pair of groups that leak.
    blocks: list[tuple[list[int], list[int], str, float]] = []
    for digest, val_rows in val_groups.items():
        train_rows = train_groups.get(digest)
        if train_rows is not None:
            blocks.append((train_rows, val_rows, "exact_duplicate", 1.0))
    blocks.extend(_near_blocks(train, validation, train_groups, val_groups, options))
    total = sum(len(t) * len(v) for t, v, _, _ in blocks)
    pairs = heapq.merge(*(_block_pairs(block) for block in blocks))
    shown = [
        {"gate": gate, "train_row": t, "validation_row": v, "similarity": similarity}
        for t, v, gate, similarity in itertools.islice(pairs, MAX_VIOLATIONS)
    ]
    return shown, total - len(shown)


def _groups(texts: Sequence[str]) -> dict[bytes, list[int]]:
    """Row indices by the SHA-256 of their normalized text, in first-seen order, rows ascending."""
    groups: dict[bytes, list[int]] = {}
    for index, text in enumerate(texts):
        digest = hashlib.sha256(normalize_text(text).encode("utf-8")).digest()
        groups.setdefault(digest, []).append(index)
    return groups


def _block_pairs(block: tuple[list[int], list[int], str, float]) -> Iterator[tuple[int, int, str, float]]:
    train_rows, val_rows, gate, similarity = block
    for t in train_rows:
        for v in val_rows:
            yield t, v, gate, similarity


def _near_blocks(
    train: Sequence[str],
    validation: Sequence[str],
    train_groups: Mapping[bytes, list[int]],
    val_groups: Mapping[bytes, list[int]],
    options: DatasetOptions,
) -> list[tuple[list[int], list[int], str, float]]:
    """Blocks of near-duplicate pairs: LSH candidates whose estimated Jaccard reaches the threshold."""
    from datasketch import MinHash, MinHashLSH

    threshold, size = options.near_duplicate_threshold, options.shingle_size
    # One sketch is reused row after row (the LSH index keeps only its band hashes, taken at
    # insertion). The scheme and the permutations' seed are pinned: datasketch changed its default
    # scheme once, and the gate must not move with a library upgrade. Shingles are hashed with
    # CRC-32, a fixed function that datasketch's own mixing step spreads before the permutations;
    # it costs a fraction of SHA-1 in a loop over millions of shingles.
    sketch = MinHash(num_perm=options.num_perm, seed=MINHASH_SEED, scheme="affine32", hashfunc=zlib.crc32)
    lsh = MinHashLSH(threshold=threshold, num_perm=options.num_perm)
    train_keys = list(train_groups)
    train_values = np.empty((len(train_keys), options.num_perm), dtype=np.uint32)
    with lsh.insertion_session() as session:
        for position, key in enumerate(train_keys):
            sketch.clear()
            sketch.update_batch(shingles(normalize_text(train[train_groups[key][0]]), size))
            session.insert(position, sketch, check_duplication=False)
            train_values[position] = sketch.hashvalues
    blocks: list[tuple[list[int], list[int], str, float]] = []
    for val_key, val_rows in val_groups.items():
        sketch.clear()
        sketch.update_batch(shingles(normalize_text(validation[val_rows[0]]), size))
        candidates = sorted(c for c in lsh.query(sketch) if train_keys[c] != val_key)
        if not candidates:
            continue
        # The estimate datasketch's MinHash.jaccard gives: the share of equal minimum hashes.
        equal = np.count_nonzero(train_values[candidates] == sketch.hashvalues, axis=1)
        for position, count in zip(candidates, equal.tolist(), strict=True):
            similarity = count / options.num_perm
            if similarity >= threshold:
                blocks.append(
                    (train_groups[train_keys[position]], val_rows, "near_duplicate", round(similarity, 6))
                )
    return blocks
