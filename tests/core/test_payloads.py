"""The readable fwd-bwd JSON helper and serialize_forward_backward_args."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ct_core import wire
from ct_core.data.payloads import (
    ByteTokenizer,
    build_forward_backward_kwargs,
    build_forward_backward_payload,
    json_tensor,
    serialize_forward_backward_args,
)


def _decode(frame: bytes) -> dict[str, Any]:
    return wire.loads(frame, backend="numpy")


def test_serialize_shape_and_response_options() -> None:
    frame = serialize_forward_backward_args(kwargs={"input_ids": np.array([[1, 2]])})
    value = _decode(frame)
    assert value["args"] == ()
    assert value["kwargs"]["input_ids"].tolist() == [[1, 2]]
    assert wire.read_metadata(frame) == {"response_options": {"format": "dssst1", "delivery": "chunked"}}
    assert _decode(serialize_forward_backward_args())["kwargs"] == {}
    with pytest.raises(ValueError, match="args must be a tuple"):
        serialize_forward_backward_args([1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kwargs must be a dict"):
        serialize_forward_backward_args((), [1])  # type: ignore[arg-type]


def test_reference_reads_our_frame() -> None:
    from cortex_training import wire as reference

    frame = build_forward_backward_payload({"input_ids": [[5, 6, 7]]})
    restored = reference.loads(frame)
    assert restored["kwargs"]["labels"].tolist() == [[6, 7, -100]]
    assert reference.read_metadata(frame)["response_options"]["format"] == "dssst1"


def test_direct_kwargs_tensor_objects_and_passthrough() -> None:
    spec = {
        "payload": {
            "args": [1, "x"],
            "kwargs": {
                "input_ids": {"data": [[1, 2, 3]], "dtype": "long"},
                "labels": {"data": [[2, 3, -100]], "dtype": "int64"},
                "loss_mask": [[0.5, 1.0, 0.0]],
                "flag": True,
                "weights": {"data": [1, 2], "dtype": "bf16"},
            },
        }
    }
    value = _decode(build_forward_backward_payload(spec))
    kwargs = value["kwargs"]
    assert value["args"] == (1, "x")
    assert kwargs["input_ids"].dtype == np.int64
    # A float list stays float (it is not truncated to integers).
    assert kwargs["loss_mask"].dtype == np.float32 and kwargs["loss_mask"].tolist() == [[0.5, 1.0, 0.0]]
    assert kwargs["flag"] is True
    assert str(kwargs["weights"].dtype) == "bfloat16"
    assert "position_ids" not in kwargs and "attention_mask" not in kwargs


@pytest.mark.parametrize(
    ("name", "dtype"),
    [("bool", "bool"), ("float", "float32"), ("double", "float64"), ("fp16", "float16"), ("int", "int32")],
)
def test_dtype_aliases(name: str, dtype: str) -> None:
    assert str(json_tensor({"data": [1, 0], "dtype": name}).dtype) == dtype


def test_tensor_errors() -> None:
    with pytest.raises(ValueError, match="unsupported tensor dtype: complex"):
        json_tensor({"data": [1], "dtype": "complex"})
    with pytest.raises(ValueError, match="tensor object must contain a data field"):
        json_tensor({"dtype": "long"})
    with pytest.raises(ValueError, match="rectangular"):
        json_tensor([[1, 2], [3]])


def test_next_token_labels_mask_padding() -> None:
    kwargs = build_forward_backward_kwargs(
        {"input_ids": [[1, 2, 3, 0], [4, 5, 0, 0]], "attention_mask": [[1, 1, 1, 0], [1, 1, 0, 0]]}
    )
    assert kwargs["labels"].tolist() == [[2, 3, -100, -100], [5, -100, -100, -100]]
    # The mask was given as data but not asked for: it only drives label masking.
    assert "attention_mask" not in kwargs


def test_label_strategies_and_settings() -> None:
    ids = [[1, 2, 0]]
    mask = [[1, 1, 0]]
    self_labels = build_forward_backward_kwargs({"input_ids": ids, "attention_mask": mask, "labels": "self"})
    assert self_labels["labels"].tolist() == [[1, 2, -100]]
    unmasked = build_forward_backward_kwargs(
        {"input_ids": ids, "attention_mask": mask, "labels": {"strategy": "input_ids", "mask_padding": False}}
    )
    assert unmasked["labels"].tolist() == [[1, 2, 0]]
    shifted = build_forward_backward_kwargs(
        {"input_ids": ids, "label_strategy": "shifted_input_ids", "ignore_index": -1}
    )
    assert shifted["labels"].tolist() == [[2, 0, -1]]
    inside = build_forward_backward_kwargs({"input_ids": ids, "labels": {"ignore_index": -7}})
    assert inside["labels"].tolist() == [[2, 0, -7]]
    assert "labels" not in build_forward_backward_kwargs({"input_ids": ids, "labels": "none"})
    assert "labels" not in build_forward_backward_kwargs({"input_ids": ids, "labels": None})
    explicit = build_forward_backward_kwargs({"input_ids": ids, "labels": {"data": [[9, 9, 9]]}})
    assert explicit["labels"].tolist() == [[9, 9, 9]]
    with pytest.raises(
        ValueError, match="labels strategy must be next_token, input_ids, none, or tensor data"
    ):
        build_forward_backward_kwargs({"input_ids": ids, "labels": "reverse"})
    with pytest.raises(ValueError, match="mask_padding must be a boolean"):
        build_forward_backward_kwargs({"input_ids": ids, "mask_padding": "yes"})
    with pytest.raises(ValueError, match="labels must have the same shape as input_ids"):
        build_forward_backward_kwargs({"input_ids": ids, "labels": [[1, 2]]})


def test_attention_mask_and_position_ids() -> None:
    ids = [[1, 2, 3], [4, 5, 6]]
    with_mask = build_forward_backward_kwargs({"input_ids": ids, "include_attention_mask": True})
    assert with_mask["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 1]]
    overridden = build_forward_backward_kwargs(
        {"input_ids": ids, "attention_mask": False, "include_attention_mask": True}
    )
    assert "attention_mask" not in overridden
    arange = build_forward_backward_kwargs({"input_ids": ids, "position_ids": "arange"})
    assert arange["position_ids"].tolist() == [[0, 1, 2], [0, 1, 2]]
    implied = build_forward_backward_kwargs({"input_ids": ids, "include_position_ids": True})
    assert implied["position_ids"].tolist() == [[0, 1, 2], [0, 1, 2]]
    explicit = build_forward_backward_kwargs({"input_ids": ids, "position_ids": [[5, 6, 7], [0, 0, 1]]})
    assert explicit["position_ids"].tolist() == [[5, 6, 7], [0, 0, 1]]
    assert "position_ids" not in build_forward_backward_kwargs({"input_ids": ids, "position_ids": False})
    with pytest.raises(ValueError, match="position_ids must be true, false, arange, or tensor data"):
        build_forward_backward_kwargs({"input_ids": ids, "position_ids": "random"})
    with pytest.raises(ValueError, match="input_ids must have shape"):
        build_forward_backward_kwargs({"input_ids": [1, 2, 3]})
    with pytest.raises(ValueError, match="attention_mask must have the same shape"):
        build_forward_backward_kwargs({"input_ids": ids, "attention_mask": [[1, 1]]})


def test_texts_with_the_byte_tokenizer() -> None:
    spec = {
        "payload": {
            "texts": ["hi", "hey"],
            "tokenizer": "byte",
            "max_length": 4,
            "include_attention_mask": True,
        }
    }
    kwargs = _decode(build_forward_backward_payload(spec))["kwargs"]
    assert kwargs["input_ids"].tolist() == [[104, 105, 256, 256], [104, 101, 121, 256]]
    assert kwargs["attention_mask"].tolist() == [[1, 1, 0, 0], [1, 1, 1, 0]]
    assert kwargs["labels"].tolist() == [[105, -100, -100, -100], [101, 121, -100, -100]]


def test_texts_batch_size_cycles_and_model_name_fallback() -> None:
    kwargs = build_forward_backward_kwargs(
        {"texts": "ab", "batch_size": 3, "padding": "longest", "labels": "none"}, spec={"model_name": "byte"}
    )
    assert kwargs["input_ids"].tolist() == [[97, 98]] * 3


def test_texts_with_a_caller_tokenizer() -> None:
    class Upper(ByteTokenizer):
        def encode(self, text: str) -> list[int]:
            return list(text.upper().encode())

    frame = build_forward_backward_payload({"texts": ["a"], "max_length": 2}, tokenizer=Upper())
    assert _decode(frame)["kwargs"]["input_ids"].tolist() == [[65, 256]]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"texts": ["x"]}, "requires tokenizer or input_ids"),
        ({"texts": [], "tokenizer": "byte"}, "texts must be a non-empty string list"),
        ({"texts": [1], "tokenizer": "byte"}, "texts must be a non-empty string list"),
        ({"texts": ["x"], "tokenizer": "byte"}, "max_length must be a positive integer"),
        ({"texts": ["x"], "tokenizer": "byte", "max_length": 2, "batch_size": 0}, "batch_size must be"),
        (
            {"texts": ["x"], "tokenizer": "byte", "max_length": 2, "truncation": "no"},
            "truncation must be a boolean",
        ),
        ({"texts": ["x"], "tokenizer": {"use_fast": True}}, "tokenizer.model_name is required"),
        ({"texts": ["x"], "tokenizer": 3}, "tokenizer must be a string or object"),
        ({"kwargs": [1]}, "kwargs must be an object"),
        ({"args": "x", "input_ids": [[1]]}, "args must be a JSON list"),
    ],
)
def test_payload_errors(payload: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_forward_backward_payload(payload)


def test_wrapper_errors() -> None:
    with pytest.raises(ValueError, match="fwd-bwd JSON must be an object"):
        build_forward_backward_payload([1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fwd-bwd payload must be an object"):
        build_forward_backward_payload({"payload": 3})


def test_the_helper_imports_no_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from ct_core.data.payloads import build_forward_backward_payload as b; "
        "b({'texts': ['x'], 'tokenizer': 'byte', 'max_length': 3}); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
