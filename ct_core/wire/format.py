"""The safetensors container under DSSST1: dtype table, header layout, writing and strict parsing.

This module knows nothing about the DSSST1 structure tree; it turns a list of named byte buffers
plus string metadata into one safetensors blob, and a blob back into a table of byte ranges.
It is written by hand (rather than through `safetensors.serialize`) for two reasons:

* memory: the frame is assembled by one `bytes.join` over views of the caller's tensors, so the
  only large allocation is the frame itself (the library copies every tensor into an intermediate
  buffer first);
* decoding without copies: the parser hands back byte offsets, so the codec can build numpy or
  torch views over the caller's buffer.

The layout matches what `safetensors` 0.8 writes byte for byte (checked by the golden-frame and
interop tests): an unsigned 64-bit little-endian header length, a compact JSON header with
`__metadata__` first, tensors ordered by dtype (widest first, in safetensors' enum order) then by
name, the header padded with spaces to a multiple of 8, then the raw little-endian tensor bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ct_core.errors import WireError

# A header longer than this is refused before it is parsed, so a
# hostile length prefix cannot make us allocate or scan more than this much JSON.
MAX_HEADER_BYTES = 64 * 1024 * 1024
# The length prefix is one unsigned 64-bit little-endian integer.
LENGTH_PREFIX_BYTES = 8
# safetensors pads the JSON header with spaces so the data section starts 8-byte aligned.
HEADER_ALIGNMENT = 8
METADATA_KEY = "__metadata__"
# What the public functions accept as a frame.
BYTES_LIKE = (bytes, bytearray, memoryview)

# Legacy payloads we must refuse by name rather than report as "not safetensors":
# pickle protocols 2-5 start with PROTO (0x80) + version; torch.save archives are zip files.
_PICKLE_PREFIXES = frozenset(bytes([0x80, protocol]) for protocol in range(2, 6))
_ZIP_PREFIX = b"PK\x03\x04"
LEGACY_PAYLOAD_MESSAGE = (
    "refusing to deserialize a legacy pickle/torch.save payload; "
    "the peer must use the DSSST1 safetensors wire protocol"
)


@dataclass(frozen=True, slots=True)
class DType:
    """One safetensors dtype: its header code, element size and names in numpy and torch."""

    code: str
    itemsize: int
    # Position in safetensors' Rust `Dtype` enum; the writer orders tensors by it, descending.
    rank: int
    numpy_name: str
    torch_name: str


# Every dtype of the safetensors enum that numpy (with ml_dtypes) and torch can both hold. The
# sub-byte formats (F4, F6_*) and F8_E8M0 are left out: neither peer produces them for DSSST1.
_DTYPE_LIST = (
    DType("BOOL", 1, 0, "bool", "bool"),
    DType("U8", 1, 4, "uint8", "uint8"),
    DType("I8", 1, 5, "int8", "int8"),
    DType("F8_E5M2", 1, 6, "float8_e5m2", "float8_e5m2"),
    DType("F8_E4M3", 1, 7, "float8_e4m3fn", "float8_e4m3fn"),
    DType("I16", 2, 9, "int16", "int16"),
    DType("U16", 2, 10, "uint16", "uint16"),
    DType("F16", 2, 11, "float16", "float16"),
    DType("BF16", 2, 12, "bfloat16", "bfloat16"),
    DType("I32", 4, 13, "int32", "int32"),
    DType("U32", 4, 14, "uint32", "uint32"),
    DType("F32", 4, 15, "float32", "float32"),
    DType("C64", 8, 16, "complex64", "complex64"),
    DType("F64", 8, 17, "float64", "float64"),
    DType("I64", 8, 18, "int64", "int64"),
    DType("U64", 8, 19, "uint64", "uint64"),
)
DTYPES: dict[str, DType] = {d.code: d for d in _DTYPE_LIST}
DTYPES_BY_NUMPY_NAME: dict[str, DType] = {d.numpy_name: d for d in _DTYPE_LIST}
DTYPES_BY_TORCH_NAME: dict[str, DType] = {d.torch_name: d for d in _DTYPE_LIST}


@dataclass(slots=True)
class TensorBytes:
    """A tensor ready to be written: its key, dtype code, shape and contiguous raw bytes."""

    key: str
    code: str
    shape: tuple[int, ...]
    data: Any  # any C-contiguous buffer of exactly nbytes bytes (bytes, memoryview, ...)
    nbytes: int


@dataclass(frozen=True, slots=True)
class TensorRange:
    """Where one tensor of a parsed frame lives: absolute byte offsets into the frame."""

    code: str
    shape: tuple[int, ...]
    start: int
    stop: int


@dataclass(frozen=True, slots=True)
class ParsedFrame:
    """A validated safetensors blob: the byte view, its string metadata and its tensor table."""

    view: memoryview
    metadata: dict[str, str]
    tensors: dict[str, TensorRange]


def byte_view(data: Any, who: str) -> memoryview:
    """Return a flat unsigned-byte view of `data`, or raise the contract's "expects bytes" error."""
    if not isinstance(data, BYTES_LIKE):
        raise WireError(f"DSSST1 {who} expects bytes")
    view = memoryview(data)
    if view.format == "B" and view.ndim == 1:
        return view
    if not view.c_contiguous:
        raise WireError(f"DSSST1 {who} expects bytes (got a non-contiguous memoryview)")
    return view.cast("B")


def is_legacy_payload(view: memoryview) -> bool:
    """True for bytes that look like a pickle stream or a torch.save zip archive."""
    head = bytes(view[:4])
    return head[:2] in _PICKLE_PREFIXES or head == _ZIP_PREFIX


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _sorted_for_writing(tensors: Sequence[TensorBytes]) -> list[TensorBytes]:
    # safetensors sorts by dtype descending, then name ascending. Rust compares names as UTF-8
    # bytes, which orders like Python's code-point comparison for encodable strings.
    return sorted(tensors, key=lambda t: (-DTYPES[t.code].rank, t.key))


def encode_header(metadata: dict[str, str] | None, tensors: Sequence[TensorBytes]) -> bytes:
    """The length prefix plus the padded JSON header for `tensors`, which must already be sorted."""
    header: dict[str, Any] = {}
    if metadata:
        header[METADATA_KEY] = metadata
    offset = 0
    for tensor in tensors:
        header[tensor.key] = {
            "dtype": tensor.code,
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + tensor.nbytes],
        }
        offset += tensor.nbytes
    # Compact separators and raw UTF-8 (no \u escapes) are what serde_json writes.
    try:
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError) as exc:
        raise WireError(f"cannot write DSSST1 header: {exc}") from exc
    text += b" " * (-len(text) % HEADER_ALIGNMENT)
    if len(text) > MAX_HEADER_BYTES:
        raise WireError("DSSST1 header would exceed the 64 MiB limit; use fewer tensors or less JSON")
    return len(text).to_bytes(LENGTH_PREFIX_BYTES, "little") + text


def frame_size(metadata: dict[str, str] | None, tensors: Sequence[TensorBytes]) -> int:
    """The exact size of the frame `write_frame` would produce, without building it."""
    ordered = _sorted_for_writing(tensors)
    return len(encode_header(metadata, ordered)) + sum(t.nbytes for t in ordered)


def write_frame(metadata: dict[str, str] | None, tensors: Sequence[TensorBytes]) -> bytes:
    """Assemble one safetensors blob.

    `bytes.join` sizes the result once and copies each buffer straight into it, so peak memory is
    the inputs plus the output frame: no intermediate per-tensor copies.
    """
    ordered = _sorted_for_writing(tensors)
    return b"".join([encode_header(metadata, ordered), *(t.data for t in ordered)])


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def _invalid(cause: str) -> WireError:
    return WireError(f"not a valid DSSST1 safetensors payload: {cause}")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads silently keeps the last duplicate; two entries for one tensor name (or two
    # `dss` strings) would make the frame mean different things to different readers.
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _invalid(f"duplicate header key {key!r}")
        result[key] = value
    return result


def _header_length(view: memoryview) -> int:
    if len(view) < LENGTH_PREFIX_BYTES:
        raise WireError("payload too short to be a DSSST1 safetensors blob")
    length = int.from_bytes(view[:LENGTH_PREFIX_BYTES], "little")
    if length <= 0 or length > MAX_HEADER_BYTES or LENGTH_PREFIX_BYTES + length > len(view):
        raise WireError("invalid DSSST1 safetensors header length")
    return length


def _load_header(view: memoryview) -> tuple[dict[str, Any], int]:
    length = _header_length(view)
    raw = bytes(view[LENGTH_PREFIX_BYTES : LENGTH_PREFIX_BYTES + length])
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
    except WireError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _invalid(f"header is not JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise _invalid("header is not a JSON object")
    return header, LENGTH_PREFIX_BYTES + length


def _string_metadata(header: dict[str, Any]) -> dict[str, str]:
    metadata = header.get(METADATA_KEY)
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise _invalid("__metadata__ must map strings to strings")
    return metadata


def read_header_metadata(data: memoryview) -> dict[str, str]:
    """Only the header's string metadata; the tensor table is not checked."""
    header, _ = _load_header(data)
    return _string_metadata(header)


def _non_negative_ints(value: Any, what: str, name: str) -> tuple[int, ...]:
    # bool is an int subclass; `true` is not a valid dimension or offset.
    if not isinstance(value, list) or not all(type(v) is int and v >= 0 for v in value):
        raise _invalid(f"tensor {name!r} has an invalid {what}")
    return tuple(value)


def _tensor_range(name: str, entry: Any, data_start: int) -> TensorRange:
    if not isinstance(entry, dict):
        raise _invalid(f"tensor {name!r} entry is not an object")
    code = entry.get("dtype")
    dtype = DTYPES.get(code) if isinstance(code, str) else None
    if dtype is None:
        raise _invalid(f"tensor {name!r} has an unsupported dtype {code!r}")
    shape = _non_negative_ints(entry.get("shape"), "shape", name)
    offsets = _non_negative_ints(entry.get("data_offsets"), "data_offsets", name)
    if len(offsets) != 2 or offsets[0] > offsets[1]:
        raise _invalid(f"tensor {name!r} has an invalid data_offsets")
    count = 1
    for dim in shape:
        count *= dim
    if count * dtype.itemsize != offsets[1] - offsets[0]:
        raise _invalid(f"tensor {name!r} byte length does not match its dtype and shape")
    return TensorRange(dtype.code, shape, data_start + offsets[0], data_start + offsets[1])


def parse_frame(view: memoryview) -> ParsedFrame:
    """Validate a safetensors blob as strictly as the safetensors library does.

    Every tensor needs a known dtype, a shape matching its byte length, and the byte ranges must
    tile the data section exactly (no gaps, no overlaps, nothing trailing). Nothing is copied.
    """
    header, data_start = _load_header(view)
    metadata = _string_metadata(header)
    tensors = {
        name: _tensor_range(name, entry, data_start) for name, entry in header.items() if name != METADATA_KEY
    }
    cursor = data_start
    for tensor in sorted(tensors.values(), key=lambda t: (t.start, t.stop)):
        if tensor.start != cursor:
            raise _invalid("tensor data offsets overlap or leave gaps")
        cursor = tensor.stop
    if cursor != len(view):
        raise _invalid("tensor data does not cover the buffer exactly")
    return ParsedFrame(view, metadata, tensors)
