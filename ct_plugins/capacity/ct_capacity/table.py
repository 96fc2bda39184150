"""`ct capacity --table`: the capacity JSON drawn as rich tables a person reads at a glance.

One summary table (a row per hardware type, unsupported types included), then, with --breakdown,
a table per hardware type and dimension. The caller's own submitter row is marked, found by
is_caller rather than by position (the service does not promise an order for it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

#: Column titles of the split tables, per dimension: (group label key, count key, count title).
_DIMENSIONS = {
    "job_type": ("Job type", "sub_job_count", "Sub-jobs"),
    "submitted_by": ("Submitted by", "job_count", "Jobs"),
}


def _ceiling(value: Any) -> str:
    # -1 means the account has no ceiling at all; 0 is a real quota of zero.
    return "no ceiling" if value == -1 else str(value)


def _available(capacity: Mapping[str, Any]) -> str:
    # Without a reservation the shared pool decides, so the number is only an upper bound.
    value = str(capacity.get("available_gpus", 0))
    return value if capacity.get("has_reservation") else f"up to {value}"


def _summary(by_hardware: Mapping[str, Mapping[str, Any]], unsupported: list[str]) -> Table:
    table = Table(title="GPU capacity", title_justify="left")
    table.add_column("Hardware")
    table.add_column("Ceiling", justify="right")
    table.add_column("Reserved")
    table.add_column("In use", justify="right")
    table.add_column("Pending", justify="right")
    table.add_column("Available now", justify="right")
    for name, capacity in by_hardware.items():
        table.add_row(
            name,
            _ceiling(capacity.get("max_total_gpus", 0)),
            "yes" if capacity.get("has_reservation") else "no (best effort)",
            str(capacity.get("in_use_gpus", 0)),
            str(capacity.get("pending_gpus", 0)),
            _available(capacity),
        )
    for name in unsupported:
        table.add_row(name, "-", "unsupported", "-", "-", "-")
    return table


def _group_label(dimension: str, group: Mapping[str, Any]) -> str:
    if dimension == "job_type":
        return str(group.get("job_type", "?"))
    kind = group.get("kind")
    if kind == "USER":
        name = str(group.get("submitted_by", "?"))
        return f"{name} (you)" if group.get("is_caller") else name
    if kind == "OTHER":
        return "others (jobs you cannot see)"
    if kind == "UNATTRIBUTED":
        return "unattributed"
    return str(kind or "?")


def _split(hardware: str, dimension: str, split: Mapping[str, Any]) -> Table | str:
    title, count_key, count_title = _DIMENSIONS.get(dimension, (dimension, "job_count", "Jobs"))
    status = split.get("status", "UNAVAILABLE")
    if status != "OK":
        return f"{hardware} by {dimension}: {status} (no split for this account or request)"
    table = Table(title=f"{hardware} by {dimension}", title_justify="left")
    table.add_column(title)
    table.add_column("In use", justify="right")
    table.add_column("Pending", justify="right")
    table.add_column(count_title, justify="right")
    for group in split.get("groups") or []:
        table.add_row(
            _group_label(dimension, group),
            str(group.get("in_use_gpus", 0)),
            str(group.get("pending_gpus", 0)),
            str(group.get(count_key, 0)),
        )
    return table


def render(result: Mapping[str, Any], *, hardware: str | None, stream: TextIO) -> None:
    """Write `result` (what `ct capacity` would print as JSON) as tables to `stream`."""
    console = Console(file=stream, highlight=False, soft_wrap=False)
    if hardware is not None:
        by_hardware: Mapping[str, Mapping[str, Any]] = {hardware: result}
        unsupported: list[str] = []
    else:
        by_hardware = result.get("capacity_by_hardware") or {}
        unsupported = list(result.get("unsupported_hardware") or [])
    console.print(_summary(by_hardware, unsupported))
    for name, capacity in by_hardware.items():
        breakdown = capacity.get("breakdown")
        if not isinstance(breakdown, Mapping):
            continue
        for key, split in breakdown.items():
            if key.startswith("by_") and isinstance(split, Mapping):
                console.print(_split(name, key[3:], split))
        unsupported_dimensions = breakdown.get("unsupported_dimensions") or []
        if unsupported_dimensions:
            console.print(
                f"{name}: dimensions the service does not know: {', '.join(unsupported_dimensions)}"
            )
        if breakdown.get("truncated"):
            console.print(
                f"{name}: more jobs than the service attributes one by one; the rest are unattributed"
            )
