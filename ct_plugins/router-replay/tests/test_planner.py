"""The router-replay cache planner: id width by expert count and the size formula."""

from __future__ import annotations

from typing import Any

import pytest
from ct_router_replay.planner import human_bytes, plan


def test_uint8_ids_up_to_256_experts() -> None:
    result = plan(experts=256, seq_len=4096, moe_layers=48, top_k=8)
    assert (result.id_dtype, result.id_bytes) == ("uint8", 1)
    assert result.max_cache_bytes == 4096 * 48 * 8


def test_uint16_ids_from_257_experts_cost_twice_as_much() -> None:
    small = plan(experts=256, seq_len=1000, moe_layers=10, top_k=4, sequences=3)
    large = plan(experts=257, seq_len=1000, moe_layers=10, top_k=4, sequences=3)
    assert (large.id_dtype, large.id_bytes) == ("uint16", 2)
    assert large.max_cache_bytes == 2 * small.max_cache_bytes == 2 * 3 * 1000 * 10 * 4
    assert plan(experts=65536, seq_len=1, moe_layers=1, top_k=1).id_bytes == 2


def test_as_dict_shows_the_formula_and_the_example_caps() -> None:
    shown = plan(experts=128, seq_len=4096, moe_layers=48, top_k=8, sequences=4).as_dict()
    assert shown["max_cache_bytes"] == 6291456
    assert shown["formula"].endswith("= 4 x 4096 x 48 x 8 x 1 = 6291456")
    assert shown["max_cache_human"] == "6.0 MiB"
    assert shown["sequences_per_example_cap"] == {
        "training_5GiB": 5 * 1024**3 // 1572864,
        "sampling_20GiB": 20 * 1024**3 // 1572864,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"experts": 0}, "--experts must be a positive integer, got 0"),
        ({"seq_len": -1}, "--seq-len must be a positive integer, got -1"),
        ({"top_k": True}, "--top-k must be a positive integer, got True"),
        ({"experts": 65537}, "--experts 65537 is more than the 65536 experts router replay supports"),
        ({"experts": 4, "top_k": 8}, "--top-k 8 cannot exceed --experts 4"),
    ],
)
def test_bad_inputs(kwargs: dict[str, Any], message: str) -> None:
    args = {"experts": 64, "seq_len": 10, "moe_layers": 2, "top_k": 2, **kwargs}
    with pytest.raises(ValueError) as caught:
        plan(**args)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("count", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (5 * 1024**3, "5.0 GiB"), (3 * 1024**4, "3.0 TiB")],
)
def test_human_bytes(count: int, text: str) -> None:
    assert human_bytes(count) == text
