"""DSSST1 byte chunks: splitting a finished frame into byte-range frames and joining them back.

A chunk frame is itself a DSSST1 frame holding `{"payload": <1-D uint8 tensor>}` whose `op`
metadata carries a descriptor under `request_chunk` or `result_chunk`: chunk_idx,
total_chunks, frame_sha256 and frame_size_bytes of the whole original frame, the chunk_group_id
(requests only) and the operation name when given. The layouts and split points are the same as
the reference's, so either side reassembles the other's chunks.

Where we differ from the reference is cost: the frame is hashed once, not once per chunk;
chunk sizes are computed arithmetically instead of by building every chunk and rebuilding on
overflow; every payload byte is copied once; and on a large frame the one hash pass runs on a
worker thread while the main thread copies, so encoding or reassembling costs about one hash pass.

Encoding overlaps the two although each chunk header names the digest of the whole frame: the hex
digest has a fixed length, so each chunk frame is written with a placeholder digest (same length,
same split points) while the hash runs, and the real digest is written over the placeholder
afterwards. The chunk frames are still plain `bytes`: they are made uninitialised through the
C API and filled before anything else can see them (`_fresh_bytes`).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from hashlib import sha256
from typing import Any, TypeVar

import numpy as np

from ct_core.errors import WireError
from ct_core.wire.format import (
    ParsedFrame,
    TensorBytes,
    byte_view,
    encode_header,
    parse_frame,
    read_header_metadata,
    write_frame,
)
from ct_core.wire.tree import OP_KEY, STRUCT_KEY, WIRE_FORMAT_VERSION, decode_tree, load_structure

REQUEST_CHUNK_KEY = "request_chunk"
RESULT_CHUNK_KEY = "result_chunk"
PAYLOAD_KEY = "payload"
# Head-room left for the chunk frame's own header when sizing payloads (the reference's value;
# keeping it keeps our split points identical to its).
CHUNK_OVERHEAD_BYTES = 8192
# Below this size the hash runs inline: a thread costs more than it saves.
PARALLEL_HASH_BYTES = 8 * 1024 * 1024
# A hex SHA-256 digest is always this long; the encoder's stand-in has the same length.
_DIGEST_PLACEHOLDER = "0" * 64
_DIGEST_KEY = b"frame_sha256"
_KINDS = {"request": REQUEST_CHUNK_KEY, "result": RESULT_CHUNK_KEY}
# The structure string of every chunk frame: a dict with one tensor, "payload".
T = TypeVar("T")
_CHUNK_STRUCTURE = json.dumps({"v": WIRE_FORMAT_VERSION, "tree": ["d", [[PAYLOAD_KEY, ["t", PAYLOAD_KEY]]]]})


def _chunk_key(kind: Any) -> str:
    key = _KINDS.get(kind) if isinstance(kind, str) else None
    if key is None:
        raise WireError(f"unknown byte chunk kind {kind!r}")
    return key


class _ChunkPlan:
    """Everything needed to emit the chunk frames of one frame; building them is deferred."""

    def __init__(
        self,
        view: memoryview,
        *,
        key: str,
        digest: str,
        group_id: str | None,
        operation: str | None,
        ranges: list[tuple[int, int]],
    ) -> None:
        self.view = view
        self.key = key
        self.digest = digest
        self.group_id = group_id
        self.operation = operation
        self.ranges = ranges

    def _metadata(self, index: int) -> dict[str, str]:
        desc: dict[str, Any] = {
            "chunk_idx": index,
            "total_chunks": len(self.ranges),
            "frame_sha256": self.digest,
            "frame_size_bytes": len(self.view),
        }
        if self.group_id is not None:
            desc["chunk_group_id"] = self.group_id
        if self.operation is not None:
            desc["operation"] = self.operation
        return {STRUCT_KEY: _CHUNK_STRUCTURE, OP_KEY: json.dumps({self.key: desc})}

    def _payload(self, index: int) -> TensorBytes:
        start, stop = self.ranges[index]
        return TensorBytes(PAYLOAD_KEY, "U8", (stop - start,), self.view[start:stop], stop - start)

    def chunk_size(self, index: int) -> int:
        payload = self._payload(index)
        return len(encode_header(self._metadata(index), [payload])) + payload.nbytes

    def largest_chunk(self) -> int:
        # Among equal-sized payloads the header only grows with the index's digit count, so the
        # last full-size chunk and the (possibly shorter) final chunk bound every other one.
        last = len(self.ranges) - 1
        return max(self.chunk_size(i) for i in {max(last - 1, 0), last})

    def build(self, index: int) -> bytes:
        return write_frame(self._metadata(index), [self._payload(index)])

    def __iter__(self) -> Iterator[bytes]:
        for index in range(len(self.ranges)):
            yield self.build(index)


def _split(size: int, payload_size: int) -> list[tuple[int, int]]:
    # An empty frame still gets one (0, 0) chunk.
    return [(start, min(start + payload_size, size)) for start in range(0, size, payload_size)] or [(0, 0)]


def _plan(
    frame: Any,
    *,
    kind: str,
    operation: str | None,
    max_bytes: int,
    chunk_group_id: str | None,
    force_chunk: bool,
    hash_frame: bool = True,
) -> _ChunkPlan | None:
    """Check the arguments and choose the split; None when the frame goes as it is.

    With `hash_frame` false the plan carries a placeholder digest, for a caller that hashes the frame
    itself (the split does not depend on the digest's value, only on its fixed length).
    """
    view = byte_view(frame, "encode_byte_chunks")
    key = _chunk_key(kind)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise WireError(f"max_bytes must be an integer, got {type(max_bytes).__qualname__}")
    if operation is not None and not isinstance(operation, str):
        raise WireError("byte chunk operation must be a string")
    if not force_chunk and (max_bytes <= 0 or len(view) <= max_bytes):
        return None
    group_id = None
    if kind == "request":
        group_id = str(chunk_group_id) if chunk_group_id else str(uuid.uuid4())
    # The one full pass over the frame (the reference hashes it once per chunk).
    digest = sha256(view).hexdigest() if hash_frame else _DIGEST_PLACEHOLDER

    def plan(ranges: list[tuple[int, int]]) -> _ChunkPlan:
        return _ChunkPlan(view, key=key, digest=digest, group_id=group_id, operation=operation, ranges=ranges)

    if max_bytes <= 0:
        return plan([(0, len(view))])
    payload_size = max(1, max_bytes - CHUNK_OVERHEAD_BYTES)
    while True:
        candidate = plan(_split(len(view), payload_size))
        if candidate.largest_chunk() <= max_bytes:
            return candidate
        if payload_size <= 1:
            raise WireError("max_bytes is too small to hold one DSSST1 byte chunk frame")
        payload_size //= 2  # still >= 1


def iter_byte_chunks(
    frame: bytes | bytearray | memoryview,
    *,
    kind: str,
    max_bytes: int = 0,
    operation: str | None = None,
    chunk_group_id: str | None = None,
    force_chunk: bool = False,
) -> Iterator[bytes]:
    """Like `encode_byte_chunks`, but builds each chunk frame only when it is asked for.

    Arguments are checked, the frame hashed and the split planned before this returns, so errors
    surface at the call; an uploader then holds one chunk frame at a time instead of all of them.
    """
    plan = _plan(
        frame,
        kind=kind,
        operation=operation,
        max_bytes=max_bytes,
        chunk_group_id=chunk_group_id,
        force_chunk=force_chunk,
    )
    return iter([bytes(frame)]) if plan is None else iter(plan)


def encode_byte_chunks(
    frame: bytes | bytearray | memoryview,
    *,
    kind: str,
    max_bytes: int = 0,
    operation: str | None = None,
    chunk_group_id: str | None = None,
    force_chunk: bool = False,
) -> list[bytes]:
    """Cut a finished frame into chunk frames, none longer than `max_bytes`.

    Returns `[frame]` unchanged when it fits (or `max_bytes <= 0`) and `force_chunk` is false; a
    forced split with `max_bytes <= 0` gives one chunk, 0 of 1. Request chunks carry
    `chunk_group_id` (a new UUID4 unless given), the idempotency identity of the operation.
    """
    plan = _plan(
        frame,
        kind=kind,
        operation=operation,
        max_bytes=max_bytes,
        chunk_group_id=chunk_group_id,
        force_chunk=force_chunk,
        hash_frame=False,
    )
    if plan is None:
        return [bytes(frame)]
    if len(plan.view) < PARALLEL_HASH_BYTES or not _overlap_possible():
        plan.digest = sha256(plan.view).hexdigest()
        return list(plan)
    return _build_beside_hash(plan)


def _overlap_possible() -> bool:
    # One worker hashes while the caller's thread copies: two threads in all.
    return (os.cpu_count() or 1) >= 2 and _bytes_api() is not None


def _build_beside_hash(plan: _ChunkPlan) -> list[bytes]:
    """Write every chunk frame with a placeholder digest while a worker hashes the frame, then patch."""
    chunks: list[bytes] = []
    patches: list[tuple[np.ndarray, int]] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ct-wire-sha256") as pool:
        pending = pool.submit(lambda: sha256(plan.view).hexdigest())
        for index in range(len(plan.ranges)):
            payload = plan._payload(index)
            header = encode_header(plan._metadata(index), [payload])
            # The descriptor's integers come before frame_sha256 and the free-text fields after
            # it, so the first placeholder after the key is the digest's own.
            offset = header.index(_DIGEST_PLACEHOLDER.encode("ascii"), header.index(_DIGEST_KEY))
            chunk, window = _fresh_bytes(len(header) + payload.nbytes)
            window[: len(header)] = np.frombuffer(header, dtype=np.uint8)
            window[len(header) :] = np.frombuffer(payload.data, dtype=np.uint8)
            chunks.append(chunk)
            patches.append((window, offset))
        plan.digest = pending.result()
    digest = np.frombuffer(plan.digest.encode("ascii"), dtype=np.uint8)
    for window, offset in patches:
        window[offset : offset + len(digest)] = digest
    return chunks


@cache
def _bytes_api() -> tuple[Any, Any, Any, Any] | None:
    """CPython's C functions for new uninitialised bytes / bytearray objects and a window onto them."""
    if sys.implementation.name != "cpython":
        return None
    try:
        import ctypes

        api = ctypes.pythonapi
        new = api.PyBytes_FromStringAndSize
        address = api.PyBytes_AsString
        window = api.PyMemoryView_FromMemory
        new_bytearray = api.PyByteArray_FromStringAndSize
    except (ImportError, AttributeError):
        return None
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_ssize_t]
    address.restype, address.argtypes = ctypes.c_void_p, [ctypes.py_object]
    window.restype, window.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int]
    new_bytearray.restype, new_bytearray.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_ssize_t]
    return new, address, window, new_bytearray


_PYBUF_WRITE = 0x200


def _fresh_bytes(size: int) -> tuple[bytes, np.ndarray]:
    """A new `bytes` of `size` (> 1) uninitialised bytes and a writable numpy window onto it.

    The C API lets the creator of a bytes object made from NULL write its contents until the object
    is shared; every caller here fills the object before returning it. This is what lets the copy
    land in the final object (no bytearray, no second copy) with numpy copying outside the GIL,
    so the hash on the worker thread keeps running. Sizes 0 and 1 would return CPython's shared
    singletons, so callers only use this for large buffers. The window does not keep the bytes
    alive: callers hold both and drop the window first.
    """
    api = _bytes_api()
    if api is None or size <= 1:
        raise RuntimeError("_fresh_bytes needs CPython and a size above 1")
    new, address, window = api[:3]
    data = new(None, size)
    return data, np.frombuffer(window(address(data), size, _PYBUF_WRITE), dtype=np.uint8)


def _descriptor(metadata: dict[str, str]) -> dict[str, Any] | None:
    raw = metadata.get(OP_KEY)
    if not raw:
        return None
    try:
        op = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(op, dict):
        return None
    for kind, key in _KINDS.items():
        desc = op.get(key)
        if isinstance(desc, dict):
            return {**desc, "kind": kind}
    return None


def read_byte_chunk_metadata(frame: bytes | bytearray | memoryview) -> dict[str, Any] | None:
    """The chunk descriptor of `frame` plus `kind` ("request" / "result"), or None if not a chunk."""
    view = byte_view(frame, "read_metadata")
    try:
        return _descriptor(read_header_metadata(view))
    except WireError:
        return None


def _int_field(desc: dict[str, Any], name: str) -> int:
    value = desc.get(name)
    if type(value) is not int:
        raise WireError(f"byte chunk descriptor field {name!r} must be an integer, got {value!r}")
    return value


def _payload_view(frame: ParsedFrame) -> memoryview:
    """The payload bytes of a parsed chunk frame, checked to be a 1-D uint8 tensor."""

    def resolve(key: str, options: dict[str, Any] | None) -> Any:
        entry = frame.tensors.get(key)
        if entry is None:
            raise WireError(f"DSSST1 structure names tensor {key!r}, which the frame does not hold")
        if options and options.get("scalar"):
            return entry, ()
        return entry, entry.shape

    value = decode_tree(load_structure(frame.metadata), resolve)
    payload = value.get(PAYLOAD_KEY) if isinstance(value, dict) else None
    if not isinstance(payload, tuple) or len(payload) != 2:
        raise WireError("byte chunk payload must be a tensor")
    entry, shape = payload
    if entry.code != "U8":
        raise WireError(f"byte chunk payload tensor must be uint8, got {entry.code}")
    if len(shape) != 1:
        raise WireError(f"byte chunk payload tensor must be 1-D, got shape {tuple(shape)}")
    return frame.view[entry.start : entry.stop]


def _verified_parts(
    chunks: Sequence[bytes | bytearray | memoryview], kind: str | None
) -> tuple[list[memoryview], str]:
    """Check a chunk list (every reassembly rule except the final hash) and return payloads in order."""
    descriptors: list[dict[str, Any]] = []
    for chunk in chunks:
        desc = read_byte_chunk_metadata(chunk)
        if desc is None:
            raise WireError("decode_byte_chunks received a frame without byte chunk metadata")
        descriptors.append(desc)
    first = descriptors[0]
    actual_kind = first["kind"]
    if kind not in (None, actual_kind):
        raise WireError(f"expected {kind} chunks, got {actual_kind} chunks")
    total = _int_field(first, "total_chunks")
    size = _int_field(first, "frame_size_bytes")
    received = len(chunks)
    if received != total:
        raise WireError(f"expected {total} byte chunks, got {received}")

    by_index: dict[int, memoryview] = {}
    for chunk, desc in zip(chunks, descriptors, strict=True):
        if desc["kind"] != actual_kind:
            raise WireError("mixed byte chunk kinds")
        if _int_field(desc, "total_chunks") != total:
            raise WireError("byte chunk total_chunks differs across frames")
        for field in ("frame_sha256", "chunk_group_id", "operation"):
            if desc.get(field) != first.get(field):
                raise WireError(f"byte chunk {field} differs across frames")
        if _int_field(desc, "frame_size_bytes") != size:
            raise WireError("byte chunk frame_size_bytes differs across frames")
        index = _int_field(desc, "chunk_idx")
        if not 0 <= index < total:
            raise WireError("byte chunk_idx out of range")
        if index in by_index:
            raise WireError("duplicate byte chunk_idx")
        # Descriptors were read leniently; the payload comes from a fully validated parse.
        by_index[index] = _payload_view(parse_frame(byte_view(chunk, "decode_byte_chunks")))

    missing = sorted(set(range(total)) - by_index.keys())
    if missing:
        raise WireError(f"missing byte chunks: {missing}")
    parts = [by_index[i] for i in range(total)]
    # Check the size before assembling, so a lying descriptor cannot make us allocate.
    if sum(len(part) for part in parts) != size:
        raise WireError("reassembled frame size mismatch")
    digest = first.get("frame_sha256")
    return parts, digest if isinstance(digest, str) else ""


def _hash_parts(parts: list[memoryview]) -> str:
    hasher = sha256()
    for part in parts:
        hasher.update(part)
    return hasher.hexdigest()


def _assemble(parts: list[memoryview], digest: str, copy_into: Callable[[list[memoryview]], T]) -> T:
    """Copy the payloads into one buffer while a worker thread hashes them.

    Hashing the parts in order gives the hash of the joined frame. Both hashlib and the large copy
    release the GIL, so on two cores the hash costs little extra wall time.
    """
    if sum(len(part) for part in parts) < PARALLEL_HASH_BYTES:
        result, actual = copy_into(parts), _hash_parts(parts)
    else:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ct-wire-sha256") as pool:
            pending = pool.submit(_hash_parts, parts)
            result = copy_into(parts)
            actual = pending.result()
    if actual != digest:
        raise WireError("reassembled frame sha256 mismatch")
    return result


def _copy_parts(parts: list[memoryview], buffer: np.ndarray) -> None:
    # numpy copies large blocks with the GIL released (bytes.join over memoryviews keeps it), so
    # the hash on the worker thread runs at the same time.
    offset = 0
    for part in parts:
        buffer[offset : offset + len(part)] = np.frombuffer(part, dtype=np.uint8)
        offset += len(part)


def _join(parts: list[memoryview]) -> bytes:
    size = sum(len(part) for part in parts)
    if size < PARALLEL_HASH_BYTES or _bytes_api() is None:
        return b"".join(parts)
    data, window = _fresh_bytes(size)
    _copy_parts(parts, window)
    return data


def _writable_buffer(parts: list[memoryview]) -> np.ndarray:
    # The result is writable, so the tensors decoded from it are ordinary private memory.
    size = sum(len(part) for part in parts)
    api = _bytes_api()
    if size < PARALLEL_HASH_BYTES or api is None:
        buffer = np.empty(size, dtype=np.uint8)
    else:
        # An uninitialised bytearray rather than np.empty: numpy asks for transparent huge pages
        # on large buffers, and where the process holds none yet (a fresh process; a virtual
        # machine that hands free memory back to its host) faulting them in has measured up to
        # four times slower than ordinary pages. A bytearray made from NULL is ordinary malloc
        # memory, not zeroed, and mutable by design.
        buffer = np.frombuffer(api[3](None, size), dtype=np.uint8)
    _copy_parts(parts, buffer)
    return buffer


def _is_lone_frame(chunks: Sequence[bytes | bytearray | memoryview]) -> bool:
    # One plain frame (no descriptor) is what a sender that did not need to split sends.
    return len(chunks) == 1 and not read_byte_chunk_metadata(chunks[0])


def _check_chunk_list(chunks: Any) -> None:
    if isinstance(chunks, (bytes, bytearray, memoryview, str)) or not isinstance(chunks, Sequence):
        raise WireError("decode_byte_chunks expects a list of frames")
    if not chunks:
        raise WireError("decode_byte_chunks requires at least one frame")


def decode_byte_chunks(chunks: Sequence[bytes | bytearray | memoryview], *, kind: str | None = None) -> bytes:
    """Reassemble chunk frames (in any order) into the original frame, checking everything.

    One frame that carries no chunk descriptor passes through untouched. Kinds, totals, hashes, sizes, group
    ids and operations must agree; indexes must be in range, unique and complete; the joined bytes
    must match the recorded size and SHA-256. Any violation raises WireError.
    """
    _check_chunk_list(chunks)
    if _is_lone_frame(chunks):
        return bytes(chunks[0])
    parts, digest = _verified_parts(chunks, kind)
    return _assemble(parts, digest, _join)


def reassemble_writable(
    chunks: Sequence[bytes | bytearray | memoryview], *, kind: str | None = None
) -> bytes | bytearray | memoryview | np.ndarray:
    """Like `decode_byte_chunks`, but chunked input lands in a fresh writable numpy buffer.

    Used by `decode_result_chunks`: decoding then yields writable tensors without another copy.
    """
    _check_chunk_list(chunks)
    if _is_lone_frame(chunks):
        return chunks[0]
    parts, digest = _verified_parts(chunks, kind)
    return _assemble(parts, digest, _writable_buffer)
