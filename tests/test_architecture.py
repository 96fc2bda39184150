"""The boundaries ARCHITECTURE.md promises, checked over the source (no import needed).

- No import cycle among ct_core's modules, nor among ct_local's, counting imports made inside
  functions (imports under `if TYPE_CHECKING:` are for annotations only and do not count).
- No code of ours reaches into a private attribute or a private module of another library
  (`httpx._...`, `getattr(pool, "_pool")`, `from httpx_sse._decoders import ...`).
- Only ct_core imports the generated package `ct_api` (ruff's banned-import rule enforces the same
  in `make lint`; this test also covers files ruff is told to skip).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUR_PACKAGES = ("ct_core", "ct_cli", "ct_local", "ct_testing", "ct_api")
SOURCE_DIRS = [
    "ct_core",
    "ct_cli",
    "ct_local",
    "testing/ct_testing",
    *sorted(str(p.parent.relative_to(ROOT)) for p in ROOT.glob("ct_plugins/*/ct_*/__init__.py")),
]


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT)
    parts = list(relative.with_suffix("").parts)
    if parts[0] in ("testing", "ct_plugins"):
        parts = parts[2:] if parts[0] == "ct_plugins" else parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _sources(prefix: str) -> dict[str, Path]:
    return {_module_name(path): path for path in (ROOT / prefix).rglob("*.py")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, list[str]]]:
    """(imported module, names) for every import outside TYPE_CHECKING blocks."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            yield base, [alias.name for alias in node.names]
        stack.extend(ast.iter_child_nodes(node))


def _graph(prefix: str) -> dict[str, set[str]]:
    sources = _sources(prefix)
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for target, names in _imports(tree, name, path.name == "__init__.py"):
            for candidate in [f"{target}.{item}" for item in names] or [target]:
                if candidate in sources and candidate != name:
                    graph[name].add(candidate)
                elif target in sources and target != name:
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", ["ct_core", "ct_local", "ct_cli"])
def test_no_import_cycles(package: str) -> None:
    assert _cycles(_graph(package)) == []


def _python_files() -> Iterator[Path]:
    for folder in SOURCE_DIRS:
        yield from (ROOT / folder).rglob("*.py")


def _private_reach(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    third_party_names: set[str] = set()
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top not in OUR_PACKAGES and not top.startswith("ct_"):
                    third_party_names.add((alias.asname or alias.name).split(".")[0])
                    if any(part.startswith("_") for part in alias.name.split(".")):
                        problems.append(f"{path}:{node.lineno}: import of a private module {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            top = node.module.split(".")[0]
            if top not in OUR_PACKAGES and not top.startswith("ct_") and top != "__future__":
                if any(part.startswith("_") for part in node.module.split(".")):
                    problems.append(f"{path}:{node.lineno}: import from a private module {node.module}")
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        problems.append(f"{path}:{node.lineno}: import of private {node.module}.{alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in third_party_names and root.id != "os":
                problems.append(f"{path}:{node.lineno}: private attribute {ast.unparse(node)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.startswith("_")
            and not node.args[1].value.startswith("__")
            and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls"))
        ):
            problems.append(f"{path}:{node.lineno}: {ast.unparse(node)} reads a private attribute by name")
    return problems


def test_the_private_reach_finder_finds_the_old_fast_path(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import httpx\nfrom httpx._client import Client\n"
        "pool = getattr(transport, '_pool', None)\nhttpx._config.DEFAULT\n"
    )
    assert len(_private_reach(sample)) == 3


def test_no_private_attribute_of_another_library() -> None:
    problems = [problem for path in _python_files() for problem in _private_reach(path)]
    assert problems == []


def test_only_ct_core_imports_the_generated_package() -> None:
    offenders = []
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in tracked:
        path = ROOT / name
        relative = path.relative_to(ROOT)
        if relative.parts[0] in ("ct_core", "generated", ".venv", "openapi") or "tests" in relative.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for target, _names in _imports(
            tree, _module_name(path) if relative.parts[0] != "bench" else "x", False
        ):
            if target.split(".")[0] == "ct_api":
                offenders.append(str(relative))
    assert offenders == []
