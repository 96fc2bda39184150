"""Checks of a training batch made when the call arrives, before it is queued.

A forward or forward-backward frame whose token ids fall outside the model's vocabulary would
reach the embedding or the cross-entropy and fail there (an ``IndexError`` deep in torch, and a
traceback in the server log). :func:`check_token_ids` refuses it at the door with 422, naming the
field (``kwargs.input_ids`` or ``kwargs.labels``) and the range. Everything else about the batch
(shapes, missing fields, loss functions) is still reported by the worker, with the request.

:func:`vocabulary_size` says how many ids the sub-job's model has: the tiny model's vocabulary, or
the ``vocab_size`` in ``config.json`` of the folder a sub-job starts from (external weights or a
saved checkpoint), or of the real model its name is served by. Nothing here imports torch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ct_core import wire
from ct_local.http.errors import RequestValidationError
from ct_local.model import registry, tinylm
from ct_local.model.training_spec import IGNORE_INDEX, SpecError, parse_source
from ct_local.storage.checkpoint_paths import resolve_checkpoint
from ct_local.storage.store import Store

#: The batch fields that hold token ids, and whether the ignore index is allowed in them.
TOKEN_FIELDS: tuple[tuple[str, bool], ...] = (("input_ids", False), ("labels", True))


def _folder_vocabulary(folder: Path) -> int | None:
    try:
        size = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("vocab_size")
    except (OSError, ValueError, AttributeError):
        return None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def vocabulary_size(sub_job: dict[str, Any], store: Store) -> int:
    """The number of token ids of the model ``sub_job`` runs (see the module docstring)."""
    try:
        source = parse_source(sub_job.get("source_checkpoint_info"))
    except SpecError:
        source = None
    folder: Path | None = None
    if source is not None and source.external_path is not None:
        folder = source.external_path
    elif source is not None and source.source_job_id and source.checkpoint_id:
        row = resolve_checkpoint(store, source.source_job_id, source.checkpoint_id)
        folder = Path(row.path) if row is not None and row.path else None
    found = _folder_vocabulary(folder) if folder is not None else None
    real = registry.real_entry(str(sub_job.get("model_name") or ""))
    if found is None and real is not None:
        found = real.vocab_size
    return found if found is not None else tinylm.VOCAB_SIZE


def _whole_numbers(value: Any) -> np.ndarray | None:
    """``value`` as an integer array, or None when it is not numbers (the worker reports that)."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return None
    if array.dtype.kind in "iub":
        return array
    if array.dtype.kind == "f" and array.size and bool(np.isfinite(array).all()):
        return np.trunc(array)  # the worker reads ids as integers, dropping any fraction
    return None


def check_token_ids(frame: bytes, vocabulary: int) -> None:
    """Refuse (422) a batch frame whose ``input_ids`` or ``labels`` leave ``[0, vocabulary)``
    (a label may also be the ignore index). A frame that does not decode is left to the worker."""
    try:
        batch = wire.loads(frame, backend="numpy")
    except wire.WireError:
        return
    kwargs = batch.get("kwargs") if isinstance(batch, dict) else None
    if not isinstance(kwargs, dict):
        return
    problems: list[tuple[list[str | int], str]] = []
    for name, ignorable in TOKEN_FIELDS:
        ids = _whole_numbers(kwargs.get(name)) if kwargs.get(name) is not None else None
        if ids is None or ids.size == 0:
            continue
        if ignorable:
            ids = ids[ids != IGNORE_INDEX]
            if ids.size == 0:
                continue
        low, high = int(ids.min()), int(ids.max())
        if low >= 0 and high < vocabulary:
            continue
        allowed = f" or be {IGNORE_INDEX} (no target)" if ignorable else ""
        found = low if low < 0 else high
        problems.append(
            (["kwargs", name], f"{name} must lie in [0, {vocabulary}){allowed} for this model; found {found}")
        )
    if problems:
        raise RequestValidationError(problems)
