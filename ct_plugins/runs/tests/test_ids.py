"""ULID-style ids of the runs service: their spelling, their order, and the strict check."""

from __future__ import annotations

import re
import threading
import time

import pytest
from ct_runs import ids

WELL_FORMED = re.compile(r"(ds|lbl|run|mdl)_[0-7][0-9a-hjkmnp-tv-z]{25}")


@pytest.mark.parametrize("prefix", ids.PREFIXES)
def test_new_id_is_prefix_underscore_and_26_lowercase_crockford_characters(prefix: str) -> None:
    made = ids.new_id(prefix)
    assert made.startswith(prefix + "_")
    assert len(made) == len(prefix) + 27
    assert WELL_FORMED.fullmatch(made), made
    assert ids.is_id(made, prefix)


def test_ids_made_one_after_another_sort_in_creation_order_and_never_repeat() -> None:
    made = [ids.new_id("run") for _ in range(5000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)


def test_ids_of_later_milliseconds_sort_after_earlier_ones() -> None:
    first = ids.new_id("ds")
    start = ids.timestamp_ms(first)
    # Wait (no timing assertion) until the clock has moved past the first id's millisecond.
    while time.time_ns() // 1_000_000 <= start + 1:
        time.sleep(0.001)
    second = ids.new_id("ds")
    assert ids.timestamp_ms(second) > start
    assert second > first


def test_the_encoded_timestamp_is_the_creation_time_in_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    made = ids.new_id("mdl")
    after = time.time_ns() // 1_000_000
    assert before <= ids.timestamp_ms(made) <= after


def test_ids_made_from_several_threads_are_all_distinct() -> None:
    out: list[str] = []
    lock = threading.Lock()

    def make() -> None:
        local = [ids.new_id("lbl") for _ in range(1000)]
        with lock:
            out.extend(local)

    threads = [threading.Thread(target=make) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(out)) == 4000


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ds",
        "ds_",
        "lbl_01j9zx0000000000000000000a",  # another prefix
        "DS_01j9zx0000000000000000000a",  # upper-case prefix
        "ds_01J9ZX0000000000000000000A",  # upper-case body
        "ds_01j9zx0000000000000000000",  # 25 characters
        "ds_01j9zx0000000000000000000aa",  # 27 characters
        "ds_01j9zx000000000000000000ia",  # "i" is not Crockford
        "ds_01j9zx000000000000000000la",  # "l"
        "ds_01j9zx000000000000000000oa",  # "o"
        "ds_01j9zx000000000000000000ua",  # "u"
        "ds_81j9zx0000000000000000000a",  # more than 128 bits
        " ds_01j9zx0000000000000000000a",
        "ds_01j9zx0000000000000000000a\n",
        "ds-01j9zx0000000000000000000a",
        "ds_01j9zx00000000000/../000a",
        "d_s01j9zx0000000000000000000a",
    ],
)
def test_is_id_refuses_anything_but_the_exact_spelling(text: str) -> None:
    assert not ids.is_id(text, "ds")


def test_is_id_accepts_a_hand_written_well_formed_id_and_refuses_other_types() -> None:
    assert ids.is_id("ds_01j9zx0000000000000000000a", "ds")
    assert ids.is_id("ds_7zzzzzzzzzzzzzzzzzzzzzzzzz", "ds")
    for value in (None, 12, b"ds_01j9zx0000000000000000000a", ["ds_01j9zx0000000000000000000a"]):
        assert not ids.is_id(value, "ds")


@pytest.mark.parametrize("prefix", ["", "DS", "ds_", "d s", "1ds", "a" * 17])
def test_a_malformed_prefix_is_a_programming_error(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        ids.new_id(prefix)
    with pytest.raises(ValueError, match="prefix"):
        ids.is_id("ds_01j9zx0000000000000000000a", prefix)


def test_timestamp_of_a_garbled_id_is_refused() -> None:
    with pytest.raises(ValueError, match="not a ULID-style id"):
        ids.timestamp_ms("ds_nonsense")
