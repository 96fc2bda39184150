"""The protobuf messages of the Tinker wire that this service reads and writes.

The SDK posts forward/backward requests as protobuf and asks for forward/backward and sample
results as protobuf (`Accept: application/x-protobuf`). The schema below is written here from the
field numbers the public protocol uses; protobuf's own descriptor machinery builds the classes, in
a descriptor pool of our own.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

PROTO_CONTENT_TYPE = "application/x-protobuf"

# dtype enum values on the wire
DTYPE_FLOAT32 = 1
DTYPE_INT64 = 2
DTYPE_INT32 = 3
DTYPE_BFLOAT16 = 4
STOP_REASON_STOP = 0
STOP_REASON_LENGTH = 1

_NUMPY_OF_DTYPE = {
    DTYPE_FLOAT32: np.float32,
    DTYPE_INT64: np.int64,
    DTYPE_INT32: np.int32,
}

# message -> [(number, name, kind, label, type name)]; kind is a FieldDescriptorProto type name.
_REPEATED = "repeated"
_SCHEMA: dict[str, list[tuple[int, str, str, str, str]]] = {
    "Tensor": [
        (1, "dense", "bytes", "", ""),
        (2, "sparse_csr", "message", "", "SparseCsr"),
        (3, "dtype", "enum", "", "DType"),
        (4, "shape", "int64", _REPEATED, ""),
    ],
    "SparseCsr": [
        (1, "values", "bytes", "", ""),
        (2, "crow_indices", "bytes", "", ""),
        (3, "col_indices", "bytes", "", ""),
    ],
    "BatchedTensor": [
        (1, "data", "bytes", "", ""),
        (2, "offsets", "bytes", "", ""),
        (3, "dtype", "enum", "", "DType"),
        (4, "trailing_shape", "int64", _REPEATED, ""),
    ],
    "ArrayRecord": [
        (1, "type_tag", "string", "", ""),
        (2, "fields", "map", "", "BatchedTensor"),
        (3, "num_datums", "int64", "", ""),
    ],
    "ForwardBackwardOutput": [
        (1, "loss_fn_output_type", "string", "", ""),
        (2, "loss_fn_outputs", "message", _REPEATED, "ArrayRecord"),
        (3, "metrics", "map", "", "double"),
    ],
    "EncodedTextChunk": [(1, "tokens", "bytes", "", "")],
    "Chunk": [
        (1, "encoded_text", "message", "", "EncodedTextChunk"),
        (2, "image", "bytes", "", ""),
        (3, "dmel", "bytes", "", ""),
    ],
    "Datum": [
        (1, "model_input", "message", _REPEATED, "Chunk"),
        (2, "loss_fn_inputs", "map", "", "Tensor"),
    ],
    "LossConfigValue": [(1, "number", "double", "", ""), (2, "text", "string", "", "")],
    "ForwardBackwardRequest": [
        (1, "model_id", "string", "", ""),
        (2, "seq_id", "int32", "", ""),
        (3, "data", "message", _REPEATED, "Datum"),
        (4, "loss_fn", "string", "", ""),
        (5, "loss_fn_config", "map", "", "double"),
        (6, "forward_only", "bool", "", ""),
        (7, "loss_fn_config_v2", "map", "", "LossConfigValue"),
    ],
    "TopkLogprobs": [
        (1, "token_ids", "bytes", "", ""),
        (2, "logprobs", "bytes", "", ""),
        (3, "k", "uint32", "", ""),
        (4, "length", "uint32", "", ""),
    ],
    "SampledSequence": [
        (1, "stop_reason", "enum", "", "StopReason"),
        (2, "tokens", "bytes", "", ""),
        (3, "logprobs", "bytes", "", ""),
        (4, "topk_sampled_logprobs", "message", "", "TopkLogprobs"),
    ],
    "SampleResponse": [
        (1, "sequences", "message", _REPEATED, "SampledSequence"),
        (2, "prompt_logprobs", "bytes", "", ""),
        (3, "topk_prompt_logprobs", "message", "", "TopkLogprobs"),
        (4, "prompt_cache_hit_tokens", "int32", "", ""),
    ],
}
_ENUMS = {
    "DType": ["DTYPE_UNSPECIFIED", "DTYPE_FLOAT32", "DTYPE_INT64", "DTYPE_INT32", "DTYPE_BFLOAT16"],
    "StopReason": ["STOP_REASON_STOP", "STOP_REASON_LENGTH"],
}
_PACKAGE = "ct_tinker_wire"


@cache
def _classes() -> dict[str, Any]:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto(name="ct_tinker_wire.proto", package=_PACKAGE, syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto
    scalar = {
        "bytes": F.TYPE_BYTES,
        "string": F.TYPE_STRING,
        "int64": F.TYPE_INT64,
        "int32": F.TYPE_INT32,
        "uint32": F.TYPE_UINT32,
        "bool": F.TYPE_BOOL,
        "double": F.TYPE_DOUBLE,
    }
    for name, values in _ENUMS.items():
        enum = fdp.enum_type.add(name=name)
        for number, value in enumerate(values):
            enum.value.add(name=value, number=number)
    for name, fields in _SCHEMA.items():
        msg = fdp.message_type.add(name=name)
        for number, field_name, kind, label, type_name in fields:
            field = msg.field.add(name=field_name, number=number, json_name=field_name)
            field.label = F.LABEL_REPEATED if label == _REPEATED else F.LABEL_OPTIONAL
            if kind == "map":
                entry_name = "".join(p.capitalize() for p in field_name.split("_")) + "Entry"
                entry = msg.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
                value = entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL)
                if type_name in scalar:
                    value.type = scalar[type_name]
                else:
                    value.type = F.TYPE_MESSAGE
                    value.type_name = f".{_PACKAGE}.{type_name}"
                field.label = F.LABEL_REPEATED
                field.type = F.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{name}.{entry_name}"
            elif kind == "message":
                field.type = F.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{type_name}"
            elif kind == "enum":
                field.type = F.TYPE_ENUM
                field.type_name = f".{_PACKAGE}.{type_name}"
            else:
                field.type = scalar[kind]
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        for name in _SCHEMA
    }


def tensor_from_proto(msg: Any) -> np.ndarray:
    """A dense numpy array from a wire Tensor (a sparse CSR one is densified)."""
    dtype = _NUMPY_OF_DTYPE.get(msg.dtype)
    if dtype is None:
        raise ValueError(f"unsupported tensor dtype {msg.dtype} on the wire")
    shape = [int(s) for s in msg.shape]
    if msg.HasField("sparse_csr"):
        csr = msg.sparse_csr
        values = np.frombuffer(csr.values, dtype=dtype)
        crow = np.frombuffer(csr.crow_indices, dtype=np.int64)
        cols = np.frombuffer(csr.col_indices, dtype=np.int64)
        dense = np.zeros(shape, dtype=dtype)
        for row in range(len(crow) - 1):
            start, end = int(crow[row]), int(crow[row + 1])
            dense[row, cols[start:end]] = values[start:end]
        return dense
    return np.frombuffer(msg.dense, dtype=dtype).reshape(shape).copy()


def decode_forward_backward_request(body: bytes) -> dict[str, Any]:
    """The SDK's protobuf forward/backward request as a plain dict.

    `data` is a list of datums, each `{"tokens": [int], "loss_fn_inputs": {name: ndarray}}`; a
    datum whose model input holds anything but token chunks (images) raises ValueError.
    """
    msg = _classes()["ForwardBackwardRequest"]()
    msg.ParseFromString(body)
    data = []
    for index, datum in enumerate(msg.data):
        tokens: list[int] = []
        for chunk in datum.model_input:
            if not chunk.HasField("encoded_text"):
                raise ValueError(f"datum {index}: only token chunks are supported (no images or audio)")
            tokens.extend(int(t) for t in np.frombuffer(chunk.encoded_text.tokens, dtype=np.int32))
        inputs = {key: tensor_from_proto(value) for key, value in datum.loss_fn_inputs.items()}
        data.append({"tokens": tokens, "loss_fn_inputs": inputs})
    config = {key: float(value) for key, value in msg.loss_fn_config.items()}
    for key, value in msg.loss_fn_config_v2.items():
        config[key] = value.text or value.number
    return {
        "model_id": msg.model_id,
        "seq_id": int(msg.seq_id),
        "data": data,
        "loss_fn": msg.loss_fn,
        "loss_fn_config": config,
        "forward_only": bool(msg.forward_only),
    }


def encode_forward_backward_output(outputs: list[dict[str, np.ndarray]], metrics: dict[str, float]) -> bytes:
    """A ForwardBackwardOutput: one record holding every datum's float32 fields, and the metrics."""
    classes = _classes()
    msg = classes["ForwardBackwardOutput"]()
    msg.loss_fn_output_type = "ArrayRecord"
    for key, value in metrics.items():
        msg.metrics[key] = float(value)
    record = msg.loss_fn_outputs.add()
    record.num_datums = len(outputs)
    names = list(outputs[0]) if outputs else []
    for name in names:
        arrays = [np.ascontiguousarray(out[name], dtype=np.float32).ravel() for out in outputs]
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([a.nbytes for a in arrays])
        batched = record.fields[name]
        batched.dtype = DTYPE_FLOAT32
        batched.data = b"".join(a.tobytes() for a in arrays)
        batched.offsets = offsets.tobytes()
    return bytes(msg.SerializeToString())


def encode_sample_response(
    sequences: list[dict[str, Any]], prompt_logprobs: list[float | None] | None
) -> bytes:
    """A SampleResponse; each sequence `{"tokens", "logprobs" (or None), "stop_reason"}`."""
    msg = _classes()["SampleResponse"]()
    for seq in sequences:
        out = msg.sequences.add()
        out.stop_reason = STOP_REASON_LENGTH if seq["stop_reason"] == "length" else STOP_REASON_STOP
        out.tokens = np.asarray(seq["tokens"], dtype=np.int32).tobytes()
        if seq.get("logprobs") is not None:
            out.logprobs = np.asarray(seq["logprobs"], dtype=np.float32).tobytes()
    if prompt_logprobs is not None:
        values = [np.nan if v is None else v for v in prompt_logprobs]
        msg.prompt_logprobs = np.asarray(values, dtype=np.float32).tobytes()
    return bytes(msg.SerializeToString())
