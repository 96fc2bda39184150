"""Forward/backward batches: the frame sent by forwardBackward, and a readable JSON helper for it.

`serialize_forward_backward_args(args, kwargs)` encodes `{"args": args, "kwargs": kwargs}` as a DSSST1
frame asking for DSSST1 results. `build_forward_backward_payload(spec)` turns the readable
fwd-bwd JSON of `ct fwd-bwd` into such a frame:

- `{"kwargs": {...}}`: every `{"data", "dtype"}` object or plain list becomes a tensor, the rest passes
  through; nothing is generated;
- otherwise `input_ids` (tensor data, optionally with `attention_mask` data), or `texts` and a
  tokenizer, then optional `attention_mask` / `position_ids` and labels by strategy: next_token (also
  shifted_input_ids), input_ids (also self), none, or explicit tensor data; `ignore_index` (-100) and
  `mask_padding` (true) at the top level or inside a labels object.

Tensors are built with numpy, so the helper never imports torch. Plain lists become int64 unless an
element is not a whole number, then float32 (the reference silently truncated floats).
`context` and `processing` are not read: build that extended shape with `wire.dumps` directly.

Tokenizers: `"byte"` is a byte-level tokenizer built in (UTF-8 bytes as ids, works offline); any other
name or `{model_name|name|path, trust_remote_code, use_fast, revision}` is loaded with transformers,
offline: a folder holding a tokenizer, or a Hugging Face name already in the local cache (`HF_HOME` /
`HF_HUB_CACHE`); nothing is ever downloaded. A batch that names no tokenizer takes its job's model's
(`needs_job_tokenizer`, `job_tokenizer`): the folder a real model is served from, as the models route
reports it, the byte tokenizer for a local server's tiny model, else the model's name in the cache.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ct_core import wire

#: Operation metadata of every forward/backward frame: results come back as DSSST1, chunked.
RESPONSE_OPTIONS = {"response_options": {"format": "dssst1", "delivery": "chunked"}}
DEFAULT_IGNORE_INDEX = -100
BYTE_TOKENIZER_NAMES = ("byte", "bytes", "byte-level")

_DTYPE_ALIASES: dict[str, str] = {
    "bool": "bool",
    "boolean": "bool",
    "float": "float32",
    "float32": "float32",
    "float64": "float64",
    "double": "float64",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "int": "int32",
    "int32": "int32",
    "int64": "int64",
    "long": "int64",
}


def serialize_forward_backward_args(
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    context: dict[str, Any] | None = None,
    processing: dict[str, Any] | None = None,
) -> bytes:
    """The DSSST1 frame of `{"args": args, "kwargs": kwargs}`, ready for `forward_backward`.

    `context` and `processing`, when given, travel in the batch as they are: what they may hold
    (loss functions, their per-token inputs) is the training backend's contract, not the REST one.
    """
    named = {} if kwargs is None else kwargs
    if not isinstance(args, tuple):
        raise ValueError("forward-backward args must be a tuple")
    if not isinstance(named, dict):
        raise ValueError("forward-backward kwargs must be a dict")
    batch: dict[str, Any] = {"args": args, "kwargs": named}
    for key, value in (("context", context), ("processing", processing)):
        if value is not None:
            if not isinstance(value, dict):
                raise ValueError(f"forward-backward {key} must be a dict")
            batch[key] = value
    return wire.dumps(batch, metadata=RESPONSE_OPTIONS)


# --- tensors from JSON ----------------------------------------------------------------------------


def _numpy_dtype(name: Any) -> Any:
    canonical = _DTYPE_ALIASES.get(str(name).strip().lower()) if isinstance(name, str) else None
    if canonical is None:
        raise ValueError(f"unsupported tensor dtype: {name}")
    if canonical == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(canonical)


def _all_whole(values: Any) -> bool:
    if isinstance(values, list):
        return all(_all_whole(item) for item in values)
    if isinstance(values, (bool, int)):
        return True
    return isinstance(values, float) and values.is_integer()


def json_tensor(value: Any) -> np.ndarray:
    """`{"data": [...], "dtype": "long"}` or a plain nested list -> a numpy array."""
    if isinstance(value, dict):
        if "data" not in value:
            raise ValueError("tensor object must contain a data field")
        data = value["data"]
        dtype = _numpy_dtype(value.get("dtype", "long"))
    else:
        data = value
        dtype = np.dtype("int64") if _all_whole(value) else np.dtype("float32")
    try:
        return np.ascontiguousarray(np.array(data, dtype=dtype))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"tensor data is not a rectangular array of numbers: {exc}") from None


def _is_tensor_spec(value: Any) -> bool:
    return isinstance(value, list) or (isinstance(value, dict) and "data" in value)


# --- tokenizers ------------------------------------------------------------------------------------


#: The byte vocabulary ct_local's tiny model uses: ids 0-255 are bytes, then pad, bos and eos.
BYTE_PAD_ID = 256


class ByteTokenizer:
    """A byte-level tokenizer: each UTF-8 byte is one id; padding uses `pad_token_id` (256)."""

    def __init__(self, pad_token_id: int = BYTE_PAD_ID) -> None:
        self.pad_token_id = pad_token_id

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def __call__(
        self,
        texts: Sequence[str],
        *,
        padding: Any,
        max_length: int | None,
        truncation: bool,
        add_special_tokens: bool = True,
    ) -> dict[str, np.ndarray]:
        del add_special_tokens  # a byte tokenizer has none
        rows = [self.encode(text) for text in texts]
        if truncation and max_length is not None:
            rows = [row[:max_length] for row in rows]
        if padding == "max_length" and max_length is not None:
            width = max(max_length, max((len(r) for r in rows), default=0))
        elif padding in (True, "longest"):
            width = max((len(r) for r in rows), default=0)
        else:
            lengths = {len(r) for r in rows}
            if len(lengths) > 1:
                raise ValueError("texts of different lengths need padding (max_length or longest)")
            width = lengths.pop() if lengths else 0
        ids = np.full((len(rows), width), self.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        return {"input_ids": ids, "attention_mask": mask}


def load_tokenizer(spec: Any, fallback_model: Any = None) -> Any:
    """A tokenizer from the fwd-bwd JSON's `tokenizer` (or the top-level model_name)."""
    if spec is None:
        spec = fallback_model
    if spec is None:
        raise ValueError("fwd-bwd payload requires tokenizer or input_ids")
    options: dict[str, Any] = {}
    if isinstance(spec, dict):
        name = spec.get("model_name") or spec.get("name") or spec.get("path")
        if not name:
            raise ValueError("tokenizer.model_name is required")
        for key in ("trust_remote_code", "use_fast", "revision"):
            if key in spec:
                options[key] = spec[key]
    elif isinstance(spec, str):
        name = spec
    else:
        raise ValueError("fwd-bwd payload tokenizer must be a string or object")
    if str(name).strip().lower() in BYTE_TOKENIZER_NAMES:
        return ByteTokenizer()
    tokenizer = _offline_tokenizer(str(name), options)
    if getattr(tokenizer, "pad_token", None) is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _offline_tokenizer(name: str, options: dict[str, Any]) -> Any:
    """The transformers tokenizer of a folder or of a cached Hugging Face name, never downloading."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(name, local_files_only=True, **options)
    except (OSError, ValueError) as exc:
        folder = Path(name).expanduser()
        if folder.is_dir():
            message = f"tokenizer folder {name} holds no tokenizer transformers can load: {exc}"
            raise ValueError(message) from exc
        raise ValueError(
            f"tokenizer {name!r} is neither a folder nor in the local Hugging Face cache "
            "(HF_HOME / HF_HUB_CACHE); tokenizers are read offline, never downloaded: name a folder, "
            "or download the model there first"
        ) from None


#: What the models route says of a local server's model: its weights kind, and a real model's folder.
TINY_WEIGHTS = "tiny"


def model_tokenizer(model_name: str, models: Sequence[Mapping[str, Any]]) -> str | dict[str, Any]:
    """The tokenizer of ``model_name`` as the models route (``client.list_models()``) describes it.

    A local server's tiny model reads bytes (``"byte"``); a real model served from a folder uses the
    tokenizer saved there; any other name is looked up in the local Hugging Face cache.
    """
    for entry in models:
        if entry.get("name") != model_name:
            continue
        if entry.get("weights") == TINY_WEIGHTS:
            return BYTE_TOKENIZER_NAMES[0]
        if isinstance(entry.get("path"), str) and entry["path"]:
            return {"path": entry["path"]}
    return model_name


def job_model_name(job: Mapping[str, Any]) -> str:
    """The model of a job's training sub-job (else of its first sub-job naming one)."""
    sub_jobs = [s for s in job.get("sub_jobs") or [] if isinstance(s, Mapping) and s.get("model_name")]
    training = [s for s in sub_jobs if s.get("job_type") == "training"]
    chosen = (training or sub_jobs)[:1]
    if not chosen:
        raise ValueError(f"job {job.get('job_id')} names no model, so its tokenizer is unknown: name one")
    return str(chosen[0]["model_name"])


def job_tokenizer(client: Any, job_id: str) -> Any:
    """The tokenizer of job ``job_id``'s model (see :func:`model_tokenizer`), loaded offline.

    ``client`` is a ``CortexTrainingClient`` (``get_job`` and ``list_models`` are read).
    """
    name = job_model_name(client.get_job(job_id))
    return load_tokenizer(model_tokenizer(name, client.list_models()))


def encode_text(tokenizer: Any, text: str) -> list[int]:
    """``text``'s ids under ``tokenizer`` (from :func:`load_tokenizer`), no special tokens added:
    what a sampler reads a text prompt as."""
    if isinstance(tokenizer, ByteTokenizer):
        return tokenizer.encode(text)
    return [int(token) for token in tokenizer.encode(text, add_special_tokens=False)]


def encode_prompts(spec: Any, prompts: Sequence[Any]) -> list[Any]:
    """``prompts`` with every text prompt encoded by the tokenizer ``spec`` names (see
    :func:`load_tokenizer`); token-id prompts pass through."""
    tokenizer = load_tokenizer(spec)
    return [encode_text(tokenizer, prompt) if isinstance(prompt, str) else prompt for prompt in prompts]


def needs_job_tokenizer(spec: Any) -> bool:
    """Whether a readable fwd-bwd JSON holds texts but names no tokenizer (nor a model for one)."""
    content = spec.get("payload", spec) if isinstance(spec, dict) else None
    if not isinstance(content, dict) or "kwargs" in content or "input_ids" in content:
        return False
    named = content.get("tokenizer", content.get("model_name", spec.get("model_name")))
    return "texts" in content and named is None


def _require_bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{what} must be a boolean")
    return value


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{what} must be a positive integer")
    return value


def _tokenize(payload: dict[str, Any], spec: dict[str, Any], tokenizer: Any) -> tuple[np.ndarray, Any]:
    if tokenizer is None:
        fallback = payload.get("model_name", spec.get("model_name"))
        tokenizer = load_tokenizer(payload.get("tokenizer"), fallback)
    texts = payload.get("texts")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError("fwd-bwd payload texts must be a non-empty string list")
    if "batch_size" in payload:
        size = _positive_int(payload["batch_size"], "fwd-bwd payload batch_size")
        texts = list(itertools.islice(itertools.cycle(texts), size))
    padding = payload.get("padding", "max_length")
    max_length = payload.get("max_length")
    if padding == "max_length":
        max_length = _positive_int(max_length, "fwd-bwd payload max_length")
    truncation = _require_bool(payload.get("truncation", True), "fwd-bwd payload truncation")
    special = _require_bool(payload.get("add_special_tokens", True), "fwd-bwd payload add_special_tokens")
    if tokenizer is None:
        tokenizer = load_tokenizer(
            payload.get("tokenizer"), payload.get("model_name", spec.get("model_name"))
        )
    kwargs: dict[str, Any] = {"padding": padding, "max_length": max_length, "truncation": truncation}
    kwargs["add_special_tokens"] = special
    if not isinstance(tokenizer, ByteTokenizer):
        kwargs["return_tensors"] = "np"
    encoded = tokenizer(texts, **kwargs)
    if "input_ids" not in encoded:
        raise ValueError("tokenizer output did not include input_ids")
    mask = encoded.get("attention_mask")
    return np.asarray(encoded["input_ids"], dtype=np.int64), None if mask is None else np.asarray(mask)


# --- the readable payload ----------------------------------------------------------------------------


def _rank2(array: np.ndarray, name: str, like: np.ndarray | None = None) -> None:
    if array.ndim != 2:
        raise ValueError(f"{name} must have shape [batch, seq_len]")
    if like is not None and array.shape != like.shape:
        raise ValueError(f"{name} must have the same shape as input_ids")


def _label_settings(payload: dict[str, Any]) -> tuple[Any, int, bool]:
    labels = payload.get("labels", payload.get("label_strategy", "next_token"))
    ignore_index = payload.get("ignore_index", DEFAULT_IGNORE_INDEX)
    mask_padding = payload.get("mask_padding", True)
    if isinstance(labels, dict) and "data" not in labels:
        ignore_index = labels.get("ignore_index", ignore_index)
        mask_padding = labels.get("mask_padding", mask_padding)
        labels = labels.get("strategy", "next_token")
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
        raise ValueError("fwd-bwd payload ignore_index must be an integer")
    return labels, ignore_index, _require_bool(mask_padding, "fwd-bwd payload mask_padding")


def _labels(input_ids: np.ndarray, mask: np.ndarray | None, payload: dict[str, Any]) -> np.ndarray | None:
    strategy, ignore_index, mask_padding = _label_settings(payload)
    if strategy is None or strategy == "none":
        return None
    if _is_tensor_spec(strategy):
        return json_tensor(strategy)
    if strategy in ("next_token", "shifted_input_ids"):
        # Position i predicts token i + 1; the last position has nothing to predict.
        labels = np.empty_like(input_ids)
        labels[:, :-1] = input_ids[:, 1:]
        labels[:, -1:] = ignore_index
        if mask_padding and mask is not None:
            target_is_padding = np.zeros(input_ids.shape, dtype=bool)
            target_is_padding[:, :-1] = mask[:, 1:] == 0
            labels[target_is_padding] = ignore_index
        return labels
    if strategy in ("input_ids", "self"):
        labels = input_ids.copy()
        if mask_padding and mask is not None:
            labels[mask == 0] = ignore_index
        return labels
    raise ValueError("fwd-bwd labels strategy must be next_token, input_ids, none, or tensor data")


def _position_ids(input_ids: np.ndarray, spec: Any) -> np.ndarray | None:
    if spec is None or spec is False:
        return None
    if spec is True or spec == "arange":
        rows, width = input_ids.shape
        return np.ascontiguousarray(np.broadcast_to(np.arange(width, dtype=np.int64), (rows, width)))
    if _is_tensor_spec(spec) or isinstance(spec, dict):
        return json_tensor(spec)
    raise ValueError("fwd-bwd payload position_ids must be true, false, arange, or tensor data")


def build_forward_backward_kwargs(
    payload: dict[str, Any], *, spec: dict[str, Any] | None = None, tokenizer: Any = None
) -> dict[str, Any]:
    """The model kwargs (input_ids, attention_mask, position_ids, labels) of a readable payload."""
    if not isinstance(payload, dict):
        raise ValueError("fwd-bwd payload must be an object")
    if "kwargs" in payload:
        given = payload["kwargs"]
        if not isinstance(given, dict):
            raise ValueError("fwd-bwd payload kwargs must be an object")
        return {key: json_tensor(value) if _is_tensor_spec(value) else value for key, value in given.items()}
    if "input_ids" in payload:
        input_ids = json_tensor(payload["input_ids"])
        given_mask = payload.get("attention_mask")
        mask = json_tensor(given_mask) if _is_tensor_spec(given_mask) else None
    else:
        input_ids, mask = _tokenize(payload, spec or {}, tokenizer)
    _rank2(input_ids, "input_ids")
    if mask is not None:
        _rank2(mask, "attention_mask", input_ids)
    kwargs: dict[str, Any] = {"input_ids": input_ids}
    include = payload.get("include_attention_mask", False)
    if isinstance(payload.get("attention_mask"), bool):
        include = payload["attention_mask"]
    if _require_bool(include, "fwd-bwd payload include_attention_mask"):
        kwargs["attention_mask"] = mask if mask is not None else np.ones_like(input_ids)
    position_spec = payload.get("position_ids")
    if position_spec is None and payload.get("include_position_ids", False):
        position_spec = "arange"
    positions = _position_ids(input_ids, position_spec)
    if positions is not None:
        _rank2(positions, "position_ids", input_ids)
        kwargs["position_ids"] = positions
    labels = _labels(input_ids, mask, payload)
    if labels is not None:
        _rank2(labels, "labels", input_ids)
        kwargs["labels"] = labels
    return kwargs


def build_forward_backward_payload(spec: dict[str, Any], *, tokenizer: Any = None) -> bytes:
    """The DSSST1 frame of a readable fwd-bwd JSON object (optionally wrapped in `{"payload": ...}`).

    `tokenizer` overrides the one the JSON names (any callable with the transformers signature).
    """
    if not isinstance(spec, dict):
        raise ValueError("fwd-bwd JSON must be an object")
    # The content may sit under a "payload" key; without one, the spec itself is the content.
    content = spec.get("payload", spec)
    if not isinstance(content, dict):
        raise ValueError("fwd-bwd payload must be an object")
    raw_args = content.get("args")
    if raw_args is None:
        args: tuple[Any, ...] = ()
    elif isinstance(raw_args, list):
        args = tuple(raw_args)
    else:
        raise ValueError("fwd-bwd payload args must be a JSON list")
    kwargs = build_forward_backward_kwargs(content, spec=spec, tokenizer=tokenizer)
    return serialize_forward_backward_args(args, kwargs)
