"""Dataset builds: parsing, the seeded split, fingerprints, both leakage gates, labels and every refusal.

Files are real JSONL files written under tmp_path and read back, as the service reads an upload.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from ct_runs import datasets, ids
from ct_runs.datasets import DatasetOptions, build_dataset, options_from_query, require_leak_free
from ct_runs.errors import RunsRefusal

# --- helpers -------------------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[Any]) -> bytes:
    """Write one JSON value per line to `path` and hand back the bytes on disk."""
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path.read_bytes()


def words_text(rng: random.Random, count: int = 60) -> str:
    """A text of `count` words drawn from a large vocabulary: two such texts share almost nothing."""
    return " ".join(f"w{rng.randrange(100_000)}" for _ in range(count))


def distinct_rows(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"text": words_text(rng)} for _ in range(count)]


def split_positions(rows: int, options: DatasetOptions) -> tuple[list[int], list[int]]:
    """Source indices of the train rows and of the validation rows, as the build will split them."""
    validation = datasets.validation_indices(rows, options.val_fraction, options.seed)
    return [i for i in range(rows) if i not in set(validation)], validation


def refusal(content: bytes, options: DatasetOptions | None = None) -> RunsRefusal:
    with pytest.raises(RunsRefusal) as caught:
        build_dataset(content, options or DatasetOptions())
    assert caught.value.code == "invalid_argument"
    assert caught.value.status == 400
    return caught.value


# --- split ---------------------------------------------------------------------------------------


def test_same_file_and_options_give_the_same_split_and_fingerprints(tmp_path: Path) -> None:
    content = write_jsonl(tmp_path / "data.jsonl", distinct_rows(200))
    options = DatasetOptions(seed=3)
    first, second = build_dataset(content, options), build_dataset(content, options)
    assert first.train == second.train
    assert first.validation == second.validation
    assert first.fingerprints == second.fingerprints
    assert first.splits == second.splits


def test_another_seed_gives_another_split_of_the_same_size(tmp_path: Path) -> None:
    content = write_jsonl(tmp_path / "data.jsonl", distinct_rows(200))
    a = build_dataset(content, DatasetOptions(seed=0))
    b = build_dataset(content, DatasetOptions(seed=1))
    assert a.splits["validation"]["rows"] == b.splits["validation"]["rows"] == 20
    assert a.validation != b.validation
    assert a.fingerprints["validation"] != b.fingerprints["validation"]
    assert a.fingerprints["source"] == b.fingerprints["source"]


def test_the_split_is_pinned_for_known_seeds() -> None:
    # The rule is a hash of (seed, row index), not a library's random stream: these never move.
    assert datasets.validation_indices(20, 0.1, 0) == [13, 17]
    assert datasets.validation_indices(20, 0.25, 9) == [2, 12, 14, 16, 19]
    assert datasets.validation_indices(10, 0.3, 123456789) == [1, 2, 5]


@pytest.mark.parametrize(
    ("rows", "fraction", "expected"),
    [
        (1, 0.1, 0),
        (2, 0.1, 1),
        (3, 0.5, 2),
        (10, 0.1, 1),
        (10, 0.5, 5),
        (25, 0.1, 2),
        (95, 0.1, 10),
        (1000, 0.25, 250),
    ],
)
def test_validation_gets_round_fraction_times_rows_and_at_least_one_from_two_rows(
    tmp_path: Path, rows: int, fraction: float, expected: int
) -> None:
    content = write_jsonl(tmp_path / "data.jsonl", distinct_rows(rows))
    build = build_dataset(content, DatasetOptions(val_fraction=fraction))
    assert build.splits["validation"]["rows"] == expected
    assert build.splits["train"]["rows"] == rows - expected
    assert build.source["rows"] == rows


def test_splits_partition_the_rows_in_source_order(tmp_path: Path) -> None:
    source = distinct_rows(50)
    content = write_jsonl(tmp_path / "data.jsonl", source)
    options = DatasetOptions(val_fraction=0.2, seed=11)
    build = build_dataset(content, options)
    train_idx, val_idx = split_positions(50, options)
    assert [row["text"] for row in build.train] == [source[i]["text"] for i in train_idx]
    assert [row["text"] for row in build.validation] == [source[i]["text"] for i in val_idx]
    assert all(row["labels"] == {} for row in build.train + build.validation)


# --- fingerprints and token counts ---------------------------------------------------------------


def test_fingerprints_are_sha256_of_the_source_bytes_and_of_each_split_as_canonical_json(
    tmp_path: Path,
) -> None:
    rows = [{"text": f"row number {i} ünïcode", "label": "a" if i % 2 else "b"} for i in range(30)]
    content = write_jsonl(tmp_path / "data.jsonl", rows)
    build = build_dataset(content, DatasetOptions(label_fields=("label",)))
    source_sha = hashlib.sha256(content).hexdigest()
    assert build.fingerprints["source"] == build.source["sha256"] == source_sha
    assert build.source["bytes"] == len(content)
    for split in ("train", "validation"):
        canonical = json.dumps(
            getattr(build, split), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")
        assert build.fingerprints[split] == hashlib.sha256(canonical).hexdigest()


def test_changing_one_label_changes_only_its_splits_fingerprint(tmp_path: Path) -> None:
    rows = [{"text": f"row {i}", "label": "x"} for i in range(30)]
    options = DatasetOptions(label_fields=("label",))
    before = build_dataset(write_jsonl(tmp_path / "a.jsonl", rows), options)
    train_idx, _ = split_positions(30, options)
    rows[train_idx[0]]["label"] = "y"
    after = build_dataset(write_jsonl(tmp_path / "b.jsonl", rows), options)
    assert after.fingerprints["train"] != before.fingerprints["train"]
    assert after.fingerprints["validation"] == before.fingerprints["validation"]
    assert after.fingerprints["source"] != before.fingerprints["source"]


def test_tokens_count_the_utf8_bytes_of_the_text_only(tmp_path: Path) -> None:
    rows = [{"text": "é" * (i + 1), "label": "long label value " * 5} for i in range(10)]
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), DatasetOptions(label_fields=("label",)))
    for split in ("train", "validation"):
        assert build.splits[split]["tokens"] == sum(
            len(r["text"].encode("utf-8")) for r in getattr(build, split)
        )
    assert build.splits["train"]["tokens"] + build.splits["validation"]["tokens"] == 2 * sum(range(1, 11))


# --- exact-duplicate gate ------------------------------------------------------------------------


def test_exact_duplicates_across_splits_are_found_after_normalization(tmp_path: Path) -> None:
    rows = distinct_rows(40)
    options = DatasetOptions(val_fraction=0.25)
    train_idx, val_idx = split_positions(40, options)
    rows[val_idx[1]] = {"text": "The Quick  brown\tfox jumps"}
    # Full-width letters (NFKC), other case (casefold), other whitespace: the same normalized text.
    rows[train_idx[3]] = {"text": "  ＴＨＥ quick brown\n\nFOX   jumps "}
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), options)
    assert build.violations == [
        {"gate": "exact_duplicate", "train_row": 3, "validation_row": 1, "similarity": 1.0}
    ]
    assert build.violations_truncated == 0


def test_duplicates_within_one_split_are_not_violations(tmp_path: Path) -> None:
    rows = distinct_rows(40)
    options = DatasetOptions(val_fraction=0.25)
    train_idx, val_idx = split_positions(40, options)
    rows[train_idx[1]] = rows[train_idx[5]] = {"text": "same text twice in train"}
    rows[val_idx[0]] = rows[val_idx[2]] = {"text": "same text twice in validation"}
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), options)
    assert build.violations == []


def test_distinct_texts_give_no_violations(tmp_path: Path) -> None:
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", distinct_rows(300)), DatasetOptions())
    assert build.violations == []
    assert build.summary()["violations"] == []


# --- near-duplicate gate -------------------------------------------------------------------------


def test_a_near_duplicate_across_splits_is_found_with_its_similarity(tmp_path: Path) -> None:
    rng = random.Random(5)
    rows = distinct_rows(60)
    options = DatasetOptions(val_fraction=0.2)
    train_idx, val_idx = split_positions(60, options)
    words = words_text(rng, 120).split()
    edited = list(words)
    edited[60] = "changed"
    rows[val_idx[2]] = {"text": " ".join(words)}
    rows[train_idx[7]] = {"text": " ".join(edited) + "!"}
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), options)
    assert len(build.violations) == 1
    violation = build.violations[0]
    assert (violation["gate"], violation["train_row"], violation["validation_row"]) == (
        "near_duplicate",
        7,
        2,
    )
    assert options.near_duplicate_threshold <= violation["similarity"] < 1.0


def test_texts_sharing_little_are_not_near_duplicates(tmp_path: Path) -> None:
    rng = random.Random(9)
    rows = distinct_rows(60)
    options = DatasetOptions(val_fraction=0.2)
    train_idx, val_idx = split_positions(60, options)
    words = words_text(rng, 100).split()
    # Every tenth word changed: about half the 5-word shingles differ, far below 0.8.
    edited = [("x" + w if i % 10 == 5 else w) for i, w in enumerate(words)]
    rows[val_idx[0]] = {"text": " ".join(words)}
    rows[train_idx[0]] = {"text": " ".join(edited)}
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), options)
    assert build.violations == []


def test_the_threshold_decides(tmp_path: Path) -> None:
    rng = random.Random(13)
    rows = distinct_rows(60)
    train_idx, val_idx = split_positions(60, DatasetOptions(val_fraction=0.2))
    words = words_text(rng, 100).split()
    edited = [("x" + w if i % 10 == 5 else w) for i, w in enumerate(words)]
    rows[val_idx[0]] = {"text": " ".join(words)}
    rows[train_idx[0]] = {"text": " ".join(edited)}
    content = write_jsonl(tmp_path / "d.jsonl", rows)
    loose = build_dataset(content, DatasetOptions(val_fraction=0.2, near_duplicate_threshold=0.2))
    assert [v["gate"] for v in loose.violations] == ["near_duplicate"]
    assert build_dataset(content, DatasetOptions(val_fraction=0.2)).violations == []


def test_violations_are_sorted_deterministic_and_capped_with_a_count(tmp_path: Path) -> None:
    # 1,200 copies of one text: 1,080 train rows times 120 validation rows leak.
    content = write_jsonl(tmp_path / "d.jsonl", [{"text": "one text everywhere"}] * 1200)
    first = build_dataset(content, DatasetOptions())
    second = build_dataset(content, DatasetOptions())
    assert first.violations == second.violations
    assert len(first.violations) == datasets.MAX_VIOLATIONS
    assert first.violations_truncated == 1080 * 120 - datasets.MAX_VIOLATIONS
    pairs = [(v["train_row"], v["validation_row"]) for v in first.violations]
    assert pairs == sorted(pairs)
    assert pairs[:3] == [(0, 0), (0, 1), (0, 2)]
    assert all(v["gate"] == "exact_duplicate" for v in first.violations)
    summary = first.summary()
    assert summary["violations_truncated"] == first.violations_truncated
    assert len(summary["violations"]) == datasets.MAX_VIOLATIONS


def test_exact_and_near_violations_come_together_in_row_order(tmp_path: Path) -> None:
    rng = random.Random(21)
    rows = distinct_rows(80)
    options = DatasetOptions(val_fraction=0.25)
    train_idx, val_idx = split_positions(80, options)
    near = words_text(rng, 120).split()
    rows[val_idx[0]] = {"text": " ".join(near)}
    rows[train_idx[0]] = {"text": " ".join([*near[:60], "edit", *near[61:]])}
    rows[val_idx[4]] = {"text": "an exact copy"}
    rows[train_idx[2]] = {"text": "AN exact   copy"}
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), options)
    assert [(v["gate"], v["train_row"], v["validation_row"]) for v in build.violations] == [
        ("near_duplicate", 0, 0),
        ("exact_duplicate", 2, 4),
    ]


# --- labels --------------------------------------------------------------------------------------


def test_each_label_field_becomes_a_label_with_sorted_distinct_string_values(tmp_path: Path) -> None:
    rows = [
        {
            "text": f"review {i}",
            "sentiment": ["pos", "neg", "neutral"][i % 3],
            "stars": [1, 2.5, 5][i % 3],
            "lang": "en",
        }
        for i in range(30)
    ]
    build = build_dataset(
        write_jsonl(tmp_path / "d.jsonl", rows), DatasetOptions(label_fields=("sentiment", "stars", "lang"))
    )
    assert [label["field"] for label in build.labels] == ["sentiment", "stars", "lang"]
    assert [label["values"] for label in build.labels] == [
        ["neg", "neutral", "pos"],
        ["1", "2.5", "5"],
        ["en"],
    ]
    label_ids = [label["label_id"] for label in build.labels]
    assert all(ids.is_id(label_id, "lbl") for label_id in label_ids)
    assert len(set(label_ids)) == 3
    every_row = build.train + build.validation
    assert {row["labels"]["stars"] for row in every_row} == {"1", "2.5", "5"}
    assert all(set(row["labels"]) == {"sentiment", "stars", "lang"} for row in every_row)


def test_extra_fields_of_a_row_are_ignored(tmp_path: Path) -> None:
    rows = [{"text": f"t {i}", "meta": {"nested": [1, 2]}, "label": "a"} for i in range(5)]
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), DatasetOptions())
    assert all(
        set(row) == {"text", "labels"} and row["labels"] == {} for row in build.train + build.validation
    )
    assert build.labels == []


def test_another_text_field_is_read(tmp_path: Path) -> None:
    rows = [{"prompt": f"p {i}", "text": 3} for i in range(5)]
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), DatasetOptions(text_field="prompt"))
    assert sorted(row["text"] for row in build.train + build.validation) == [f"p {i}" for i in range(5)]


# --- summary -------------------------------------------------------------------------------------


def test_summary_holds_the_dataset_fields_and_is_json(tmp_path: Path) -> None:
    rows = [{"text": f"t{i:02d}", "y": i % 2} for i in range(20)]
    options = DatasetOptions(label_fields=("y",), val_fraction=0.2, seed=4, name="tiny set")
    summary = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), options).summary()
    assert set(summary) == {
        "name", "format", "source", "text_field", "label_fields", "val_fraction", "seed",
        "splits", "fingerprints", "labels", "violations", "error",
    }  # fmt: skip
    assert summary["name"] == "tiny set"
    assert summary["format"] == "labels"
    assert summary["label_fields"] == ["y"]
    assert (summary["val_fraction"], summary["seed"], summary["text_field"]) == (0.2, 4, "text")
    assert summary["splits"] == {"train": {"rows": 16, "tokens": 48}, "validation": {"rows": 4, "tokens": 12}}
    assert set(summary["fingerprints"]) == {"source", "train", "validation"}
    assert summary["error"] is None
    assert json.loads(json.dumps(summary)) == summary


# --- file format ---------------------------------------------------------------------------------


def test_blank_lines_crlf_and_a_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"text": "a b c"}\r\n\r\n   \n{"text": "d e f"}\r\n\n{"text": "g"}')
    build = build_dataset(path.read_bytes(), DatasetOptions())
    assert build.source["rows"] == 3
    assert sorted(row["text"] for row in build.train + build.validation) == ["a b c", "d e f", "g"]


@pytest.mark.parametrize(
    ("body", "line", "field", "words"),
    [
        (b'{"text": "ok"}\n\n{"text": "ok2"\n', 3, None, "not valid JSON"),
        (b'{"text": "ok"}\n["text"]\n', 2, None, "JSON object, not an array"),
        (b'"just a string"\n', 1, None, "not a string"),
        (b'{"text": "ok"}\n{"body": "x"}\n', 2, "text", "text field 'text' is missing"),
        (b'{"text": 12}\n', 1, "text", "must be a string, not a number"),
        (b'{"text": null}\n', 1, "text", "not null"),
        (b'{"text": ""}\n', 1, "text", "is empty"),
        (b'{"text": "  \\n "}\n', 1, "text", "is empty"),
        (b'{"text": "\\ud800"}\n', 1, "text", "surrogate"),
        (b'{"text": "a", "text": "b"}\n', 1, None, "appears twice"),
        (b'{"text": "a", "n": NaN}\n', 1, None, "NaN is not valid JSON"),
        (b'{"text": "ok"}\n{"text": "caf\xe9"}\n', 2, None, "not valid UTF-8"),
    ],
)
def test_a_bad_line_refuses_the_whole_build_naming_the_line(
    tmp_path: Path, body: bytes, line: int, field: str | None, words: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(body)
    refused = refusal(path.read_bytes())
    assert refused.message.startswith(f"line {line}: ")
    assert words in refused.message
    assert refused.field == field


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("null", "not null"),
        ("true", "not a boolean"),
        ('["a"]', "not an array"),
        ('{"a": 1}', "not an object"),
        ('""', "is empty"),
    ],
)
def test_a_bad_label_value_refuses_the_build_naming_line_and_field(
    tmp_path: Path, value: str, words: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "a", "topic": "x"}\n{"text": "b", "topic": ' + value + "}\n", encoding="utf-8")
    refused = refusal(path.read_bytes(), DatasetOptions(label_fields=("topic",)))
    assert refused.message.startswith("line 2: the label field 'topic'")
    assert words in refused.message
    assert refused.field == "topic"


def test_a_label_field_with_too_many_distinct_values_is_refused_at_the_first_one_over(
    tmp_path: Path,
) -> None:
    limit = datasets.MAX_LABEL_VALUES
    rows = [{"text": f"row {i}", "user": f"u{i}", "topic": "x"} for i in range(limit + 5)]
    content = write_jsonl(tmp_path / "ids.jsonl", rows)
    refused = refusal(content, DatasetOptions(label_fields=("topic", "user")))
    assert refused.message.startswith(
        f"line {limit + 1}: the label field 'user' takes more than {limit} distinct values"
    )
    assert refused.field == "user"
    # Exactly the limit, each value repeated, builds.
    rows = [{"text": f"row {i}", "user": f"u{i % limit}"} for i in range(3 * limit)]
    built = build_dataset(write_jsonl(tmp_path / "ok.jsonl", rows), DatasetOptions(label_fields=("user",)))
    assert len(built.labels[0]["values"]) == limit


def test_a_missing_label_field_refuses_the_build(tmp_path: Path) -> None:
    content = write_jsonl(
        tmp_path / "d.jsonl", [{"text": "a", "topic": "x"}, {"text": "b", "topic": "y"}, {"text": "c"}]
    )
    refused = refusal(content, DatasetOptions(label_fields=("topic",)))
    assert refused.message == "line 3: the label field 'topic' is missing"
    assert refused.field == "topic"


@pytest.mark.parametrize("body", [b"", b"\n\n  \n", b"\xef\xbb\xbf"])
def test_an_empty_file_is_refused(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(body)
    assert "no rows" in refusal(path.read_bytes()).message


def test_a_text_over_one_mebibyte_is_refused(tmp_path: Path) -> None:
    limit = datasets.MAX_TEXT_BYTES
    content = write_jsonl(tmp_path / "big.jsonl", [{"text": "a" * limit}, {"text": "é" * (limit // 2 + 1)}])
    refused = refusal(content)
    assert refused.message.startswith(f"line 2: the text field 'text' is {limit + 2} bytes long")
    assert refused.field == "text"


def test_more_than_a_million_rows_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_bytes(b'{"text":"a"}\n' * (datasets.MAX_ROWS + 1))
    refused = refusal(path.read_bytes())
    assert refused.message.startswith(
        f"line {datasets.MAX_ROWS + 1}: the file has more than {datasets.MAX_ROWS} rows"
    )


def test_twenty_thousand_rows_build_and_a_planted_duplicate_is_found(tmp_path: Path) -> None:
    rows = distinct_rows(20_000, seed=1)
    for i, row in enumerate(rows):
        row["label"] = "even" if i % 2 == 0 else "odd"
    options = DatasetOptions(label_fields=("label",))
    train_idx, val_idx = split_positions(20_000, options)
    rows[train_idx[123]] = {"text": rows[val_idx[45]]["text"].upper(), "label": "odd"}
    build = build_dataset(write_jsonl(tmp_path / "d.jsonl", rows), options)
    assert build.splits["validation"]["rows"] == 2000
    assert build.violations == [
        {"gate": "exact_duplicate", "train_row": 123, "validation_row": 45, "similarity": 1.0}
    ]
    assert build.labels[0]["values"] == ["even", "odd"]


# --- options -------------------------------------------------------------------------------------


def test_query_defaults_and_a_full_query() -> None:
    assert options_from_query({}) == DatasetOptions()
    options = options_from_query(
        {
            "text_field": "body",
            "label_field": ["topic", "lang"],
            "val_fraction": "0.25",
            "seed": "42",
            "name": "news",
        }
    )
    assert options == DatasetOptions(
        text_field="body", label_fields=("topic", "lang"), val_fraction=0.25, seed=42, name="news"
    )
    assert options_from_query({"label_field": "topic", "seed": ["7"]}).label_fields == ("topic",)
    assert options_from_query({"val_fraction": "0.5"}).val_fraction == 0.5


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ({"val_fraction": "0"}, "val_fraction", "greater than 0"),
        ({"val_fraction": "0.6"}, "val_fraction", "at most 0.5"),
        ({"val_fraction": "-0.1"}, "val_fraction", "decimal number"),
        ({"val_fraction": "abc"}, "val_fraction", "decimal number"),
        ({"val_fraction": "nan"}, "val_fraction", "decimal number"),
        ({"val_fraction": "inf"}, "val_fraction", "decimal number"),
        ({"val_fraction": ["0.1", "0.2"]}, "val_fraction", "given 2 times"),
        ({"seed": "-1"}, "seed", "non-negative integer"),
        ({"seed": "1.5"}, "seed", "non-negative integer"),
        ({"seed": " 3"}, "seed", "non-negative integer"),
        ({"seed": str(2**63)}, "seed", "from 0 to"),
        ({"text_field": ""}, "text_field", "non-empty"),
        ({"text_field": "x" * 129}, "text_field", "at most 128"),
        ({"text_field": "a\nb"}, "text_field", "control characters"),
        ({"label_field": ""}, "label_field", "non-empty"),
        ({"label_field": ["topic", "y" * 129]}, "label_field", "at most 128"),
        ({"label_field": "text"}, "label_field", "also the text field"),
        ({"text_field": "body", "label_field": ["body"]}, "label_field", "also the text field"),
        ({"label_field": ["topic", "topic"]}, "label_field", "given twice"),
        ({"label_field": [f"f{i}" for i in range(65)]}, "label_field", "at most 64"),
        ({"name": ""}, "name", "non-empty"),
        ({"name": "n" * 129}, "name", "at most 128"),
        ({"name": "bad\x00name"}, "name", "control characters"),
        ({"label_fields": "topic"}, "label_fields", "unknown query parameter"),
    ],
)
def test_each_bad_query_parameter_is_refused_by_name(query: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(RunsRefusal) as caught:
        options_from_query(query)
    assert caught.value.code == "invalid_argument"
    assert caught.value.field == field
    assert words in caught.value.message
    assert caught.value.body()["field"] == field


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"seed": True}, "seed"),
        ({"seed": -1}, "seed"),
        ({"val_fraction": float("nan")}, "val_fraction"),
        ({"val_fraction": "0.1"}, "val_fraction"),
        ({"label_fields": "topic"}, "label_field"),
        ({"near_duplicate_threshold": 0.0}, "near_duplicate_threshold"),
        ({"near_duplicate_threshold": 1.5}, "near_duplicate_threshold"),
        ({"shingle_size": 0}, "shingle_size"),
        ({"num_perm": 1}, "num_perm"),
    ],
)
def test_options_made_in_code_are_checked_too(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(RunsRefusal) as caught:
        DatasetOptions(**kwargs)
    assert caught.value.field == field


# --- the gate a run checks -----------------------------------------------------------------------


def test_a_clean_succeeded_build_is_usable_and_a_leaky_one_is_a_failed_precondition(tmp_path: Path) -> None:
    clean = build_dataset(write_jsonl(tmp_path / "c.jsonl", distinct_rows(30)), DatasetOptions()).summary()
    require_leak_free({**clean, "dataset_id": "ds_01j9zx0000000000000000000a", "status": "succeeded"})
    leaky = build_dataset(
        write_jsonl(tmp_path / "l.jsonl", [{"text": "same"}] * 30), DatasetOptions()
    ).summary()
    with pytest.raises(RunsRefusal) as caught:
        require_leak_free({**leaky, "dataset_id": "ds_01j9zx0000000000000000000b", "status": "succeeded"})
    assert (caught.value.code, caught.value.status, caught.value.field) == (
        "failed_precondition",
        400,
        "dataset_id",
    )
    assert (
        "ds_01j9zx0000000000000000000b failed its leakage gates with 81 violation(s)" in caught.value.message
    )
    assert "exact_duplicate between train row 0 and validation row 0" in caught.value.message


@pytest.mark.parametrize(
    ("status", "words"), [("building", "is building"), ("failed", "is failed: line 3: bad")]
)
def test_a_build_that_did_not_succeed_is_a_failed_precondition(status: str, words: str) -> None:
    with pytest.raises(RunsRefusal) as caught:
        require_leak_free({"dataset_id": "ds_x", "status": status, "violations": [], "error": "line 3: bad"})
    assert caught.value.code == "failed_precondition"
    assert words in caught.value.message
