"""Fixtures of the capacity plugin's tests: a `ct` subprocess runner (shared fixtures: ct_testing)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ct_testing.plugin import CtResult, ct_runner


@pytest.fixture
def run_ct(ct_home: Path) -> Callable[..., CtResult]:
    """Run the installed `ct` console script with an isolated home; only this plugin loads."""
    return ct_runner("capacity")
