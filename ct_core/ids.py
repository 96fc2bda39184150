"""Identifiers a caller handles by hand: checkpoint ids and sub-job ids.

Checkpoints: the durable id is the `cp_<uuid>` segment of a save result's `stage_path`;
`checkpoint_tag` (for example `global_step1`) is only the backend's tag and `checkpoint_path` is a
mount inside the saving job's containers, so neither identifies a checkpoint elsewhere.

Sub-jobs: `{job_id}:{sub_job_type}:{index}`, where the type segment is `training`,
`sampling` or `log_prob` and the index counts from 0 per type. The create-time job type
`log_probability` is spelled `log_prob` in the id.

This module is cheap to import (the standard library only), so the CLI and the data plane share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "SUB_JOB_ID_TYPES",
    "SubJobId",
    "checkpoint_id_from_save_result",
    "find_sub_jobs",
    "format_sub_job_id",
    "latest_checkpoint",
    "parse_sub_job_id",
    "sub_job_id_segment",
]

#: The type segments a sub-job id may carry.
SUB_JOB_ID_TYPES = ("training", "sampling", "log_prob")
#: Create-time job types whose id segment is spelled differently.
_SEGMENT_FOR_JOB_TYPE = {"log_probability": "log_prob"}
#: Separator between the three parts of a sub-job id.
_SEPARATOR = ":"


@dataclass(frozen=True)
class SubJobId:
    """The three parts of a sub-job id; `str()` gives the id back."""

    job_id: str
    sub_job_type: str
    index: int

    def __str__(self) -> str:
        return f"{self.job_id}{_SEPARATOR}{self.sub_job_type}{_SEPARATOR}{self.index}"


def sub_job_id_segment(job_type: str) -> str:
    """The id segment for a job type: `log_probability` (and `log_prob`) become `log_prob`.

    Case and a `job_type_` prefix (as some services spell enum values) are ignored. Raises
    ValueError for a type that has no sub-job ids.
    """
    text = str(job_type).strip().lower().removeprefix("job_type_")
    segment = _SEGMENT_FOR_JOB_TYPE.get(text, text)
    if segment not in SUB_JOB_ID_TYPES:
        raise ValueError(f"unknown sub-job type {job_type!r}: expected training, sampling or log_probability")
    return segment


def format_sub_job_id(job_id: str, job_type: str, index: int = 0) -> str:
    """Build `{job_id}:{type}:{index}`, e.g. `format_sub_job_id(jid, "sampling", 1)`."""
    if not isinstance(job_id, str) or not job_id or _SEPARATOR in job_id:
        raise ValueError(f"job_id must be a non-empty string without ':', got {job_id!r}")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"a sub-job index counts from 0, got {index!r}")
    return str(SubJobId(job_id, sub_job_id_segment(job_type), index))


def parse_sub_job_id(value: str) -> SubJobId:
    """Split a complete sub-job id into its parts; raise ValueError naming what is wrong."""
    if not isinstance(value, str):
        raise ValueError(f"a sub-job id must be a string, got {type(value).__name__}")
    parts = value.split(_SEPARATOR)
    expected = "{job_id}:{sub_job_type}:{index}"
    if len(parts) != 3:
        raise ValueError(f"sub-job id {value!r} must have the form {expected}")
    job_id, segment, index_text = parts
    if not job_id.strip():
        raise ValueError(f"sub-job id {value!r} has an empty job id")
    if segment not in SUB_JOB_ID_TYPES:
        raise ValueError(
            f"sub-job id {value!r} has type {segment!r}; it must be one of {', '.join(SUB_JOB_ID_TYPES)}"
        )
    # str.isdigit also accepts non-ASCII digits; an index is plain ASCII.
    if not (index_text.isascii() and index_text.isdigit()):
        raise ValueError(f"sub-job id {value!r} must end with a non-negative integer index")
    return SubJobId(job_id, segment, int(index_text))


def find_sub_jobs(job: Mapping[str, Any], job_type: str) -> list[dict[str, Any]]:
    """The `sub_jobs` entries of a Get job record (operationId getJob) that have `job_type`, in record order.

    An entry matches on its `job_type` (any spelling `sub_job_id_segment` accepts) or, when that
    is missing, on the type segment of its `sub_job_id`.
    """
    wanted = sub_job_id_segment(job_type)
    entries = job.get("sub_jobs") if isinstance(job, Mapping) else None
    found: list[dict[str, Any]] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        declared = entry.get("job_type")
        try:
            if declared is not None:
                segment = sub_job_id_segment(str(declared))
            else:
                segment = parse_sub_job_id(entry.get("sub_job_id", "")).sub_job_type
        except ValueError:
            continue
        if segment == wanted:
            found.append(entry)
    return found


#: The durable checkpoint id inside a save result's stage_path.
_CHECKPOINT_ID_RE = re.compile(r"/checkpoints/(cp_[0-9a-fA-F-]+)(?:/|$)")


def checkpoint_id_from_save_result(result: Mapping[str, Any]) -> str:
    """The durable `cp_<uuid>` id of a finished save: its `stage_path` segment, else `checkpoint_id`.

    Raises ValueError when the result names neither; `latest_checkpoint` over `list_checkpoints`
    finds it then.
    """
    stage_path = result.get("stage_path") if isinstance(result, Mapping) else None
    if isinstance(stage_path, str):
        match = _CHECKPOINT_ID_RE.search(stage_path)
        if match:
            return match.group(1)
    explicit = result.get("checkpoint_id") if isinstance(result, Mapping) else None
    if isinstance(explicit, str) and explicit:
        return explicit
    raise ValueError(
        "the save result has no cp_<uuid> in its stage_path and no checkpoint_id; "
        "use list_checkpoints(job_id) and pick the newest by created_at"
    )


def _created_at(value: Any) -> datetime:
    if not isinstance(value, str) or not value:
        raise ValueError(f"created_at must be an ISO 8601 timestamp, got {value!r}")
    text = value.strip()
    # Z means UTC; spelled as an offset it also parses where fromisoformat predates Z support.
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    moment = datetime.fromisoformat(text)
    # A time without an offset is read as UTC, so naive and aware values can be compared.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def latest_checkpoint(
    checkpoints: Iterable[Mapping[str, Any]], checkpoint_type: str | None = None
) -> dict[str, Any] | None:
    """The newest entry of `list_checkpoints()` by `created_at`, optionally of one type.

    `checkpoint_type` is `resumable` or `weights-only` (compared case-insensitively). Entries
    whose `created_at` does not parse are skipped. Returns None when nothing matches.
    """
    wanted = checkpoint_type.strip().lower() if checkpoint_type is not None else None
    best: tuple[datetime, dict[str, Any]] | None = None
    for entry in checkpoints:
        if not isinstance(entry, Mapping):
            continue
        if wanted is not None and str(entry.get("checkpoint_type", "")).strip().lower() != wanted:
            continue
        try:
            moment = _created_at(entry.get("created_at"))
        except ValueError:
            continue
        if best is None or moment > best[0]:
            best = (moment, dict(entry))
    return None if best is None else best[1]
