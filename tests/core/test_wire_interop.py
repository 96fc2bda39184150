"""Interoperability with the reference `cortex_training.wire` (cortex-training 0.0.3), both ways.

For a corpus of values, our frames decode with the reference to equal values and metadata and its
frames decode with ours; frames without operation metadata are byte-identical. Request and result
chunk lists made by either side reassemble on the other.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from ct_core import wire

torch = pytest.importorskip("torch")
reference = pytest.importorskip("cortex_training.wire")


# Every dtype the reference (through safetensors.torch) carries.
DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
]

RESPONSE_OPTIONS = {"response_options": {"format": "dssst1", "delivery": "chunked"}}
ROUTER_REPLAY = {
    "router_replay": {"mode": "replay", "sampling_zone_id": "zone-7", "layers": [0, 1]},
    **RESPONSE_OPTIONS,
}


def _corpus() -> dict[str, Any]:
    values: dict[str, Any] = {
        "scalar_json": 3,
        "string": "h\u00e9llo \u2603 \U0001f389",
        "none": None,
        "empty_dict": {},
        "json_tree": {"a": [1, 2.5, None, True], "b": {"c": "d"}, "unicode \u00fc": ["\u65e5\u672c"]},
        "root_tensor": torch.arange(6).reshape(2, 3),
        "zero_dim": {"loss": torch.tensor(0.75), "count": torch.tensor(3)},
        "empty_tensors": {"e": torch.zeros(0), "f": torch.zeros(2, 0, dtype=torch.int32)},
        "batch": {
            "input_ids": torch.arange(32).reshape(4, 8),
            "kwargs": {"loss_mask": torch.ones(4, 8), "weights": [torch.ones(2), torch.zeros(3)]},
        },
        "tuple_with_tensors": (torch.tensor([1, 2]), "x", (torch.tensor(1.5),)),
        "list_mixed": [torch.tensor([1.0]), {"k": torch.tensor([2], dtype=torch.int8)}, 3, "s"],
        "non_contiguous": {"t": torch.arange(12).reshape(3, 4).t(), "s": torch.arange(10)[::3]},
        "same_tensor_twice": {"a": torch.arange(3), "b": torch.arange(3)},
    }
    for dtype in DTYPES:
        name = str(dtype).removeprefix("torch.")
        base = torch.tensor([[0.0, 1.0], [2.0, -0.5]])
        values[f"dtype_{name}"] = {"t": base > 0.5 if dtype == torch.bool else base.abs().to(dtype)}
    return values


CORPUS = _corpus()
METADATA = {"none": None, "response_options": RESPONSE_OPTIONS, "router_replay": ROUTER_REPLAY}


def _split(frame: bytes) -> tuple[dict[str, Any], bytes]:
    length = int.from_bytes(frame[:8], "little")
    return json.loads(frame[8 : 8 + length]), frame[8 + length :]


@pytest.mark.parametrize("name", sorted(CORPUS))
@pytest.mark.parametrize("meta", sorted(METADATA))
def test_our_frames_decode_with_reference(name: str, meta: str, assert_same: Callable[..., None]) -> None:
    value, metadata = CORPUS[name], METADATA[meta]
    frame = wire.dumps(value, metadata=metadata)
    assert_same(reference.loads(frame), value)
    assert reference.read_metadata(frame) == (metadata or {})


@pytest.mark.parametrize("name", sorted(CORPUS))
@pytest.mark.parametrize("meta", sorted(METADATA))
def test_reference_frames_decode_with_ours(name: str, meta: str, assert_same: Callable[..., None]) -> None:
    value, metadata = CORPUS[name], METADATA[meta]
    frame = reference.dumps(value, metadata=metadata)
    assert_same(wire.loads(frame), value)
    assert wire.read_metadata(frame) == (metadata or {})
    numpy_value = wire.loads(frame, backend="numpy")
    assert_same(numpy_value, value)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_frames_are_byte_identical(name: str) -> None:
    value = CORPUS[name]
    assert wire.dumps(value) == reference.dumps(value)
    # With op metadata the reference orders `dss` / `op` at random (a Rust HashMap); everything else
    # is identical.
    ours, theirs = wire.dumps(value, metadata=ROUTER_REPLAY), reference.dumps(value, metadata=ROUTER_REPLAY)
    assert len(ours) == len(theirs)
    assert _split(ours) == _split(theirs)


def test_collision_and_reserved_keys_decode_correctly_on_reference() -> None:
    value = {"a.b": torch.tensor([1]), "a": {"b": torch.tensor([2])}, "__dss_empty__": torch.tensor([3])}
    decoded = reference.loads(wire.dumps(value))
    assert decoded["a.b"].tolist() == [1]
    assert decoded["a"]["b"].tolist() == [2]
    assert decoded["__dss_empty__"].tolist() == [3]


def test_overlapping_views_decode_on_reference() -> None:
    x = torch.arange(10)
    decoded = reference.loads(wire.dumps({"x": x, "tail": x[1:]}))
    assert decoded["tail"].tolist() == list(range(1, 10))


def test_non_finite_floats_decode_on_reference() -> None:
    decoded = reference.loads(wire.dumps({"loss": float("inf")}))
    assert float(decoded["loss"]) == float("inf")  # a 0-d float64 tensor there, a float with us


def test_tuples_in_plain_data_survive_only_with_us() -> None:
    value = {"plain": (1, (2, 3))}
    assert reference.loads(wire.dumps(value)) == value
    assert wire.loads(reference.dumps(value)) == {"plain": [1, [2, 3]]}  # the reference loses tuples


@pytest.fixture(scope="module")
def big_frame() -> bytes:
    return wire.dumps(
        {"ids": torch.arange(20_000), "w": torch.ones(500, dtype=torch.bfloat16)}, metadata=ROUTER_REPLAY
    )


@pytest.mark.parametrize("max_bytes", [0, 8192 + 3000, 8192 + 40_000])
@pytest.mark.parametrize("kind", ["request", "result"])
def test_chunks_cross_decode(big_frame: bytes, max_bytes: int, kind: str) -> None:
    kwargs: dict[str, Any] = {"kind": kind, "max_bytes": max_bytes, "force_chunk": True}
    if kind == "request":
        kwargs.update(operation="fwd-bwd", chunk_group_id="group-1")
    ours = wire.encode_byte_chunks(big_frame, **kwargs)
    theirs = reference.encode_byte_chunks(big_frame, **kwargs)
    assert len(ours) == len(theirs)
    for mine, other in zip(ours, theirs, strict=True):
        assert _split(mine) == _split(other)
        assert wire.read_byte_chunk_metadata(mine) == reference.read_byte_chunk_metadata(other)
    assert reference.decode_byte_chunks(ours, kind=kind) == big_frame
    assert wire.decode_byte_chunks(theirs, kind=kind) == big_frame
    assert wire.decode_byte_chunks(theirs[::-1]) == big_frame
    assert reference.read_metadata(wire.decode_byte_chunks(theirs)) == ROUTER_REPLAY


def test_result_chunks_cross_decode(assert_same: Callable[..., None]) -> None:
    result = {"logprobs": torch.randn(200, 50), "metrics": {"loss": 0.5}, "tokens": [[1, 2], [3]]}
    ours = wire.encode_result_chunks(result, max_bytes=8192 + 8000)
    theirs = reference.encode_result_chunks(result, max_bytes=8192 + 8000)
    assert len(ours) > 1
    assert_same(reference.decode_result_chunks(ours), result)
    assert_same(wire.decode_result_chunks(theirs), result)


def test_reference_rejects_what_we_reject() -> None:
    chunks = wire.encode_byte_chunks(
        wire.dumps({"x": torch.arange(4000)}), kind="request", max_bytes=8192 + 4000
    )
    for decoder in (wire.decode_byte_chunks, reference.decode_byte_chunks):
        with pytest.raises(ValueError, match=r"missing byte chunks|expected"):
            decoder(chunks[:-1])
        with pytest.raises(ValueError, match="duplicate byte chunk_idx"):
            decoder([*chunks[:-1], chunks[0]])


@pytest.mark.parametrize("kind", ["request", "result"])
def test_large_frame_chunks_match_the_reference(kind: str) -> None:
    # 20 MiB: above the size where the hash runs beside the copy, so the faster path is the one compared.
    frame = wire.dumps({"x": torch.arange(20 * 2**20 // 8)}, metadata=ROUTER_REPLAY)
    kwargs: dict[str, Any] = {"kind": kind, "max_bytes": 3 * 2**20, "force_chunk": True}
    if kind == "request":
        kwargs.update(operation="fwd-bwd", chunk_group_id="group-1")
    ours = wire.encode_byte_chunks(frame, **kwargs)
    theirs = reference.encode_byte_chunks(frame, **kwargs)
    assert len(ours) == len(theirs) > 5
    assert all(type(chunk) is bytes for chunk in ours)
    # The reference's metadata map has no fixed order, so frames are compared as header and data.
    assert [len(chunk) for chunk in ours] == [len(chunk) for chunk in theirs]
    assert [_split(chunk) for chunk in ours] == [_split(chunk) for chunk in theirs]
    assert reference.decode_byte_chunks(ours, kind=kind) == frame
    decoded = wire.decode_byte_chunks(theirs[::-1], kind=kind)
    assert type(decoded) is bytes and decoded == frame
