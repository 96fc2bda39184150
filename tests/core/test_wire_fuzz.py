"""Property-based tests of ct_core.wire (hypothesis).

Properties: any encodable value round-trips; arbitrary bytes, mutated frames and tampered chunk
lists make `loads`, `read_metadata` and `decode_byte_chunks` raise WireError and nothing else,
never unpickle, and allocate memory bounded by the input rather than by sizes the input claims.

The plain tests run a few dozen examples each so `make test` stays fast. The `fuzz`-marked twins
run the same properties with CT_FUZZ_EXAMPLES examples (default 2000) and only under `make fuzz`
(`pytest -m fuzz -p no:xdist tests/core`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pickle
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ct_core import wire
from ct_core.errors import WireError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wire"
FUZZ_EXAMPLES = int(os.environ.get("CT_FUZZ_EXAMPLES", "2000"))
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
FAST = settings(max_examples=40, **_COMMON)
LONG = settings(max_examples=FUZZ_EXAMPLES, **_COMMON)


def _load_cases() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ct_wire_cases_for_fuzz", FIXTURES / "cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


assert_same = _load_cases().assert_same

# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------

_DTYPES = [
    np.dtype(d)
    for d in (
        np.bool_,
        np.uint8,
        np.int8,
        np.int16,
        np.uint16,
        np.int32,
        np.uint32,
        np.int64,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
    )
]
_ML_DTYPES = [
    np.dtype(ml_dtypes.bfloat16),
    np.dtype(ml_dtypes.float8_e4m3fn),
    np.dtype(ml_dtypes.float8_e5m2),
]
_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@st.composite
def _arrays(draw: st.DrawFn) -> np.ndarray:
    dtype = draw(st.sampled_from(_DTYPES + _ML_DTYPES))
    shape = draw(_SHAPES)
    if dtype in _ML_DTYPES:
        # hypothesis cannot draw ml_dtypes directly: draw bit patterns of the same width.
        raw = draw(hnp.arrays(np.uint16 if dtype.itemsize == 2 else np.uint8, shape))
        array = raw.view(dtype)
    else:
        array = draw(hnp.arrays(dtype, shape))
    if array.ndim >= 2 and draw(st.booleans()):
        array = array.T  # non-contiguous
    return array


_keys = st.text(max_size=6) | st.sampled_from(
    ["a", "a.b", "0", "__dss_empty__", "__metadata__", "__root__", ""]
)
_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | _arrays()
)
values = st.recursive(
    _leaves,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(_keys, children, max_size=4)
    ),
    max_leaves=12,
)
metadata = st.none() | st.dictionaries(
    st.text(max_size=5),
    st.recursive(st.none() | st.integers() | st.text(max_size=5), st.lists, max_leaves=4),
    max_size=3,
)


@contextlib.contextmanager
def no_pickle() -> Iterator[None]:
    """Make any unpickling attempt fail the test loudly (and not as a WireError)."""

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the wire decoder tried to unpickle")

    targets: list[tuple[Any, str]] = [(pickle, "loads"), (pickle, "load"), (pickle, "Unpickler")]
    torch = sys.modules.get("torch")
    if torch is not None:
        targets.append((torch, "load"))
    saved = [(obj, name, getattr(obj, name)) for obj, name in targets]
    for obj, name in targets:
        setattr(obj, name, forbidden)
    try:
        yield
    finally:
        for obj, name, original in saved:
            setattr(obj, name, original)


def only_wire_errors(call: Callable[[], Any], budget: int) -> None:
    """Run `call`; anything but success or WireError fails; so does allocating more than `budget`."""
    tracemalloc.start()
    try:
        with no_pickle():
            call()
    except WireError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak <= budget, f"decoder allocated {peak} bytes for a {budget}-byte budget"


def _budget(data: bytes | list[bytes]) -> int:
    size = len(data) if isinstance(data, bytes) else sum(len(d) for d in data)
    # Parsed JSON objects cost tens of bytes per input byte; what must never happen is an
    # allocation sized by a shape or length the input merely claims.
    return 64 * size + (2 << 20)


def _mutate(data: st.DataObject, frame: bytes) -> bytes:
    buffer = bytearray(frame)
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["flip", "set", "truncate", "insert", "delete", "digit"]))
        if not buffer:
            buffer.extend(data.draw(st.binary(min_size=1, max_size=8)))
            continue
        index = data.draw(st.integers(0, len(buffer) - 1))
        if action == "flip":
            buffer[index] ^= 1 << data.draw(st.integers(0, 7))
        elif action == "set":
            buffer[index] = data.draw(st.integers(0, 255))
        elif action == "truncate":
            del buffer[index:]
        elif action == "insert":
            buffer[index:index] = data.draw(st.binary(min_size=1, max_size=8))
        elif action == "delete":
            del buffer[index : index + data.draw(st.integers(1, 8))]
        else:
            # Rewrite a digit inside the header: shapes, offsets, lengths and indexes.
            digits = [i for i, b in enumerate(buffer[8:512], start=8) if 0x30 <= b <= 0x39]
            if digits:
                buffer[data.draw(st.sampled_from(digits))] = data.draw(st.sampled_from(b"0123456789"))
    return bytes(buffer)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


def check_roundtrip(value: Any, op: dict[str, Any] | None) -> None:
    frame = wire.dumps(value, metadata=op)
    assert_same(wire.loads(frame, backend="numpy"), value)
    assert wire.read_metadata(frame) == (op or {})
    assert wire.dumps(value, metadata=op) == frame  # deterministic


def check_chunk_roundtrip(value: Any, max_extra: int, kind: str) -> None:
    frame = wire.dumps(value)
    chunks = wire.encode_byte_chunks(frame, kind=kind, max_bytes=8192 + max_extra, force_chunk=True)
    assert all(len(chunk) <= 8192 + max_extra for chunk in chunks)
    assert wire.decode_byte_chunks(chunks[::-1], kind=kind) == frame


def check_arbitrary_bytes(data: bytes) -> None:
    only_wire_errors(lambda: wire.loads(data, backend="numpy"), _budget(data))
    only_wire_errors(lambda: wire.decode_byte_chunks([data]), _budget(data))
    only_wire_errors(lambda: wire.decode_byte_chunks([data, data]), _budget([data, data]))
    with no_pickle():
        assert isinstance(wire.read_metadata(data), dict)


def check_mutated_frame(data: st.DataObject, value: Any) -> None:
    frame = _mutate(data, wire.dumps(value, metadata={"response_options": {"format": "dssst1"}}))
    backend = data.draw(st.sampled_from(["numpy", "torch"]))
    if backend == "torch":
        pytest.importorskip("torch")
    only_wire_errors(lambda: wire.loads(frame, backend=backend), _budget(frame))
    with no_pickle():
        assert isinstance(wire.read_metadata(frame), dict)


def check_tampered_chunks(data: st.DataObject, value: Any) -> None:
    frame = wire.dumps(value)
    # Fixed group ids: hypothesis replays draws, so the chunk bytes must not change between runs.
    chunks = wire.encode_byte_chunks(
        frame, kind="request", max_bytes=8192 + 256, force_chunk=True, chunk_group_id="group-a"
    )
    action = data.draw(st.sampled_from(["mutate", "drop", "duplicate", "shuffle", "swap_group"]))
    if action == "mutate":
        index = data.draw(st.integers(0, len(chunks) - 1))
        chunks[index] = _mutate(data, chunks[index])
    elif action == "drop" and len(chunks) > 1:
        del chunks[data.draw(st.integers(0, len(chunks) - 1))]
    elif action == "duplicate":
        chunks.append(chunks[data.draw(st.integers(0, len(chunks) - 1))])
    elif action == "shuffle":
        chunks = data.draw(st.permutations(chunks))
    else:
        other = wire.encode_byte_chunks(
            frame, kind="request", max_bytes=8192 + 256, force_chunk=True, chunk_group_id="group-b"
        )
        chunks[-1] = other[-1]

    def decode() -> None:
        # Whatever is accepted is exactly the original frame (the hash check guarantees it), or
        # a lone frame that no longer looks like a chunk, which is passed through as it is.
        result = wire.decode_byte_chunks(chunks)
        assert result == frame or (len(chunks) == 1 and result == chunks[0])

    only_wire_errors(decode, _budget(chunks))


# --------------------------------------------------------------------------------------------
# Quick runs (every `make test`)
# --------------------------------------------------------------------------------------------


@FAST
@given(values, metadata)
def test_roundtrip(value: Any, op: dict[str, Any] | None) -> None:
    check_roundtrip(value, op)


@FAST
@given(values, st.integers(1, 2000), st.sampled_from(["request", "result"]))
def test_chunk_roundtrip(value: Any, max_extra: int, kind: str) -> None:
    check_chunk_roundtrip(value, max_extra, kind)


@FAST
@given(st.binary(max_size=256) | st.binary(max_size=32).map(lambda b: len(b).to_bytes(8, "little") + b))
def test_arbitrary_bytes(data: bytes) -> None:
    check_arbitrary_bytes(data)


@FAST
@given(st.data(), values)
def test_mutated_frames(data: st.DataObject, value: Any) -> None:
    check_mutated_frame(data, value)


@FAST
@given(st.data(), values)
def test_tampered_chunks(data: st.DataObject, value: Any) -> None:
    check_tampered_chunks(data, value)


def test_surrogate_keys_roundtrip() -> None:
    value = {"\udc80": np.arange(2), "ok": {"\ud800x": np.arange(3)}}
    check_roundtrip(value, None)


# --------------------------------------------------------------------------------------------
# Long runs (`make fuzz` only)
# --------------------------------------------------------------------------------------------


@pytest.mark.fuzz
@LONG
@given(values, metadata)
def test_fuzz_roundtrip(value: Any, op: dict[str, Any] | None) -> None:
    check_roundtrip(value, op)


@pytest.mark.fuzz
@LONG
@given(values, st.integers(1, 2000), st.sampled_from(["request", "result"]))
def test_fuzz_chunk_roundtrip(value: Any, max_extra: int, kind: str) -> None:
    check_chunk_roundtrip(value, max_extra, kind)


@pytest.mark.fuzz
@LONG
@given(st.binary(max_size=4096) | st.binary(max_size=256).map(lambda b: len(b).to_bytes(8, "little") + b))
def test_fuzz_arbitrary_bytes(data: bytes) -> None:
    check_arbitrary_bytes(data)


@pytest.mark.fuzz
@LONG
@given(st.data(), values)
def test_fuzz_mutated_frames(data: st.DataObject, value: Any) -> None:
    check_mutated_frame(data, value)


@pytest.mark.fuzz
@LONG
@given(st.data(), values)
def test_fuzz_tampered_chunks(data: st.DataObject, value: Any) -> None:
    check_tampered_chunks(data, value)
