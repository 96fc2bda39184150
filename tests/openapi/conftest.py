"""Fixtures for the OpenAPI spec and regeneration tests: the parsed spec, regen.py as a module, and a
loader that imports a generated package from any directory under a name of the test's choosing."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = REPO_ROOT / "openapi" / "cortex-training.yaml"
CONFIG_PATH = REPO_ROOT / "openapi" / "config.yaml"
REGEN_PATH = REPO_ROOT / "openapi" / "regen.py"
GENERATED_PACKAGE = REPO_ROOT / "generated" / "ct_api"


@pytest.fixture(scope="session")
def spec() -> dict[str, Any]:
    """The spec as plain data (the YAML has no anchors, so this is exactly what tools read)."""
    loaded = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="session")
def regen() -> ModuleType:
    """openapi/regen.py imported as a module (openapi/ is not a package)."""
    module_spec = importlib.util.spec_from_file_location("ct_openapi_regen", REGEN_PATH)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


@pytest.fixture
def load_package() -> Iterator[Callable[[Path, str], ModuleType]]:
    """Import a generated package directory under a private name; the modules are forgotten afterwards.

    The generated modules import their own package only under ``TYPE_CHECKING``, so a copy loaded
    as ``<alias>`` never touches the installed ``ct_api`` at run time.
    """
    aliases: list[str] = []

    def load(package_dir: Path, alias: str) -> ModuleType:
        module_spec = importlib.util.spec_from_file_location(
            alias, package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
        )
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[alias] = module
        aliases.append(alias)
        module_spec.loader.exec_module(module)
        return module

    yield load
    for alias in aliases:
        for name in [name for name in sys.modules if name == alias or name.startswith(alias + ".")]:
            del sys.modules[name]
