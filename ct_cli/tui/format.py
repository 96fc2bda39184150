"""Plain-text shaping for the TUI: job rows, the job summary, log lines, filters and levels.

Nothing here imports Textual, so every rule the screens show (which statuses count as live, how a
row or a log entry reads, what a filter matches) is a pure function with its own tests.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

#: Statuses whose log may still grow; a job with a status outside both sets is treated as live too,
#: so a status the service adds later never stops the tail.
ACTIVE_STATUSES = frozenset({"running", "initializing", "pending", "placing", "queued", "creating"})
#: Statuses a job never leaves: its live log is gone and only the saved console remains.
TERMINAL_STATUSES = frozenset(
    {"failed", "cancelled", "canceled", "terminated", "completed", "succeeded", "done", "error"}
)
#: Severity of the level words a structured entry may carry.
LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "WARN": 30, "ERROR": 40, "CRITICAL": 50, "FATAL": 50}
#: What `L` steps through on the log screen: no floor, then INFO, WARNING and ERROR.
LEVEL_CYCLE: tuple[str | None, ...] = (None, "INFO", "WARNING", "ERROR")
#: Separator between the segments of the summary and subtitle lines.
SEPARATOR = "  ·  "


def status_word(status: Any) -> str:
    """The status as shown: without the `JOB_STATE_` prefix, `?` when missing."""
    text = str(status if status is not None else "").strip()
    return text.removeprefix("JOB_STATE_").removeprefix("job_state_") or "?"


def _normal(status: Any) -> str:
    return str(status if status is not None else "").strip().lower().removeprefix("job_state_")


def is_terminal(status: Any) -> bool:
    """Whether the job has ended (its live log can no longer be read)."""
    return _normal(status) in TERMINAL_STATUSES


def is_active(status: Any) -> bool:
    """Whether the job's log should be followed live: anything not known to be terminal."""
    return not is_terminal(status)


def status_style(status: Any) -> str:
    """The Rich style of the status word: green for a live job, none otherwise (no alarm colours)."""
    return "green" if _normal(status) in ACTIVE_STATUSES else ""


def _parse_time(raw: Any) -> datetime | None:
    if not raw:
        return None
    text = str(raw).strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def created_label(raw: Any) -> str:
    """`created_at` in local time as `YYYY-MM-DD HH:MM`; an em dash when missing or unreadable."""
    moment = _parse_time(raw)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment else "—"


def newest_first(jobs: Iterable[Any]) -> list[dict[str, Any]]:
    """Jobs by `created_at`, newest first; jobs without a readable time go last, in their order."""
    records = [job for job in jobs if isinstance(job, dict)]
    dated: list[tuple[float, int, dict[str, Any]]] = []
    undated: list[dict[str, Any]] = []
    for index, job in enumerate(records):
        moment = _parse_time(job.get("created_at"))
        if moment is None:
            undated.append(job)
        else:
            dated.append((-moment.timestamp(), index, job))
    return [job for _, _, job in sorted(dated, key=lambda item: (item[0], item[1]))] + undated


def job_id_of(job: dict[str, Any]) -> str:
    return str(job.get("job_id") or job.get("id") or "")


def sub_job_types(job: dict[str, Any]) -> list[str]:
    """The sub-jobs' types in order (the job's own type when it lists no sub-jobs)."""
    types = [
        str(sub.get("job_type") or sub.get("type"))
        for sub in job.get("sub_jobs") or []
        if isinstance(sub, dict) and (sub.get("job_type") or sub.get("type"))
    ]
    if not types and job.get("job_type"):
        types = [str(job["job_type"])]
    return types


def job_row(job: dict[str, Any]) -> tuple[str, str]:
    """One picker row as (status word, the rest): `status │ created │ job_id │ sub-job types`."""
    status = status_word(job.get("status"))
    rest = f" │ {created_label(job.get('created_at')):<16} │ {job_id_of(job) or '?'}"
    types = sub_job_types(job)
    if types:
        rest += f" │ {', '.join(types)}"
    return f"{status:<12}", rest


def job_matches(job: dict[str, Any], query: str) -> bool:
    """Case-insensitive substring match over the id, status, sub-job types and model names."""
    if not query:
        return True
    words = [job_id_of(job), str(job.get("status") or "")]
    for sub in job.get("sub_jobs") or []:
        if isinstance(sub, dict):
            words += [str(sub.get("job_type") or sub.get("type") or ""), str(sub.get("model_name") or "")]
    return query.lower() in " ".join(words).lower()


def _number(value: Any) -> str:
    if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
        return str(int(value))
    return str(value)


#: Config keys shown in the summary, and the short label each is shown under.
_CONFIG_FIELDS = tuple(
    zip(
        ("n_gpus", "max_seq_len", "train_batch_size", "gradient_clipping"),
        ("gpus", "seq", "bs", "clip"),
        strict=True,
    )
)
_SUB_JOB_FIELDS = (("global_batch_size", "gbs"), ("dtype", "dtype"), ("seed", "seed"))


def job_summary(job: dict[str, Any]) -> str:
    """The static configuration of each sub-job on one line (no status: that is the subtitle's)."""
    segments: list[str] = []
    for sub in job.get("sub_jobs") or []:
        if not isinstance(sub, dict):
            continue
        words: list[str] = []
        kind = str(sub.get("job_type") or sub.get("type") or "").lower()
        if kind:
            words.append(kind)
        if sub.get("model_name"):
            words.append(str(sub["model_name"]))
        config: dict[str, Any] = next(
            (
                sub[key]
                for key in ("training_config", "inference_config", "sampling_config")
                if isinstance(sub.get(key), dict)
            ),
            {},
        )
        words += [
            f"{label}={_number(config[key])}" for key, label in _CONFIG_FIELDS if config.get(key) is not None
        ]
        optimizer = config.get("optimizer")
        if isinstance(optimizer, dict):
            parts = [str(optimizer["name"])] if optimizer.get("name") else []
            if optimizer.get("lr") is not None:
                parts.append(f"lr={_number(optimizer['lr'])}")
            if parts:
                words.append("opt=" + "/".join(parts))
        words += [
            f"{label}={_number(sub[key])}" for key, label in _SUB_JOB_FIELDS if sub.get(key) is not None
        ]
        if words:
            segments.append(" ".join(words))
    return SEPARATOR.join(segments)


def sources_of(job: dict[str, Any]) -> list[tuple[str, str]]:
    """(sub_job_id, label) per sub-job, the label `<type> #<index>` read from the record or the id."""
    sources: list[tuple[str, str]] = []
    for sub in job.get("sub_jobs") or []:
        if not isinstance(sub, dict):
            continue
        sub_job_id = str(sub.get("sub_job_id") or sub.get("id") or "")
        if sub_job_id:
            sources.append((sub_job_id, source_label(sub_job_id, sub.get("job_type") or sub.get("type"))))
    return sources


def source_label(sub_job_id: str, kind: Any = None) -> str:
    """`<type> #<index>` for a sub-job id of the form `<job>:<type>:<index>`."""
    parts = sub_job_id.split(":")
    kind = kind or (parts[1] if len(parts) >= 2 else None)
    index = parts[2] if len(parts) >= 3 else ""
    if not kind:
        return sub_job_id
    return f"{kind} #{index}" if index else str(kind)


def _embedded_json(raw: str) -> dict[str, Any] | None:
    """A JSON object printed after the line's timestamp (`<ts> {...}`), when there is one."""
    _, _, rest = raw.partition(" ")
    rest = rest.strip()
    if not rest.startswith("{"):
        return None
    try:
        value = json.loads(rest)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def entry_text(entry: Any) -> str:
    """One log entry as a line: a console line verbatim, else `ts level logger: message`."""
    raw = entry.get("_raw") if isinstance(entry, dict) else entry
    if raw is not None or not isinstance(entry, dict):
        # A console line (or anything that is not an entry object) is shown as it came.
        text = str(raw)
    else:
        message = entry.get("msg", entry.get("message"))
        if message is None:
            message = json.dumps(entry, sort_keys=True, default=str)
        level = str(entry.get("level") or "").strip()
        parts = [str(entry.get("ts") or "").strip(), f"{level:<5}" if level else ""]
        if entry.get("logger"):
            parts.append(f"{str(entry['logger']).strip()}:")
        parts.append(str(message))
        text = " ".join(part for part in parts if part)
    truncated = isinstance(entry, dict) and entry.get("_truncated")
    return text + " …[truncated]" if truncated else text


def entry_level(entry: Any) -> str | None:
    """The entry's level word: its own field, or that of a JSON object printed inside the console line."""
    if not isinstance(entry, dict):
        return None
    level = entry.get("level")
    raw = entry.get("_raw")
    if not level and isinstance(raw, str):
        embedded = _embedded_json(raw)
        level = embedded.get("level") if embedded else None
        if not level:
            # A console line that starts with a level word after its timestamp (`<ts> WARNING ...`).
            words = raw.split(maxsplit=2)
            level = words[1] if len(words) > 1 and words[1].upper() in LEVELS else None
    return str(level) if level else None


def passes_level(entry: Any, floor: str | None) -> bool:
    """Whether an entry is at or above `floor`; entries without a level always pass."""
    if not floor or floor.upper() not in LEVELS:
        return True
    level = entry_level(entry)
    if level is None:
        return True
    return LEVELS.get(level.upper(), 0) >= LEVELS[floor.upper()]


def passes_filter(text: str, query: str) -> bool:
    return not query or query.lower() in text.lower()


def wrap(line: str, width: int) -> list[str]:
    """A line cut to `width` columns: at word boundaries where it can, long tokens broken hard,
    indentation kept, embedded newlines honoured. A width of 0 or less leaves it whole."""
    pieces: list[str] = []
    for logical in line.split("\n"):
        if width <= 0 or len(logical) <= width:
            pieces.append(logical)
            continue
        cutter = textwrap.TextWrapper(width, break_on_hyphens=False, replace_whitespace=False)
        # Spaces are kept where a line is cut, so indentation and alignment survive the wrap.
        cutter.drop_whitespace = False
        pieces.extend(cutter.wrap(logical) or [""])
    return pieces or [""]


#: Characters a saved log's file name never holds: separators, and what no file system accepts.
_UNSAFE_IN_SAVE_NAME = str.maketrans(
    {"/": "_", "\\": "_", ":": "-", **{chr(code): "_" for code in range(32)}}
)


def save_name(job_id: str, source: str) -> str:
    """The file name `s` saves a source's log under: `cortex-training-<job id's first 8>-<source>.log`,
    with `/` (and `\\`) as `_` and `:` as `-`, so the name is one plain file in the home folder."""
    return f"cortex-training-{job_id[:8]}-{source}.log".translate(_UNSAFE_IN_SAVE_NAME)
