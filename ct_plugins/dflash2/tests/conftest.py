"""Fixtures of the dflash2 plugin's tests: the shared ct_local fixtures and a `ct` subprocess runner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ct_local.pytest_plugin import CtResult, ct_runner, load_when_collected_alone

pytest_configure = load_when_collected_alone


@pytest.fixture
def run_ct(ct_home: Path) -> Callable[..., CtResult]:
    """Run the installed `ct` console script with an isolated home; only this plugin loads."""
    return ct_runner("dflash2")
