"""Behaviour of ct_core.wire: round-trips, dtypes, views, structure rules and every error path."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ct_core import wire
from ct_core.errors import CTError, WireError

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")


def header_of(frame: bytes) -> dict[str, Any]:
    length = int.from_bytes(frame[:8], "little")
    return json.loads(frame[8 : 8 + length])


def structure_of(frame: bytes) -> dict[str, Any]:
    return json.loads(header_of(frame)["__metadata__"]["dss"])


def make_frame(header: dict[str, Any], data: bytes = b"", pad: bool = True) -> bytes:
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data


def dss(tree: Any, version: str = "DSSST1") -> str:
    return json.dumps({"v": version, "tree": tree})


def roundtrip(value: Any, **kwargs: Any) -> Any:
    return wire.loads(wire.dumps(value), **kwargs)


# --------------------------------------------------------------------------------------------
# Round-trips
# --------------------------------------------------------------------------------------------

TORCH_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint16,
    torch.uint32,
    torch.uint64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
]


def _sample(dtype: Any) -> Any:
    base = torch.tensor([[0.0, 1.0, 2.0], [3.0, -1.5, 7.0]])
    if dtype == torch.bool:
        return base > 1
    if dtype in (torch.uint8, torch.uint16, torch.uint32, torch.uint64):
        return base.abs().to(torch.int64).to(dtype)
    return base.to(dtype)


def test_public_surface() -> None:
    assert wire.WIRE_FORMAT_VERSION == "DSSST1"
    assert wire.WireError is WireError
    assert issubclass(WireError, ValueError) and issubclass(WireError, CTError)
    for name in (
        "dumps",
        "loads",
        "read_metadata",
        "encode_byte_chunks",
        "read_byte_chunk_metadata",
        "decode_byte_chunks",
        "encode_result_chunks",
        "decode_result_chunks",
    ):
        assert callable(getattr(wire, name))


def test_nested_structure_roundtrip(assert_same: Callable[..., None]) -> None:
    value = {
        "input_ids": torch.arange(12).reshape(3, 4),
        "kwargs": {"loss_mask": torch.ones(3, 4), "extra": [torch.zeros(2), "text", 3, None]},
        "pair": (torch.tensor([1, 2]), {"k": "v"}),
        "plain": {"a": [1, 2.5, True, None, "s"], "b": {}},
        "list_of_dicts": [{"x": 1}, {"y": [2, 3]}],
    }
    assert_same(roundtrip(value), value)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_every_torch_dtype_roundtrips(dtype: Any, assert_same: Callable[..., None]) -> None:
    tensor = _sample(dtype)
    decoded = roundtrip({"t": tensor})
    assert_same(decoded, {"t": tensor})
    assert decoded["t"].dtype == dtype


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_every_dtype_decodes_to_numpy(dtype: Any, assert_same: Callable[..., None]) -> None:
    tensor = _sample(dtype)
    array = wire.loads(wire.dumps(tensor), backend="numpy")
    assert isinstance(array, np.ndarray)
    assert array.shape == (2, 3)
    assert array.dtype.name == str(dtype).removeprefix("torch.")
    assert_same(array, tensor)


@pytest.mark.parametrize(
    "dtype",
    [
        *(np.bool_, np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64),
        *(np.float16, np.float32, np.float64, np.complex64),
        *(ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2),
    ],
    ids=lambda d: np.dtype(d).name,
)
def test_numpy_in_numpy_out(dtype: Any, assert_same: Callable[..., None]) -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3).astype(dtype)
    decoded = wire.loads(wire.dumps({"a": array}), backend="numpy")["a"]
    assert decoded.dtype == array.dtype
    assert_same(decoded, array)


def test_numpy_and_torch_writers_produce_identical_frames() -> None:
    array = np.arange(10, dtype=np.float32)
    assert wire.dumps({"x": array}) == wire.dumps({"x": torch.from_numpy(array)})
    bf16 = np.linspace(0, 1, 5, dtype=np.float32).astype(ml_dtypes.bfloat16)
    assert wire.dumps(bf16) == wire.dumps(torch.from_numpy(bf16.view(np.int16)).view(torch.bfloat16))


def test_big_endian_numpy_is_written_little_endian() -> None:
    array = np.arange(4, dtype=">i4")
    decoded = wire.loads(wire.dumps(array), backend="numpy")
    assert decoded.dtype == np.dtype("<i4")
    assert decoded.tolist() == [0, 1, 2, 3]


def test_zero_dim_tensors() -> None:
    value = {"loss": torch.tensor(1.25), "n": np.array(7, dtype=np.int64)}
    frame = wire.dumps(value)
    tree = structure_of(frame)["tree"]
    assert tree[1][0] == ["loss", ["t", "loss", {"scalar": True}]]
    assert header_of(frame)["loss"]["shape"] == [1]
    decoded = wire.loads(frame)
    assert decoded["loss"].shape == () and decoded["loss"].item() == 1.25
    assert decoded["n"].shape == () and decoded["n"].item() == 7
    assert wire.loads(frame, backend="numpy")["n"].shape == ()


def test_bare_root_tensor_uses_root_key(assert_same: Callable[..., None]) -> None:
    frame = wire.dumps(torch.arange(3))
    assert "__root__" in header_of(frame)
    assert_same(wire.loads(frame), torch.arange(3))


@pytest.mark.parametrize("shape", [(0,), (2, 0, 3), (0, 0)])
def test_empty_tensors(shape: tuple[int, ...], assert_same: Callable[..., None]) -> None:
    value = {"e": torch.zeros(shape, dtype=torch.float32), "f": np.zeros(shape, dtype=np.int16)}
    assert_same(roundtrip(value), {"e": value["e"], "f": torch.from_numpy(value["f"])})
    assert_same(roundtrip(value, backend="numpy")["f"], value["f"])


def test_non_contiguous_tensors() -> None:
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    value = {"t": base.t(), "step": base[:, ::2], "np": np.arange(12).reshape(3, 4)[:, 1::2]}
    decoded = roundtrip(value)
    assert torch.equal(decoded["t"], base.t().contiguous())
    assert torch.equal(decoded["step"], base[:, ::2].contiguous())
    assert decoded["np"].tolist() == value["np"].tolist()


def test_conjugate_and_grad_tensors() -> None:
    c = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64).conj()
    g = torch.ones(2, requires_grad=True) * 2
    decoded = roundtrip({"c": c, "g": g})
    assert decoded["c"].tolist() == [1 - 2j, 3 + 1j]
    assert decoded["g"].tolist() == [2.0, 2.0] and not decoded["g"].requires_grad


def test_shared_and_overlapping_storage() -> None:
    x = torch.arange(10)
    value = {"x": x, "tail": x[1:], "same": x, "view": x.view(2, 5), "np": x.numpy()[2:4]}
    decoded = roundtrip(value)
    assert decoded["tail"].tolist() == list(range(1, 10))
    assert decoded["same"].tolist() == list(range(10))
    assert decoded["view"].shape == (2, 5)
    assert decoded["np"].tolist() == [2, 3]


def test_tuples_are_kept_everywhere(assert_same: Callable[..., None]) -> None:
    value = {"plain": (1, (2, 3), [4, (5,)]), "in_list": [{"t": ()}], "top": ()}
    assert_same(roundtrip(value), value)
    assert_same(roundtrip((1, "a")), (1, "a"))


def test_unicode_json_and_keys(assert_same: Callable[..., None]) -> None:
    value = {"ключ": "значение ☃", "emoji 🎉": [torch.tensor([1]), "日本"], "tab\tkey": 'a"b\\c\n'}
    frame = wire.dumps(value)
    assert_same(wire.loads(frame), value)
    assert frame.isascii() is False  # tensor keys are raw UTF-8 in the header, as serde_json writes


def test_json_only_values_and_placeholder(assert_same: Callable[..., None]) -> None:
    for value in ({}, [], None, 0, "x", {"loss": 0.5, "metrics": {"a": 1}}, [1, [2, [3]]]):
        frame = wire.dumps(value)
        header = header_of(frame)
        assert header["__dss_empty__"] == {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}
        assert_same(wire.loads(frame), value)


def test_user_key_named_like_placeholder_survives() -> None:
    value = {"__dss_empty__": torch.tensor([4, 5]), "__metadata__": torch.tensor([6])}
    decoded = roundtrip(value)
    assert decoded["__dss_empty__"].tolist() == [4, 5]
    assert decoded["__metadata__"].tolist() == [6]


def test_colliding_paths_get_opaque_keys(assert_same: Callable[..., None]) -> None:
    value = {"a.b": torch.tensor([1]), "a": {"b": torch.tensor([2])}}
    frame = wire.dumps(value)
    assert sorted(k for k in header_of(frame) if k != "__metadata__") == ["t0", "t1"]
    decoded = wire.loads(frame)
    assert decoded["a.b"].tolist() == [1] and decoded["a"]["b"].tolist() == [2]
    listy = {"0": torch.tensor([1]), "x": [torch.tensor([2])], "x.0": torch.tensor([3])}
    assert_same(roundtrip(listy), listy)


def test_non_colliding_paths_are_dotted() -> None:
    frame = wire.dumps({"a": {"b": [torch.tensor([1]), torch.tensor([2])]}})
    assert sorted(k for k in header_of(frame) if k != "__metadata__") == ["a.b.0", "a.b.1"]


def test_non_finite_floats_roundtrip_with_strict_json() -> None:
    value = {"loss": float("nan"), "xs": [float("inf"), 1.0, -math.inf], "t": (float("nan"),)}
    frame = wire.dumps(value)
    raw = header_of(frame)["__metadata__"]["dss"]
    assert "NaN" not in raw and "Infinity" not in raw
    json.loads(raw, parse_constant=lambda c: pytest.fail(f"non-standard JSON token {c}"))
    decoded = wire.loads(frame)
    assert math.isnan(decoded["loss"]) and decoded["xs"][0] == math.inf and decoded["xs"][2] == -math.inf
    assert type(decoded["xs"][1]) is float


def test_tensor_free_containers_stay_json() -> None:
    frame = wire.dumps({"a": {"b": [1, 2]}, "t": torch.tensor([1])})
    tree = structure_of(frame)["tree"]
    assert tree == ["d", [["a", ["j", {"b": [1, 2]}]], ["t", ["t", "t"]]]]


def test_operation_metadata() -> None:
    metadata = {
        "response_options": {"format": "dssst1", "delivery": "chunked"},
        "router_replay": {"mode": "replay", "sampling_zone_id": "z-1", "layers": [0, 3]},
    }
    frame = wire.dumps({"x": torch.zeros(2)}, metadata=metadata)
    assert wire.read_metadata(frame) == metadata
    meta = header_of(frame)["__metadata__"]
    assert list(meta) == ["dss", "op"]
    assert meta["op"] == json.dumps(metadata)
    assert "op" not in header_of(wire.dumps(1, metadata={}))["__metadata__"]
    assert wire.read_metadata(wire.dumps(1)) == {}


def test_dss_uses_python_default_separators() -> None:
    frame = wire.dumps({"a": torch.tensor([1])})
    assert header_of(frame)["__metadata__"]["dss"] == dss(["d", [["a", ["t", "a"]]]])


def test_frames_are_deterministic_and_padded() -> None:
    value = {"b": torch.ones(3, dtype=torch.int8), "a": torch.ones(2, dtype=torch.int64)}
    frame = wire.dumps(value)
    assert frame == wire.dumps(value)
    length = int.from_bytes(frame[:8], "little")
    assert length % 8 == 0
    header = header_of(frame)
    # widest dtype first, then by name
    assert [k for k in header if k != "__metadata__"] == ["a", "b"]
    assert header["a"]["data_offsets"] == [0, 16] and header["b"]["data_offsets"] == [16, 19]


# --------------------------------------------------------------------------------------------
# Views, copies and alignment
# --------------------------------------------------------------------------------------------


def test_loads_returns_views_over_writable_buffers() -> None:
    frame = bytearray(wire.dumps({"x": np.arange(4, dtype=np.int32)}))
    viewed = wire.loads(frame, backend="numpy")["x"]
    copied = wire.loads(frame, backend="numpy", copy=True)["x"]
    as_torch = wire.loads(frame, backend="torch")["x"]
    frame[-4:] = (99).to_bytes(4, "little")
    assert viewed.tolist() == [0, 1, 2, 99]
    assert as_torch.tolist() == [0, 1, 2, 99]
    assert copied.tolist() == [0, 1, 2, 3]


def test_numpy_views_over_bytes_are_read_only() -> None:
    decoded = wire.loads(wire.dumps({"x": np.arange(3)}), backend="numpy")["x"]
    assert not decoded.flags.writeable
    with pytest.raises(ValueError):
        decoded[0] = 5
    writable = wire.loads(wire.dumps({"x": np.arange(3)}), backend="numpy", copy=True)["x"]
    writable[0] = 5


def test_torch_views_over_bytes_do_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    decoded = wire.loads(wire.dumps({"x": torch.arange(3)}), backend="torch")["x"]
    assert decoded.tolist() == [0, 1, 2]
    assert not [w for w in recwarn if "writable" in str(w.message)]


def test_misaligned_buffers_decode() -> None:
    frame = wire.dumps({"x": torch.arange(5, dtype=torch.float64), "y": torch.arange(3, dtype=torch.int32)})
    shifted = bytearray(len(frame) + 1)
    shifted[1:] = frame
    view = memoryview(shifted)[1:]
    decoded = wire.loads(view)
    assert decoded["x"].tolist() == [0, 1, 2, 3, 4] and decoded["y"].tolist() == [0, 1, 2]
    assert wire.loads(view, backend="numpy")["x"].flags.aligned


def test_accepts_bytes_bytearray_memoryview() -> None:
    frame = wire.dumps({"x": [1, 2]})
    for data in (frame, bytearray(frame), memoryview(frame)):
        assert wire.loads(data) == {"x": [1, 2]}
        assert wire.read_metadata(data) == {}


def test_loads_backend_is_checked() -> None:
    with pytest.raises(ValueError, match="backend"):
        wire.loads(wire.dumps(1), backend="jax")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Torch-free use (subprocesses, so this process's torch import does not leak in)
# --------------------------------------------------------------------------------------------


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_does_not_import_torch() -> None:
    out = _run(
        "import sys, ct_core.wire as w\n"
        "frame = w.dumps({'x': [1, 2], 'loss': 0.5})\n"
        "w.loads(frame); w.read_metadata(frame)\n"
        "w.decode_byte_chunks(w.encode_byte_chunks(frame, kind='request', force_chunk=True))\n"
        "print('torch' in sys.modules)"
    )
    assert out.strip() == "False"


def test_numpy_only_environment() -> None:
    # torch made unimportable: auto falls back to numpy, bf16 comes back through ml_dtypes.
    out = _run(
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np, ml_dtypes, ct_core.wire as w\n"
        "a = np.arange(4, dtype=np.float32).astype(ml_dtypes.bfloat16)\n"
        "v = w.loads(w.dumps({'w': a, 'i': np.arange(3)}))\n"
        "print(type(v['w']).__name__, v['w'].dtype, v['w'].tolist(), v['i'].tolist())"
    )
    assert out.split() == ["ndarray", "bfloat16", "[0.0,", "1.0,", "2.0,", "3.0]", "[0,", "1,", "2]"]


def test_bf16_without_ml_dtypes_gives_raw_words() -> None:
    out = _run(
        "import sys; sys.modules['torch'] = None; sys.modules['ml_dtypes'] = None\n"
        "import numpy as np, ct_core.wire as w\n"
        "frame = bytes.fromhex(sys.argv[1]) if len(sys.argv) > 1 else None\n"
        f"frame = bytes.fromhex('{wire.dumps(torch.tensor([1.0, -2.0], dtype=torch.bfloat16)).hex()}')\n"
        "v = w.loads(frame)\n"
        "print(v.dtype, v.tolist())"
    )
    assert out.split() == ["uint16", "[16256,", "49152]"]


# --------------------------------------------------------------------------------------------
# Encoding errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({1: torch.tensor([1])}, "DSSST1 dict keys must be strings, got <class 'int'>"),
        ({1: "plain"}, "dict keys must be strings"),
        ({"a": {None: 1}}, "dict keys must be strings"),
        ({("a",): [1]}, "dict keys must be strings"),
        ({"s": {1, 2}}, "cannot encode a value of type set"),
        ({"o": object()}, "cannot encode a value of type object"),
        ({"b": np.bool_(True)}, "cannot encode a value of type numpy.bool"),
        ({"n": np.float32(1.0)}, "cannot encode a value of type numpy.float32"),
        ({"b": b"bytes"}, "cannot encode a value of type bytes"),
        (np.array(["a", "b"]), "cannot encode numpy arrays of dtype <U1"),
        (np.array([1, None], dtype=object), "cannot encode numpy arrays of dtype object"),
        (torch.zeros(2, dtype=torch.complex128), "cannot encode tensors of dtype torch.complex128"),
        (torch.eye(2).to_sparse(), "dense tensors only"),
    ],
)
def test_unencodable_values_raise_wire_error(value: Any, message: str) -> None:
    with pytest.raises(WireError, match=message.replace("(", r"\(").replace("[", r"\[")):
        wire.dumps(value)


def test_circular_and_deep_values_are_refused() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    with pytest.raises(WireError, match="contains itself"):
        wire.dumps(loop)
    deep: Any = [torch.tensor([1])]
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(WireError, match="nested too deeply"):
        wire.dumps(deep)


def test_bad_operation_metadata() -> None:
    with pytest.raises(WireError, match="must be a dict"):
        wire.dumps(1, metadata=["x"])  # type: ignore[arg-type]
    with pytest.raises(WireError, match="not JSON-serializable"):
        wire.dumps(1, metadata={"x": object()})
    with pytest.raises(WireError, match="not JSON-serializable"):
        wire.dumps(1, metadata={"x": float("nan")})


def test_repeated_reference_to_same_list_is_not_a_cycle() -> None:
    shared = [torch.tensor([1])]
    decoded = roundtrip({"a": shared, "b": shared})
    assert decoded["a"][0].tolist() == [1] and decoded["b"][0].tolist() == [1]


# --------------------------------------------------------------------------------------------
# Decoding errors
# --------------------------------------------------------------------------------------------


def _tensor_header(**extra: Any) -> dict[str, Any]:
    return {"x": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}, **extra}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "payload too short to be a DSSST1 safetensors blob"),
        (b"\x01\x00\x00", "payload too short"),
        ((0).to_bytes(8, "little") + b"{}", "invalid DSSST1 safetensors header length"),
        ((100).to_bytes(8, "little") + b"{}", "invalid DSSST1 safetensors header length"),
        ((2**40).to_bytes(8, "little") + b"{}" * 10, "invalid DSSST1 safetensors header length"),
        ((2).to_bytes(8, "little") + b"\xff\xfe", "not a valid DSSST1 safetensors payload"),
        (
            (3).to_bytes(8, "little") + b"[1]",
            "not a valid DSSST1 safetensors payload: header is not a JSON object",
        ),
        (make_frame({"__metadata__": {"x": 1}}), "__metadata__ must map strings to strings"),
        (make_frame({}), "DSSST1 structure missing from safetensors header"),
        (
            make_frame({"__metadata__": {"dss": dss(["j", 1], "DSSST2")}}),
            "unsupported DSSST1 wire version 'DSSST2'",
        ),
        (make_frame({"__metadata__": {"dss": "{not json"}}), "DSSST1 structure is not valid JSON"),
        (make_frame({"__metadata__": {"dss": "[1]"}}), "must be a JSON object"),
        (make_frame({"__metadata__": {"dss": json.dumps({"v": "DSSST1"})}}), "DSSST1 structure has no tree"),
        (make_frame({"__metadata__": {"dss": dss(["z", 1])}}), "unknown DSSST1 node tag 'z'"),
        (make_frame({"__metadata__": {"dss": dss(["z", [1]])}}), "unknown DSSST1 node tag 'z'"),
        (make_frame({"__metadata__": {"dss": dss([[], 1])}}), r"unknown DSSST1 node tag \[\]"),
        (make_frame({"__metadata__": {"dss": dss(["t", "nope"])}}), "names tensor 'nope'"),
        (make_frame({"__metadata__": {"dss": dss(["t", 5])}}), "malformed DSSST1 't' node"),
        (make_frame({"__metadata__": {"dss": dss(["d", [["a"]]])}}), "malformed DSSST1 'd' node"),
        (make_frame({"__metadata__": {"dss": dss(["d", [[1, ["j", 1]]]])}}), "malformed DSSST1 'd' node"),
        (make_frame({"__metadata__": {"dss": dss(["l", 3])}}), "malformed DSSST1 'l' node"),
        (make_frame({"__metadata__": {"dss": dss(["j"])}}), "malformed DSSST1 node"),
        (make_frame({"__metadata__": {"dss": dss("j")}}), "malformed DSSST1 node"),
        (
            make_frame(
                {"__metadata__": {"dss": dss(["t", "x", {"scalar": True}])}, **_tensor_header()}, b"ab"
            ),
            "scalar tensor 'x' must have shape",
        ),
        (
            make_frame(
                {
                    "__metadata__": {"dss": dss(["t", "x", {"scalar": True, "pyfloat": True}])},
                    **_tensor_header(),
                },
                b"ab",
            ),
            "must be one float64",
        ),
        (
            make_frame({"__metadata__": {"dss": dss(["t", "x", 7])}, **_tensor_header()}, b"ab"),
            "malformed DSSST1 't' node",
        ),
        (
            make_frame({"__metadata__": {"dss": dss(["t", "x"])}, **_tensor_header()}, b"a"),
            "cover the buffer exactly",
        ),
        (
            make_frame({"__metadata__": {"dss": dss(["t", "x"])}, **_tensor_header()}, b"abc"),
            "cover the buffer exactly",
        ),
        (
            make_frame({"x": {"dtype": "U8", "shape": [2], "data_offsets": [1, 3]}}, b"abc"),
            "overlap or leave gaps",
        ),
        (
            make_frame(
                {
                    "x": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
                    "y": {"dtype": "U8", "shape": [2], "data_offsets": [1, 3]},
                },
                b"abc",
            ),
            "overlap or leave gaps",
        ),
        (make_frame({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 2]}}, b"ab"), "byte length"),
        (
            make_frame({"x": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 2]}}, b"ab"),
            "unsupported dtype 'Q9'",
        ),
        (make_frame({"x": {"dtype": "U8", "shape": [-2], "data_offsets": [0, 2]}}, b"ab"), "invalid shape"),
        (make_frame({"x": {"dtype": "U8", "shape": [True], "data_offsets": [0, 1]}}, b"a"), "invalid shape"),
        (
            make_frame({"x": {"dtype": "U8", "shape": [2], "data_offsets": [2, 0]}}, b"ab"),
            "invalid data_offsets",
        ),
        (
            make_frame({"x": {"dtype": "U8", "shape": [2], "data_offsets": [0]}}, b"ab"),
            "invalid data_offsets",
        ),
        (make_frame({"x": [1]}), "entry is not an object"),
        (
            make_frame({"x": {"dtype": "U8", "shape": [2**40, 2**40], "data_offsets": [0, 2]}}, b"ab"),
            "byte length",
        ),
        (
            (lambda h: len(h).to_bytes(8, "little") + h)(
                b'{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":1}'
            ),
            "duplicate header key 'a'",
        ),
        ((4).to_bytes(8, "little") + b"[" * 4, "not a valid DSSST1 safetensors payload"),
    ],
)
def test_malformed_frames_raise_wire_error(data: bytes, message: str) -> None:
    with pytest.raises(WireError, match=message):
        wire.loads(data)
    assert isinstance(wire.read_metadata(data), dict)


def test_deeply_nested_header_and_tree_raise_wire_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(WireError, match="not a valid DSSST1"):
        wire.loads(len(deep).to_bytes(8, "little") + deep.encode())
    tree = '["l", [' * 700 + '["j", 1]' + "]]" * 700
    frame = make_frame({"__metadata__": {"dss": '{"v": "DSSST1", "tree": ' + tree + "}"}})
    # Python's JSON parser or our tree walk hits the depth limit first; either way, a WireError.
    with pytest.raises(WireError, match=r"nested too deeply|not valid JSON"):
        wire.loads(frame)


@pytest.mark.parametrize("value", [None, "frame", 5, [b"x"], np.zeros(3, dtype=np.uint8)])
def test_non_bytes_input(value: Any) -> None:
    with pytest.raises(WireError, match="DSSST1 loads expects bytes"):
        wire.loads(value)
    with pytest.raises(WireError, match="DSSST1 read_metadata expects bytes"):
        wire.read_metadata(value)


class _Boom:
    def __reduce__(self) -> Any:
        return (pytest.fail, ("pickle payload was executed",))


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_payloads_are_refused(protocol: int) -> None:
    payload = pickle.dumps({"x": _Boom()}, protocol=protocol)
    with pytest.raises(WireError, match=r"refusing to deserialize a legacy pickle/torch\.save payload"):
        wire.loads(payload)
    assert wire.read_metadata(payload) == {}


def test_torch_save_payload_is_refused() -> None:
    buffer = io.BytesIO()
    torch.save({"x": torch.zeros(2)}, buffer)
    data = buffer.getvalue()
    assert data.startswith(b"PK\x03\x04")
    with pytest.raises(WireError, match="the peer must use the DSSST1 safetensors wire protocol"):
        wire.loads(data)


def test_frame_starting_like_pickle_is_still_a_frame(assert_same: Callable[..., None]) -> None:
    # A header of 0x0280 + ... bytes starts with the pickle protocol-2 prefix; it must still decode.
    value = {"pad": "x" * 300, "t": torch.tensor([1])}
    frame = wire.dumps(value)
    while frame[:2] != b"\x80\x02":
        value["pad"] += "x"
        frame = wire.dumps(value)
        assert len(value["pad"]) < 2000
    assert_same(wire.loads(frame), value)


def test_read_metadata_is_lenient() -> None:
    assert wire.read_metadata(b"") == {}
    assert wire.read_metadata(b"garbage that is not a frame") == {}
    assert wire.read_metadata(make_frame({"__metadata__": {"op": "{bad"}})) == {}
    assert wire.read_metadata(make_frame({"__metadata__": {"op": "[1, 2]"}})) == {}
    assert wire.read_metadata(make_frame({"__metadata__": {"op": '{"a": 1}'}})) == {"a": 1}


# --------------------------------------------------------------------------------------------
# Byte chunks
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def frame() -> bytes:
    return wire.dumps({"ids": torch.arange(5000, dtype=torch.int64), "meta": {"k": "v"}})


def _desc(chunk: bytes) -> dict[str, Any]:
    desc = wire.read_byte_chunk_metadata(chunk)
    assert desc is not None
    return desc


@pytest.mark.parametrize("max_bytes", [8192 + 1000, 8192 + 4096, 20_000, 39_000])
def test_chunk_roundtrip_and_limits(frame: bytes, max_bytes: int) -> None:
    chunks = wire.encode_byte_chunks(frame, kind="request", operation="fwd-bwd", max_bytes=max_bytes)
    assert len(chunks) > 1
    assert all(len(chunk) <= max_bytes for chunk in chunks)
    descs = [_desc(c) for c in chunks]
    assert [d["chunk_idx"] for d in descs] == list(range(len(chunks)))
    assert {d["total_chunks"] for d in descs} == {len(chunks)}
    assert {d["frame_sha256"] for d in descs} == {hashlib.sha256(frame).hexdigest()}
    assert {d["frame_size_bytes"] for d in descs} == {len(frame)}
    assert len({d["chunk_group_id"] for d in descs}) == 1
    assert list(descs[0]) == [
        "chunk_idx",
        "total_chunks",
        "frame_sha256",
        "frame_size_bytes",
        "chunk_group_id",
        "operation",
        "kind",
    ]
    assert wire.decode_byte_chunks(chunks) == frame
    assert wire.decode_byte_chunks(chunks[::-1], kind="request") == frame


def test_halving_when_header_overflows(frame: bytes) -> None:
    # max_bytes just above the overhead: the first payload size (max_bytes - 8192) does not leave
    # room for the chunk header, so the size halves until every chunk fits.
    chunks = wire.encode_byte_chunks(frame, kind="result", max_bytes=8192 + 300)
    assert all(len(c) <= 8192 + 300 for c in chunks)
    assert wire.decode_byte_chunks(chunks, kind="result") == frame


def test_no_chunking_when_it_fits(frame: bytes) -> None:
    assert wire.encode_byte_chunks(frame, kind="request") == [frame]
    assert wire.encode_byte_chunks(frame, kind="request", max_bytes=len(frame)) == [frame]
    assert wire.encode_byte_chunks(bytearray(frame), kind="result", max_bytes=-1) == [frame]
    assert wire.decode_byte_chunks([frame]) == frame


def test_forced_single_chunk(frame: bytes) -> None:
    (chunk,) = wire.encode_byte_chunks(frame, kind="request", force_chunk=True, chunk_group_id="g-1")
    desc = _desc(chunk)
    assert (desc["chunk_idx"], desc["total_chunks"], desc["chunk_group_id"]) == (0, 1, "g-1")
    assert "operation" not in desc
    assert wire.decode_byte_chunks([chunk]) == frame
    (forced,) = wire.encode_byte_chunks(frame, kind="request", max_bytes=len(frame) * 2, force_chunk=True)
    assert _desc(forced)["total_chunks"] == 1


def test_request_group_ids_and_result_chunks(frame: bytes) -> None:
    first = wire.encode_byte_chunks(frame, kind="request", force_chunk=True)
    second = wire.encode_byte_chunks(frame, kind="request", force_chunk=True)
    assert _desc(first[0])["chunk_group_id"] != _desc(second[0])["chunk_group_id"]
    (result,) = wire.encode_byte_chunks(frame, kind="result", force_chunk=True, chunk_group_id="ignored")
    assert "chunk_group_id" not in _desc(result)
    assert _desc(result)["kind"] == "result"


def test_empty_frame_forced_chunk() -> None:
    (chunk,) = wire.encode_byte_chunks(b"", kind="result", max_bytes=9000, force_chunk=True)
    assert _desc(chunk)["frame_size_bytes"] == 0
    assert wire.decode_byte_chunks([chunk]) == b""


def test_iter_byte_chunks_matches_encode(frame: bytes) -> None:
    kwargs: dict[str, Any] = {"kind": "request", "max_bytes": 9000 + 8192, "chunk_group_id": "g"}
    assert list(wire.iter_byte_chunks(frame, **kwargs)) == wire.encode_byte_chunks(frame, **kwargs)


def test_frame_is_hashed_once(frame: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    import ct_core.wire.chunks as chunks_module

    calls: list[int] = []

    def counting_sha256(data: Any = b"") -> Any:
        calls.append(len(data))
        return hashlib.sha256(data)

    monkeypatch.setattr(chunks_module, "sha256", counting_sha256)
    chunks = wire.encode_byte_chunks(frame, kind="request", max_bytes=8192 + 1024)
    assert len(chunks) > 10
    assert calls == [len(frame)]


def test_chunk_operation_metadata_survives(frame: bytes) -> None:
    metadata = {
        "router_replay": {"mode": "replay"},
        "response_options": {"format": "dssst1", "delivery": "chunked"},
    }
    inner = wire.dumps({"x": torch.arange(3000)}, metadata=metadata)
    chunks = wire.encode_byte_chunks(inner, kind="request", operation="fwd-bwd", max_bytes=9000 + 8192)
    assert wire.read_metadata(wire.decode_byte_chunks(chunks)) == metadata


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "bogus"}, "unknown byte chunk kind 'bogus'"),
        ({"kind": None}, "unknown byte chunk kind None"),
        ({"kind": "request", "max_bytes": 100}, "max_bytes is too small to hold one DSSST1 byte chunk frame"),
        ({"kind": "request", "max_bytes": 1.5}, "max_bytes must be an integer"),
        ({"kind": "request", "operation": 3, "force_chunk": True}, "operation must be a string"),
    ],
)
def test_encode_chunk_errors(frame: bytes, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(WireError, match=message):
        wire.encode_byte_chunks(frame, **kwargs)


def test_encode_chunks_requires_bytes() -> None:
    with pytest.raises(WireError, match="expects bytes"):
        wire.encode_byte_chunks("text", kind="request")  # type: ignore[arg-type]


def _forged(desc: dict[str, Any], payload: Any = None, key: str = "request_chunk") -> bytes:
    value = {"payload": np.frombuffer(b"ab", dtype=np.uint8) if payload is None else payload}
    return wire.dumps(value, metadata={key: desc})


def _good(idx: int, total: int = 2, **changes: Any) -> dict[str, Any]:
    desc = {
        "chunk_idx": idx,
        "total_chunks": total,
        "frame_sha256": hashlib.sha256(b"abab"[: 2 * total]).hexdigest(),
        "frame_size_bytes": 2 * total,
        "chunk_group_id": "g",
        "operation": "fwd-bwd",
    }
    desc.update(changes)
    return {k: v for k, v in desc.items() if v is not ...}


def test_forged_chunks_decode_when_consistent() -> None:
    assert wire.decode_byte_chunks([_forged(_good(1)), _forged(_good(0))]) == b"abab"


@pytest.mark.parametrize(
    ("chunks", "message"),
    [
        ([], "decode_byte_chunks requires at least one frame"),
        (
            [_forged(_good(0)), wire.dumps(1)],
            "decode_byte_chunks received a frame without byte chunk metadata",
        ),
        ([wire.dumps(1), wire.dumps(2)], "without byte chunk metadata"),
        ([_forged(_good(0)), _forged(_good(1), key="result_chunk")], "mixed byte chunk kinds"),
        ([_forged(_good(0))], "expected 2 byte chunks, got 1"),
        ([_forged(_good(0)), _forged(_good(1, total=3))], "byte chunk total_chunks differs across frames"),
        ([_forged(_good(0)), _forged(_good(1, frame_sha256="0" * 64))], "byte chunk frame_sha256 differs"),
        ([_forged(_good(0)), _forged(_good(1, frame_size_bytes=5))], "byte chunk frame_size_bytes differs"),
        ([_forged(_good(0)), _forged(_good(1, chunk_group_id="h"))], "byte chunk chunk_group_id differs"),
        ([_forged(_good(0)), _forged(_good(1, operation="generate"))], "byte chunk operation differs"),
        ([_forged(_good(0)), _forged(_good(2))], "byte chunk_idx out of range"),
        ([_forged(_good(0)), _forged(_good(-1))], "byte chunk_idx out of range"),
        ([_forged(_good(0)), _forged(_good(0))], "duplicate byte chunk_idx"),
        ([_forged(_good(0)), _forged(_good(1), payload="ab")], "byte chunk payload must be a tensor"),
        ([_forged(_good(0)), _forged(_good(1), payload=np.zeros(1, np.int16))], "must be uint8, got I16"),
        (
            [_forged(_good(0)), _forged(_good(1), payload=np.zeros((1, 2), np.uint8))],
            r"must be 1-D, got shape \(1, 2\)",
        ),
        (
            [_forged(_good(0)), _forged(_good(1), payload=np.array(5, np.uint8))],
            r"must be 1-D, got shape \(\)",
        ),
        (
            [_forged(_good(0)), _forged(_good(1), payload=np.zeros(3, np.uint8))],
            "reassembled frame size mismatch",
        ),
        ([_forged(_good(0)), _forged(_good(1), payload=np.frombuffer(b"zz", np.uint8))], "sha256 mismatch"),
        ([_forged(_good(0, chunk_idx="0")), _forged(_good(1))], "'chunk_idx' must be an integer"),
        ([_forged(_good(0, total_chunks=...)), _forged(_good(1))], "'total_chunks' must be an integer"),
        (
            [_forged(_good(0, frame_size_bytes=2.0)), _forged(_good(1))],
            "'frame_size_bytes' must be an integer",
        ),
        ([_forged(_good(0, total_chunks=True)), _forged(_good(1))], "'total_chunks' must be an integer"),
        ([_forged(_good(0)), b"\x00" * 20], "without byte chunk metadata"),
    ],
)
def test_decode_chunk_errors(chunks: list[bytes], message: str) -> None:
    with pytest.raises(WireError, match=message):
        wire.decode_byte_chunks(chunks)


def test_decode_chunk_kind_mismatch(frame: bytes) -> None:
    chunks = wire.encode_byte_chunks(frame, kind="request", force_chunk=True)
    with pytest.raises(WireError, match="expected result chunks, got request chunks"):
        wire.decode_byte_chunks(chunks, kind="result")


@pytest.mark.parametrize("chunks", [b"frame", "frame", None, 5])
def test_decode_chunks_needs_a_list(chunks: Any) -> None:
    with pytest.raises(WireError, match="expects a list of frames"):
        wire.decode_byte_chunks(chunks)


def test_read_byte_chunk_metadata() -> None:
    assert wire.read_byte_chunk_metadata(wire.dumps(1)) is None
    assert wire.read_byte_chunk_metadata(b"junk") is None
    assert wire.read_byte_chunk_metadata(wire.dumps(1, metadata={"request_chunk": 5})) is None
    desc = wire.read_byte_chunk_metadata(_forged(_good(0), key="result_chunk"))
    assert desc is not None and desc["kind"] == "result"


def test_result_chunks_roundtrip(assert_same: Callable[..., None]) -> None:
    result = {"logprobs": torch.randn(300, 40), "metrics": {"loss": 0.1}, "tokens": [[1, 2], [3]]}
    chunks = wire.encode_result_chunks(result, max_bytes=8192 + 4096)
    assert len(chunks) > 1 and all(_desc(c)["kind"] == "result" for c in chunks)
    assert_same(wire.decode_result_chunks(chunks), result)
    (single,) = wire.encode_result_chunks(result)
    assert wire.read_byte_chunk_metadata(single) is None
    assert_same(wire.decode_result_chunks([single]), result)
    as_numpy = wire.decode_result_chunks(chunks[::-1], backend="numpy")
    assert isinstance(as_numpy["logprobs"], np.ndarray)
    with pytest.raises(WireError, match="expected result chunks, got request chunks"):
        wire.decode_result_chunks(
            wire.encode_byte_chunks(wire.dumps(result), kind="request", force_chunk=True)
        )


def test_large_frames_verify_hash_while_copying() -> None:
    frame = wire.dumps({"x": np.arange(2 * 2**20, dtype=np.int64)})  # 16 MiB: the threaded path
    chunks = wire.encode_byte_chunks(frame, kind="result", max_bytes=4 * 2**20)
    assert wire.decode_byte_chunks(chunks) == frame
    assert wire.decode_result_chunks(chunks, backend="numpy")["x"][-1] == 2 * 2**20 - 1
    corrupted = bytearray(chunks[-1])
    corrupted[-1] ^= 1
    chunks[-1] = bytes(corrupted)
    with pytest.raises(WireError, match="reassembled frame sha256 mismatch"):
        wire.decode_byte_chunks(chunks)
    with pytest.raises(WireError, match="reassembled frame sha256 mismatch"):
        wire.decode_result_chunks(chunks)


def test_decoded_result_chunks_are_writable() -> None:
    chunks = wire.encode_result_chunks({"x": np.arange(5000)}, max_bytes=8192 + 4096)
    assert len(chunks) > 1
    decoded = wire.decode_result_chunks(chunks, backend="numpy")["x"]
    assert decoded.flags.writeable
    decoded[0] = 7
    as_torch = wire.decode_result_chunks(chunks, backend="torch")["x"]
    as_torch[0] = 7  # private memory: no warning, no aliasing of the chunk frames
    assert wire.decode_result_chunks(chunks, backend="numpy")["x"][0] == 0


def _large_frame() -> bytes:
    return wire.dumps({"x": np.arange(3 * 2**20, dtype=np.int64)})  # 24 MiB: the threaded path


def test_large_frame_is_hashed_beside_the_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import ct_core.wire.chunks as chunks_module

    threads: list[str] = []

    def recording_sha256(data: Any = b"") -> Any:
        threads.append(threading.current_thread().name)
        return hashlib.sha256(data)

    frame = _large_frame()
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(chunks_module, "sha256", recording_sha256)
    chunks = wire.encode_byte_chunks(frame, kind="request", max_bytes=4 * 2**20, chunk_group_id="g")
    assert len(threads) == 1 and threads[0] != threading.main_thread().name
    assert all(type(chunk) is bytes for chunk in chunks)
    assert {_desc(c)["frame_sha256"] for c in chunks} == {hashlib.sha256(frame).hexdigest()}
    # The chunk frames are ordinary bytes: equal, hashable and alike to the serial path's.
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    serial = wire.encode_byte_chunks(frame, kind="request", max_bytes=4 * 2**20, chunk_group_id="g")
    assert serial == chunks
    assert {hash(c) for c in chunks} == {hash(bytes(bytearray(c))) for c in serial}
    kwargs: dict[str, Any] = {"kind": "request", "max_bytes": 4 * 2**20, "chunk_group_id": "g"}
    assert list(wire.iter_byte_chunks(frame, **kwargs)) == chunks
    decoded = wire.decode_byte_chunks(chunks)
    assert type(decoded) is bytes and decoded == frame
    results = wire.encode_byte_chunks(frame, kind="result", max_bytes=4 * 2**20)
    assert wire.decode_result_chunks(results, backend="numpy")["x"][-1] == 3 * 2**20 - 1


def test_one_cpu_encodes_large_frames_serially(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import ct_core.wire.chunks as chunks_module

    threads: list[str] = []

    def recording_sha256(data: Any = b"") -> Any:
        threads.append(threading.current_thread().name)
        return hashlib.sha256(data)

    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    monkeypatch.setattr(chunks_module, "sha256", recording_sha256)
    frame = _large_frame()
    chunks = wire.encode_byte_chunks(frame, kind="result", max_bytes=4 * 2**20)
    assert threads == [threading.main_thread().name]
    assert wire.decode_byte_chunks(chunks) == frame
