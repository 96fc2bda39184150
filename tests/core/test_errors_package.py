"""The exception tree's layout: every name importable from `ct_core.errors`, the API family lazily.

`ct_core.errors` re-exports `base` at import and `api` on first use; these tests keep its three
name lists (the TYPE_CHECKING import, `_API_NAMES`, `__all__`) in step with the two modules.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import requests

import ct_core.errors as errors
from ct_core.errors import api, base

PACKAGE = Path(errors.__file__).parent


def _defined(module_path: Path) -> set[str]:
    """The public names a module defines at its top level (classes, functions, constants)."""
    names: set[str] = set()
    for node in ast.parse(module_path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def test_every_public_name_of_both_modules_is_exported_once() -> None:
    in_base, in_api = _defined(PACKAGE / "base.py"), _defined(PACKAGE / "api.py")
    assert not in_base & in_api
    assert set(errors.__all__) == in_base | in_api
    assert set(errors._API_NAMES) == in_api
    for name in errors.__all__:
        source = api if name in in_api else base
        assert getattr(errors, name) is getattr(source, name), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        errors.NoSuchError  # noqa: B018
    except AttributeError as refused:
        assert "NoSuchError" in str(refused)
    else:
        raise AssertionError("an unknown name was found")


def test_every_exception_is_a_cterror_and_every_api_error_a_requests_http_error() -> None:
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert issubclass(value, errors.CTError), name
            if name in errors._API_NAMES:
                assert issubclass(value, requests.HTTPError), name


def test_importing_the_tree_loads_neither_requests_nor_the_api_family_until_named() -> None:
    script = (
        "import sys\n"
        "import ct_core.errors as e\n"
        "before = {'requests', 'ct_core.errors.api', 'httpx'} & set(sys.modules)\n"
        "e.ValidationError, e.CTConnectionError\n"
        "assert not {'requests', 'ct_core.errors.api'} & set(sys.modules), before\n"
        "assert e.NotFoundError.__module__ == 'ct_core.errors.api'\n"
        "assert {'requests', 'ct_core.errors.api'} <= set(sys.modules)\n"
        "print(sorted(before))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
