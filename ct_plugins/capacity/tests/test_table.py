"""`--table` rendering of the shapes the local server does not produce (DISABLED, UNAVAILABLE, ...)."""

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


def test_statuses_other_than_ok_are_named_not_drawn_as_empty_tables() -> None:
    result = {
        **CAPACITY,
        "breakdown": {
            "unsupported_dimensions": ["region"],
            "by_job_type": {"status": "DISABLED", "groups": []},
            "by_submitted_by": {"status": "SOMETHING_NEW", "groups": []},
        },
    }
    text = draw(result, "H200")
    assert "H200 by job_type: DISABLED" in text
    assert "H200 by submitted_by: SOMETHING_NEW" in text
    assert "dimensions the service does not know: region" in text
    # A zero ceiling is a real quota of zero, not "no ceiling".
    assert "no ceiling" not in text and "up to 0" in text


def test_truncated_and_user_rows() -> None:
    result = {
        "capacity_by_hardware": {
            "B300": {
                **CAPACITY,
                "max_total_gpus": -1,
                "breakdown": {
                    "unsupported_dimensions": [],
                    "job_count": 9,
                    "truncated": True,
                    "by_submitted_by": {
                        "status": "OK",
                        "groups": [
                            {"kind": "USER", "submitted_by": "ANA", "is_caller": False, "job_count": 3},
                            {"kind": "USER", "submitted_by": "ME", "is_caller": True, "job_count": 1},
                            {"kind": "OTHER", "job_count": 2},
                            {"kind": "UNATTRIBUTED", "job_count": 3},
                        ],
                    },
                },
            }
        },
        "unsupported_hardware": ["H200", "B200"],
    }
    text = draw(result)
    assert "ANA" in text and "ME (you)" in text and "ANA (you)" not in text
    assert "others (jobs you cannot see)" in text and "unattributed" in text
    assert "the rest are unattributed" in " ".join(text.split())
    assert text.count("unsupported") == 2
