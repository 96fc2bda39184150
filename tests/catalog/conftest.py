"""Fixtures for the catalog tests: the shipped catalog, a writable copy of it, and `ct` in-process."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "model-catalog"


@pytest.fixture
def shipped_catalog() -> Path:
    return SHIPPED


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Path:
    """A private copy of the catalog that a test may break."""
    target = tmp_path / "model-catalog"
    shutil.copytree(SHIPPED, target, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    return target


def _edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


@pytest.fixture
def edit_json() -> Callable[[Path, Callable[[Any], Any]], None]:
    """`edit_json(path, change)`: load a JSON file, let `change` mutate it in place, save it."""
    return _edit_json


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def ct() -> Iterator[Callable[..., Result]]:
    """Run `ct ARGS...` in-process (real app, real plugin manager) and capture its streams."""
    from ct_cli.main import main

    def run(*args: str, stdin: str = "") -> Result:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(args), stdout=out, stderr=err, stdin=io.StringIO(stdin))
        return Result(code, out.getvalue(), err.getvalue())

    yield run
