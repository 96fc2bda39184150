"""`--table` rendering of a status no service sends yet (a newer service may add some).

DISABLED, UNAVAILABLE and truncated breakdowns come from the real local server now, through its
account switches; those tests are in test_capacity_cli.py.
"""

from __future__ import annotations

import io
from typing import Any

from ct_capacity.table import render

CAPACITY = {
    "has_reservation": False,
    "max_total_gpus": 0,
    "reserved_gpus": 0,
    "in_use_gpus": 0,
    "pending_gpus": 0,
    "available_gpus": 0,
}


def draw(result: dict[str, Any], hardware: str | None = None) -> str:
    stream = io.StringIO()
    render(result, hardware=hardware, stream=stream)
    return stream.getvalue()


def test_a_status_from_a_newer_service_is_named() -> None:
    result = {**CAPACITY, "breakdown": {"unsupported_dimensions": [], "by_job_type": {"status": "PAUSED"}}}
    assert "H200 by job_type: PAUSED" in draw(result, "H200")
