"""The DSSST1 structure tree: turning a nested value into a JSON skeleton plus tensors, and back.

The skeleton (stored as the `dss` metadata string) is a tree of tagged JSON arrays:
`["t", key]` tensor (`{"scalar": true}` for 0-d), `["j", value]` JSON, `["d", [[k, node], ...]]`
dict, `["l", [...]]` list, `["u", [...]]` tuple. This module owns both directions and every rule
about what a value may contain; the container format lives in `ct_core.wire.format`, and building numpy or
torch objects from decoded byte ranges lives in `ct_core.wire`.

Differences from the reference writer, each one a fix:

* tensor keys never collide: when two dotted paths coincide, or a path is a reserved name, every
  tensor of the frame gets an opaque key `t0, t1, ...` (readers only follow keys named in the tree);
* tuples keep their tag even deep inside tensor-free data, and tensor-free dicts with non-string
  keys are refused instead of silently stringified;
* a non-finite float is carried as a 0-d float64 tensor marked `"pyfloat"`, so `dss` stays strict
  JSON; we read it back as a float, the reference reads it as a 0-d tensor holding the same value;
* overlapping or shared tensor memory needs no special case, because every tensor is copied into its
  own slot of the output frame.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ct_core.errors import WireError
from ct_core.wire.format import DTYPES_BY_NUMPY_NAME, DTYPES_BY_TORCH_NAME, TensorBytes

WIRE_FORMAT_VERSION = "DSSST1"
STRUCT_KEY = "dss"
OP_KEY = "op"
PLACEHOLDER_KEY = "__dss_empty__"
ROOT_KEY = "__root__"
# Keys a user path must not take: the placeholder (the reference reader pops it) and the
# safetensors metadata slot. Either one switches the frame to opaque keys.
_RESERVED_KEYS = frozenset({PLACEHOLDER_KEY, "__metadata__"})
# Node option marking a non-finite Python float carried as a tensor (see module docstring).
PYFLOAT_OPTION = "pyfloat"
# Leaf types that are JSON as they are (a float also needs to be finite).
_JSON_SCALARS = (str, int, bool, type(None))


@dataclass(slots=True)
class _Pending:
    """A tensor met during the walk: the tree node to patch with its final key, and its bytes."""

    node: list[Any]
    path: str
    code: str
    shape: tuple[int, ...]
    data: Any
    nbytes: int


def _torch_tensor_type() -> Any:
    # A torch tensor can only exist if torch is already imported, so looking in sys.modules
    # detects tensors without importing torch. While another thread is still importing it, the
    # module is there without Tensor yet, and no tensor exists either.
    torch = sys.modules.get("torch")
    return None if torch is None else getattr(torch, "Tensor", None)


def _torch_bytes(tensor: Any) -> tuple[str, tuple[int, ...], Any, int]:
    torch = sys.modules["torch"]
    dtype = DTYPES_BY_TORCH_NAME.get(str(tensor.dtype).removeprefix("torch."))
    if dtype is None:
        raise WireError(f"DSSST1 cannot encode tensors of dtype {tensor.dtype}")
    if tensor.layout != torch.strided:
        raise WireError(f"DSSST1 encodes dense tensors only, got layout {tensor.layout}")
    try:
        flat = tensor.detach().cpu().resolve_conj().resolve_neg().contiguous()
        shape = tuple(flat.shape)
        flat = flat.reshape(-1).view(torch.uint8)
        raw = memoryview(flat.numpy())
    except (RuntimeError, NotImplementedError, TypeError) as exc:
        raise WireError(f"DSSST1 cannot read tensor bytes: {exc}") from exc
    return dtype.code, shape, raw, raw.nbytes


def _numpy_bytes(array: np.ndarray) -> tuple[str, tuple[int, ...], Any, int]:
    dtype = DTYPES_BY_NUMPY_NAME.get(array.dtype.name)
    if dtype is None or array.dtype.fields is not None:
        raise WireError(f"DSSST1 cannot encode numpy arrays of dtype {array.dtype}")
    shape = tuple(array.shape)
    little = array.dtype.newbyteorder("<")
    if array.dtype.itemsize > 1 and array.dtype != little:
        # safetensors is little-endian; byte-swap a big-endian array once.
        array = array.astype(little)
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return dtype.code, shape, flat.data, flat.nbytes


class TreeEncoder:
    """One walk over a value: builds the tree and collects the tensors it references."""

    def __init__(self) -> None:
        self.pending: list[_Pending] = []
        self._active: set[int] = set()
        self._tensor_type = _torch_tensor_type()

    def encode(self, value: Any) -> list[Any]:
        try:
            node, _ = self._node(value, "")
        except RecursionError as exc:
            raise WireError("DSSST1 value is nested too deeply to encode") from exc
        return node

    def tensors(self) -> list[TensorBytes]:
        """Assign final keys (dotted paths, or opaque ones on any clash) and return the tensors."""
        keys = [p.path or ROOT_KEY for p in self.pending]
        if _needs_opaque_keys(keys):
            keys = [f"t{i}" for i in range(len(keys))]
        result = []
        for pending, key in zip(self.pending, keys, strict=True):
            pending.node[1] = key
            result.append(TensorBytes(key, pending.code, pending.shape, pending.data, pending.nbytes))
        return result

    def _add_tensor(self, path: str, code: str, shape: tuple[int, ...], data: Any, nbytes: int) -> list[Any]:
        node: list[Any] = ["t", path]
        if not shape:
            # 0-d tensors travel as shape [1] and are restored on load.
            shape = (1,)
            node.append({"scalar": True})
        self.pending.append(_Pending(node, path, code, shape, data, nbytes))
        return node

    def _node(self, value: Any, path: str) -> tuple[list[Any], bool]:
        """Return the node for `value` and whether it is plain JSON (no tensor, tuple or NaN)."""
        if isinstance(value, _JSON_SCALARS):
            return ["j", value], True
        if isinstance(value, float):
            if math.isfinite(value):
                return ["j", value], True
            node = self._add_tensor(path, "F64", (), struct.pack("<d", value), 8)
            node[2][PYFLOAT_OPTION] = True
            return node, False
        if isinstance(value, np.ndarray):
            return self._add_tensor(path, *_numpy_bytes(value)), False
        if self._tensor_type is not None and isinstance(value, self._tensor_type):
            return self._add_tensor(path, *_torch_bytes(value)), False
        if isinstance(value, (dict, list, tuple)):
            marker = id(value)
            if marker in self._active:
                raise WireError("DSSST1 cannot encode a value that contains itself")
            self._active.add(marker)
            try:
                return self._container(value, path)
            finally:
                self._active.discard(marker)
        raise WireError(f"DSSST1 cannot encode a value of type {_type_name(value)}")

    def _container(
        self, value: dict[Any, Any] | list[Any] | tuple[Any, ...], path: str
    ) -> tuple[list[Any], bool]:
        prefix = f"{path}." if path else ""
        if isinstance(value, dict):
            items = []
            plain = True
            for key, child in value.items():
                if not isinstance(key, str):
                    raise WireError(f"DSSST1 dict keys must be strings, got {type(key)!r}")
                child_node, child_plain = self._node(child, prefix + key)
                plain = plain and child_plain
                items.append([key, child_node])
            return (["j", value], True) if plain else (["d", items], False)
        if isinstance(value, list) and all(
            isinstance(v, _JSON_SCALARS) or (isinstance(v, float) and math.isfinite(v)) for v in value
        ):
            # Fast path: a flat list of JSON scalars (token ids, floats) needs no per-element nodes.
            return ["j", value], True
        nodes = []
        plain = True
        for index, child in enumerate(value):
            child_node, child_plain = self._node(child, f"{prefix}{index}")
            plain = plain and child_plain
            nodes.append(child_node)
        if isinstance(value, tuple):
            return ["u", nodes], False
        return (["j", value], True) if plain else (["l", nodes], False)


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _needs_opaque_keys(keys: list[str]) -> bool:
    if len(set(keys)) != len(keys) or not _RESERVED_KEYS.isdisjoint(keys):
        return True
    try:
        for key in keys:
            key.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate cannot go into the UTF-8 header
        return True
    return False


def structure_json(tree: list[Any]) -> str:
    """The `dss` string: Python's default separators, ASCII only, strict JSON."""
    try:
        return json.dumps({"v": WIRE_FORMAT_VERSION, "tree": tree}, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise WireError(f"DSSST1 cannot encode value as JSON: {exc}") from exc


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------

# Builds the object for tensor `key`; `options` is the node's third element (or None).
TensorResolver = Callable[[str, "dict[str, Any] | None"], Any]


def load_structure(metadata: dict[str, str]) -> Any:
    """Parse and check the `dss` metadata string; return its tree."""
    if STRUCT_KEY not in metadata:
        raise WireError("DSSST1 structure missing from safetensors header")
    raw = metadata[STRUCT_KEY]
    try:
        info = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"DSSST1 structure is not valid JSON: {exc}") from exc
    if not isinstance(info, dict):
        raise WireError("DSSST1 structure must be a JSON object")
    version = info.get("v")
    if version != WIRE_FORMAT_VERSION:
        raise WireError(f"unsupported DSSST1 wire version {version!r}")
    if "tree" not in info:
        raise WireError("DSSST1 structure has no tree")
    return info["tree"]


def decode_tree(tree: Any, resolve: TensorResolver) -> Any:
    """Rebuild the value described by `tree`; any malformed node raises WireError."""
    try:
        return _decode(tree, resolve)
    except RecursionError as exc:
        raise WireError("DSSST1 structure is nested too deeply") from exc


def _malformed(tag: str) -> WireError:
    return WireError(f"malformed DSSST1 {tag!r} node")


def _decode(node: Any, resolve: TensorResolver) -> Any:
    if not isinstance(node, list) or len(node) < 2:
        raise WireError("malformed DSSST1 node: expected [tag, value]")
    tag, body = node[0], node[1]
    if tag == "j":
        return body
    if tag == "t":
        options = node[2] if len(node) > 2 else None
        if not isinstance(body, str) or (options is not None and not isinstance(options, dict)):
            raise _malformed(tag)
        return resolve(body, options)
    if not isinstance(body, list):
        raise _malformed(tag) if tag in ("d", "l", "u") else WireError(f"unknown DSSST1 node tag {tag!r}")
    if tag == "d":
        result = {}
        for item in body:
            if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
                raise _malformed(tag)
            result[item[0]] = _decode(item[1], resolve)
        return result
    if tag == "l":
        return [_decode(child, resolve) for child in body]
    if tag == "u":
        return tuple(_decode(child, resolve) for child in body)
    raise WireError(f"unknown DSSST1 node tag {tag!r}")
