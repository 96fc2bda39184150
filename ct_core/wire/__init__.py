"""DSSST1, the binary wire format of Cortex Training (docs/reference/wire.md).

This module is the public surface and owns the value codec:

* `dumps(value, metadata=...)` writes a nested dict / list / tuple of tensors and JSON values as one
  safetensors blob whose `__metadata__` holds the structure skeleton (`dss`) and, optionally,
  operation metadata (`op`: response options, router replay, chunk descriptors).
* `loads(frame)` reads it back, never through pickle; `read_metadata(frame)` peeks at `op` only.
* Byte chunking of large frames (`encode_byte_chunks`, `decode_byte_chunks`, ...) lives in
  `ct_core.wire.chunks` and is re-exported here, together with the result-chunk helpers.

Layout of a frame::

    u64 little-endian header length N | N bytes of JSON header (space padded) | tensor bytes

Tensors may be torch tensors or numpy arrays (bfloat16 and float8 numpy arrays come from
`ml_dtypes`). Importing this module never imports torch: torch is only touched when the
value being written holds torch tensors, or when `loads` is asked for (or defaults to) torch
tensors and the frame holds any. Frames are byte-compatible with the reference `cortex_training.wire`
in both directions; the container details are in `ct_core.wire.format`, the structure tree in
`ct_core.wire.tree`.

Decoding makes views, not copies: tensors returned by `loads` share memory with the buffer passed
in (pass `copy=True` for private memory). See docs/reference/wire.md.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import struct
import warnings
from typing import Any, Literal

import numpy as np

from ct_core.errors import WireError
from ct_core.wire.chunks import (
    decode_byte_chunks,
    encode_byte_chunks,
    iter_byte_chunks,
    read_byte_chunk_metadata,
    reassemble_writable,
)
from ct_core.wire.format import (
    DTYPES,
    LEGACY_PAYLOAD_MESSAGE,
    ParsedFrame,
    TensorBytes,
    TensorRange,
    byte_view,
    is_legacy_payload,
    parse_frame,
    read_header_metadata,
    write_frame,
)
from ct_core.wire.tree import (
    OP_KEY,
    PLACEHOLDER_KEY,
    PYFLOAT_OPTION,
    STRUCT_KEY,
    WIRE_FORMAT_VERSION,
    TreeEncoder,
    decode_tree,
    load_structure,
    structure_json,
)

__all__ = [
    "WIRE_FORMAT_VERSION",
    "Backend",
    "WireError",
    "decode_byte_chunks",
    "decode_result_chunks",
    "dumps",
    "encode_byte_chunks",
    "encode_result_chunks",
    "iter_byte_chunks",
    "loads",
    "read_byte_chunk_metadata",
    "read_metadata",
]

# Which kind of tensors `loads` returns: "torch" when torch is importable ("auto"), else numpy.
Backend = Literal["auto", "torch", "numpy"]
_BACKENDS = ("auto", "torch", "numpy")

# Written when a value holds no tensor, so every frame carries one; readers skip it.
_PLACEHOLDER = TensorBytes(PLACEHOLDER_KEY, "U8", (1,), b"\x00", 1)

_torch_available: bool | None = None


def _torch_importable() -> bool:
    global _torch_available
    if _torch_available is None:
        _torch_available = importlib.util.find_spec("torch") is not None
    return _torch_available


# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------


def _op_json(metadata: Any) -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise WireError(f"DSSST1 operation metadata must be a dict, got {type(metadata).__qualname__}")
    if not metadata:
        return None  # an empty op is omitted, as in the reference
    try:
        return json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise WireError(f"DSSST1 operation metadata is not JSON-serializable: {exc}") from exc


def dumps(obj: Any, *, metadata: dict[str, Any] | None = None) -> bytes:
    """Serialize `obj` into one DSSST1 frame, with optional operation `metadata` (`op`).

    `obj` may nest dicts (string keys), lists and tuples of torch tensors, numpy arrays and JSON
    values. Tensors are written detached, on CPU, contiguous and little-endian. The frame is built
    in a single allocation, so peak memory is about the payload size on top of the inputs.
    Raises WireError for anything that cannot be carried faithfully.
    """
    encoder = TreeEncoder()
    tree = encoder.encode(obj)
    tensors = encoder.tensors() or [_PLACEHOLDER]
    header = {STRUCT_KEY: structure_json(tree)}
    op = _op_json(metadata)
    if op is not None:
        header[OP_KEY] = op
    return write_frame(header, tensors)


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


class _TensorFactory:
    """Builds (and caches, per key) numpy or torch views over a parsed frame's bytes."""

    def __init__(self, frame: ParsedFrame, backend: Backend, copy: bool) -> None:
        self._frame = frame
        self._backend = backend
        self._copy = copy
        self._base: np.ndarray | None = None
        self._torch: Any = None
        self._ml_dtypes: Any = None
        self._cache: dict[str, Any] = {}

    def __call__(self, key: str, options: dict[str, Any] | None) -> Any:
        entry = self._frame.tensors.get(key)
        if entry is None:
            raise WireError(f"DSSST1 structure names tensor {key!r}, which the frame does not hold")
        options = options or {}
        if options.get(PYFLOAT_OPTION):
            if entry.code != "F64" or entry.stop - entry.start != 8:
                raise WireError(f"DSSST1 float tensor {key!r} must be one float64")
            return struct.unpack_from("<d", self._frame.view, entry.start)[0]
        tensor = self._cache.get(key)
        if tensor is None:
            tensor = self._cache[key] = self._build(entry)
        if options.get("scalar"):
            if tuple(entry.shape) != (1,):
                raise WireError(f"DSSST1 scalar tensor {key!r} must have shape [1], got {list(entry.shape)}")
            return tensor.reshape(())
        return tensor

    def _bytes(self, entry: TensorRange) -> np.ndarray:
        if self._base is None:
            base = np.frombuffer(self._frame.view, dtype=np.uint8)
            # copy=True: one copy of the whole frame, then views into it.
            self._base = base.copy() if self._copy else base
        segment = self._base[entry.start : entry.stop]
        itemsize = DTYPES[entry.code].itemsize
        if segment.__array_interface__["data"][0] % itemsize:
            # Another writer may leave a tensor misaligned; only then is a copy unavoidable.
            segment = segment.copy()
        return segment

    def _build(self, entry: TensorRange) -> Any:
        use_torch = self._backend == "torch" or (self._backend == "auto" and _torch_importable())
        segment = self._bytes(entry)
        if use_torch:
            return self._torch_view(segment, entry)
        return segment.view(self._numpy_dtype(entry.code)).reshape(entry.shape)

    def _numpy_dtype(self, code: str) -> Any:
        name = DTYPES[code].numpy_name
        if hasattr(np, name):
            return np.dtype(name)
        if self._ml_dtypes is None:
            try:
                self._ml_dtypes = importlib.import_module("ml_dtypes")
            except ImportError:
                self._ml_dtypes = False
        if self._ml_dtypes:
            return np.dtype(getattr(self._ml_dtypes, name))
        # Without ml_dtypes, bf16 / fp8 come back as their raw bit patterns (documented).
        return np.dtype(np.uint16 if DTYPES[code].itemsize == 2 else np.uint8)

    def _torch_view(self, segment: np.ndarray, entry: TensorRange) -> Any:
        if self._torch is None:
            self._torch = importlib.import_module("torch")
        torch = self._torch
        dtype = getattr(torch, DTYPES[entry.code].torch_name)
        if segment.flags.writeable:
            raw = torch.from_numpy(segment)
        else:
            # The caller passed immutable bytes: the tensor aliases them (documented; copy=True or a
            # bytearray avoids it). torch warns about that once per process; the warning is noise here.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*not writable.*", category=UserWarning)
                raw = torch.from_numpy(segment)
        return raw.view(dtype).reshape(entry.shape)


def _parse(view: memoryview) -> ParsedFrame:
    try:
        return parse_frame(view)
    except WireError as exc:
        # Only after the bytes fail as safetensors: a valid length prefix may start with 0x80 0x02.
        if is_legacy_payload(view):
            raise WireError(LEGACY_PAYLOAD_MESSAGE) from exc
        raise


def loads(data: bytes | bytearray | memoryview, *, backend: Backend = "auto", copy: bool = False) -> Any:
    """Decode one DSSST1 frame into the value `dumps` was given.

    backend: "torch" returns torch tensors, "numpy" numpy arrays, "auto" (default) torch when it is
    importable and numpy otherwise. Tensors are views over `data` unless `copy` is true; views over
    immutable `bytes` must not be written to. Never unpickles: pickle and torch.save payloads are
    refused. Every malformed input raises WireError.
    """
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    view = byte_view(data, "loads")
    frame = _parse(view)
    tree = load_structure(frame.metadata)
    return decode_tree(tree, _TensorFactory(frame, backend, copy))


def read_metadata(data: bytes | bytearray | memoryview) -> dict[str, Any]:
    """Return a frame's operation metadata (`op`) from its header alone; tensors are not read.

    Lenient by design: anything that is not a frame with a JSON object under `op` gives
    `{}`. Only a non-bytes argument raises WireError.
    """
    view = byte_view(data, "read_metadata")
    try:
        raw = read_header_metadata(view).get(OP_KEY)
    except WireError:
        return {}
    if not raw:
        return {}
    try:
        op = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    return op if isinstance(op, dict) else {}


# --------------------------------------------------------------------------------------------
# Result chunks
# --------------------------------------------------------------------------------------------


def encode_result_chunks(result: Any, *, max_bytes: int = 0) -> list[bytes]:
    """Encode a result and split it into `result_chunk` frames of at most `max_bytes` (0: no split)."""
    frame = dumps(result)
    return encode_byte_chunks(frame, max_bytes=max_bytes, kind="result")


def decode_result_chunks(chunks: list[bytes], *, backend: Backend = "auto") -> Any:
    """Reassemble `result_chunk` frames (or one plain frame) and decode the result they carry.

    Chunked results are joined into one private writable buffer, so the tensors are writable views
    of it (one copy of the payload in all).
    """
    frame = reassemble_writable(chunks, kind="result")
    if isinstance(frame, np.ndarray):
        frame = frame.data
    return loads(frame, backend=backend)
