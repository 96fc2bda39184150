"""The boundaries ARCHITECTURE.md promises, checked over the source (no import needed).

- No import cycle among the modules of ct_core, ct_local, ct_cli, ct_testing or any one plugin
  package under ct_plugins/, counting imports made inside functions and those under
  `if TYPE_CHECKING:` (an annotation-only import still ties the two modules together: a reader,
  a type checker and a refactoring must take them as one).
- No code of ours reaches into a private attribute or a private module of another library
  (`httpx._...`, `getattr(pool, "_pool")`, `from httpx_sse._decoders import ...`).
- Only ct_core imports the generated package `ct_api` (ruff's banned-import rule enforces the same
  in `make lint`; this test also covers files ruff is told to skip).
"""

from __future__ import annotations

import ast
import re
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


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, list[str]]]:
    """(imported module, names) for every import, inside functions and TYPE_CHECKING blocks too."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
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


def test_the_import_finder_counts_type_checking_imports() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.b import B\nelse:\n    import pkg.c\n"
        "def f():\n    from . import d\n"
    )
    found = {target for target, _ in _imports(tree, "pkg.a", False)}
    assert {"pkg.b", "pkg.c", "pkg"} <= found


#: Every package checked for cycles: ours, and each first-party plugin package on its own.
CYCLE_CHECKED = [
    "ct_core",
    "ct_local",
    "ct_cli",
    "testing/ct_testing",
    *sorted(str(p.parent.relative_to(ROOT)) for p in ROOT.glob("ct_plugins/*/ct_*/__init__.py")),
]


def test_every_plugin_package_is_checked_for_cycles() -> None:
    plugins = [name for name in CYCLE_CHECKED if name.startswith("ct_plugins/")]
    assert len(plugins) == len(list(ROOT.glob("ct_plugins/*/pyproject.toml"))) > 0


@pytest.mark.parametrize("package", CYCLE_CHECKED)
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


# --- ct_local: one atomic write, one lock helper, no module globals -------------------------------

#: Calls that replace or write a file in place; ct_local writes through ct_core.fs instead.
_WRITE_CALLS = frozenset({"os.replace", "os.rename", "shutil.move", "torch.save"})
_WRITE_METHODS = frozenset({"write_text", "write_bytes"})
_MUTABLE_CALLS = frozenset({"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter"})


def _open_mode(call: ast.Call) -> str | None:
    """The mode of an `open(path, mode)`, `os.fdopen(fd, mode)` or `path.open(mode)` call."""
    func = call.func
    name = ast.unparse(func)
    if name in ("open", "os.fdopen", "io.open"):
        position = 1
    elif isinstance(func, ast.Attribute) and func.attr == "open":
        position = 0
    else:
        return None
    mode: ast.expr | None = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else None


def _direct_writes(path: Path) -> list[str]:
    """Writes that bypass ct_core.fs: a replace or rename, write_text/write_bytes, an open for
    writing ("w", "x" or "+"; appending to a log is not a replace and stays allowed)."""
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        mode = _open_mode(node)
        if (
            name in _WRITE_CALLS
            or (isinstance(node.func, ast.Attribute) and node.func.attr in _WRITE_METHODS)
            or (mode is not None and any(flag in mode for flag in "wx+"))
        ):
            problems.append(f"{path}:{node.lineno}: {ast.unparse(node)[:80]}")
    return problems


def _lock_code(path: Path) -> list[str]:
    """Lock-file code of a module's own: importing fcntl or msvcrt, or calling flock/lockf/locking."""
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        imported = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        if any(name.split(".")[0] in ("fcntl", "msvcrt") for name in imported):
            problems.append(f"{path}:{node.lineno}: imports {', '.join(imported)}")
        if isinstance(node, ast.Attribute) and node.attr in ("flock", "lockf", "locking"):
            problems.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return problems


def _module_level_containers(path: Path) -> list[str]:
    """Module-level names bound to a mutable dict, list or set (a literal, a comprehension or a call
    of dict/list/set/defaultdict/OrderedDict/deque/Counter)."""
    problems = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if value is None:
            continue
        mutable = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp)
        if isinstance(value, ast.Call):
            func = value.func
            called = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            mutable = called in _MUTABLE_CALLS
        if mutable:
            problems.append(f"{path}:{node.lineno}: {ast.unparse(node)[:80]}")
    return problems


def test_the_ct_local_finders_find_what_they_look_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import fcntl, os\nfrom pathlib import Path\n"
        "COUNTERS: dict[str, int] = {}\nSEEN = set()\nNAMES = [n for n in 'ab']\nKEPT = frozenset({1})\n"
        "def f(p):\n    os.replace(p, p)\n    Path(p).write_text('x')\n    open(p, 'wb')\n"
        "    p.open(mode='a')\n    open(p)\n    fcntl.flock(3, fcntl.LOCK_EX)\n"
    )
    assert len(_direct_writes(sample)) == 3
    assert len(_lock_code(sample)) == 2
    assert len(_module_level_containers(sample)) == 3


def test_ct_local_writes_files_only_through_ct_core_fs() -> None:
    problems = [problem for path in (ROOT / "ct_local").rglob("*.py") for problem in _direct_writes(path)]
    assert problems == []


def test_ct_local_has_no_lock_file_code_of_its_own() -> None:
    problems = [problem for path in (ROOT / "ct_local").rglob("*.py") for problem in _lock_code(path)]
    assert problems == []


def test_ct_core_fs_is_the_only_lock_helper() -> None:
    """One lock helper for the whole tree: ct_core.fs.exclusive_lock. Any other module of ct, its
    plugins or its test fixtures that takes a file lock goes through it."""
    roots = ("ct_core", "ct_cli", "ct_local", "ct_plugins", "testing")
    problems = [
        problem
        for root in roots
        for path in (ROOT / root).rglob("*.py")
        if path != ROOT / "ct_core" / "fs.py" and "tests" not in path.relative_to(ROOT).parts
        for problem in _lock_code(path)
    ]
    assert problems == []


def test_ct_local_keeps_no_mutable_container_at_module_level() -> None:
    """What one app changes lives in its ServerState, never in a module global."""
    problems = [
        problem for path in (ROOT / "ct_local").rglob("*.py") for problem in _module_level_containers(path)
    ]
    assert problems == []


# --- one request path: operations are sent by their generated functions ---------------------------

#: Plugin packages: those the first-party distributions under ct_plugins/ ship.
PLUGIN_PACKAGES = frozenset(p.parent.name for p in ROOT.glob("ct_plugins/*/ct_*/__init__.py"))


def _tracked_sources() -> Iterator[Path]:
    """Every tracked module that is not generated, not a test and not the generator's own."""
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in tracked:
        relative = Path(name)
        if relative.parts[0] in ("generated", ".venv", "openapi") or "tests" in relative.parts:
            continue
        if (ROOT / relative).is_file():
            yield ROOT / relative


def _literal_operation_calls(path: Path, operation_ids: frozenset[str], root: Path = ROOT) -> list[str]:
    """`x.request("anOperationId", ...)` / `x.stream("anOperationId", ...)`: an operation spelled by
    hand instead of called through its generated function (`ct_core.operations`)."""
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("request", "stream")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in operation_ids
        ):
            call = f"{node.func.attr}({node.args[0].value!r})"
            problems.append(f"{path.relative_to(root)}:{node.lineno}: {call}")
    return problems


def _operation_ids() -> frozenset[str]:
    from ct_core.http.routes import operation_ids

    return frozenset(operation_ids())


def test_the_literal_operation_finder_finds_one(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "client.request('getJob', params={'job_id': j})\nwith t.stream(\n    'getLocalArtifact') as r:\n"
        "    pass\nconn.request('POST', '/x')\nclient.request(operation_id)\n"
    )
    found = _literal_operation_calls(sample, _operation_ids(), root=tmp_path)
    assert found == ["sample.py:1: request('getJob')", "sample.py:2: stream('getLocalArtifact')"]


def test_no_module_spells_an_operation_by_hand() -> None:
    """Outside generated/, nothing sends an operation by its id: the facade, its parts and the
    plugins call the generated functions (`ct_core.operations`), so an operation's method, path,
    parameters and retry rule are written once, by `make regen`. Tests may still drive the
    transport and `client.request` directly: that is what they test."""
    operation_ids = _operation_ids()
    problems = [p for path in _tracked_sources() for p in _literal_operation_calls(path, operation_ids)]
    assert problems == []


def _plugin_imports(path: Path, root: Path = ROOT) -> list[str]:
    """Imports of a plugin package, anywhere in the module (inside functions and TYPE_CHECKING too)."""
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        problems.extend(
            f"{path.relative_to(root)}:{node.lineno}: imports {name}"
            for name in names
            if name.split(".")[0] in PLUGIN_PACKAGES
        )
    return problems


def test_the_plugin_import_finder_finds_them(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import ct_runs.service\ndef f():\n    from ct_model_deployment import sdk\n"
        "importlib.import_module('ct_lora')\nimport ct_core\nfrom ct_core import runs\n"
    )
    found = [p.split(": ", 1)[1] for p in _plugin_imports(sample, root=tmp_path)]
    assert found == ["imports ct_runs.service", "imports ct_model_deployment", "imports ct_lora"]


@pytest.mark.parametrize("package", ["ct_core", "ct_cli", "ct_local"])
def test_the_core_packages_import_no_plugin(package: str) -> None:
    """Plugins depend on ct, never the reverse: what a plugin adds reaches ct through a hook."""
    assert {"ct_model_deployment", "ct_runs"} <= PLUGIN_PACKAGES
    problems = [p for path in sorted((ROOT / package).rglob("*.py")) for p in _plugin_imports(path)]
    assert problems == []


# --- ct_core: parts get a context, not the client -------------------------------------------------


def _client_reach(source: str) -> list[str]:
    """Lines that clone or read an object's `__dict__`, or hand a part the facade itself
    (`SomePart(self, ...)` inside ct_core.client)."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            problems.append(f"{node.lineno}: __dict__")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id[:1].isupper()
            and any(isinstance(arg, ast.Name) and arg.id == "self" for arg in node.args)
        ):
            problems.append(f"{node.lineno}: {node.func.id}(self, ...)")
    return problems


def test_the_client_reach_finder_finds_them() -> None:
    sample = "twin.__dict__.update(self.__dict__)\nparts = Downloads(self, state=None)\nDataPlane(ctx)\n"
    assert sorted(_client_reach(sample)) == ["1: __dict__", "1: __dict__", "2: Downloads(self, ...)"]


def test_the_facade_gives_its_parts_a_context_and_clones_nothing() -> None:
    """The parts (data plane, generation, downloads) get their context, never the client; a twin
    (`for_job`, `with_polling`) copies its settings by name."""
    problems = {
        str(path.relative_to(ROOT)): found
        for path in sorted((ROOT / "ct_core").rglob("*.py"))
        if (found := [p for p in _client_reach(path.read_text(encoding="utf-8")) if "__dict__" in p])
    }
    facade = (ROOT / "ct_core" / "client.py").read_text(encoding="utf-8")
    problems["ct_core/client.py"] = _client_reach(facade)
    assert {name: found for name, found in problems.items() if found} == {}


# --- ARCHITECTURE.md names what exists, and says where hooks are called and commands listed -------

ARCHITECTURE = ROOT / "ARCHITECTURE.md"
#: Paths the page names that a build writes, not the repository (the wheel's copy of the catalog).
BUILT_PATHS = frozenset({"ct_core/catalog/data"})
_PATH_SUFFIXES = (".py", ".md", ".toml", ".yaml", ".yml", ".json", ".jinja")


def _backticked(text: str) -> list[str]:
    """The first word of every `code span` that could name a file or folder."""
    found = []
    for span in text.split("`")[1::2]:
        words = span.split()
        word = words[0] if words else ""
        if "<" in word or "(" in word or word.startswith(("/", ".", "-")) or "://" in word:
            continue
        if "/" in word or word.endswith(_PATH_SUFFIXES):
            found.append(word.rstrip("/"))
    return found


def _missing_paths(text: str, root: Path) -> list[str]:
    """Paths named in backticks that are not in the tree under `root`.

    A name whose first folder is one at the top of the repository is read from there. In a row of a
    table whose first cell names a folder (`ct_core/http/`), any other name is looked for under that
    folder (`direct.py` somewhere below it); elsewhere such a name is not checked.
    """
    top = {path.name for path in root.iterdir()}
    missing = []
    for line in text.splitlines():
        row_root: Path | None = None
        if line.startswith("| ") and not line.startswith("| ---"):
            first = _backticked(line.split("|")[1])
            if first and (root / first[0]).is_dir():
                row_root = root / first[0]
        for name in _backticked(line):
            if name in BUILT_PATHS:
                continue
            if name.split("/")[0] in top:
                exists = (root / name).exists()
            elif row_root is not None:
                exists = (row_root / name).exists() or any(row_root.rglob(name))
            else:
                continue
            if not exists:
                missing.append(name)
    return missing


def test_the_path_checker_finds_a_missing_path(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "http").mkdir(parents=True)
    (tmp_path / "pkg" / "http" / "pool.py").write_text("")
    page = (
        "See `pkg/http/pool.py`, `pkg/gone.py` and `make regen`.\n"
        "| `pkg/` | `pool.py`, `http/`, `lost.py`, `a.b`, `api/<tag>/x.py` |\n"
        "Elsewhere `free.py` is not checked.\n"
    )
    assert _missing_paths(page, tmp_path) == ["pkg/gone.py", "lost.py"]


def test_every_path_architecture_names_exists() -> None:
    assert _missing_paths(ARCHITECTURE.read_text(encoding="utf-8"), ROOT) == []


def _section(text: str, title: str) -> str:
    """The bullet of "Where a new thing goes" that starts with `- **<title>**`."""
    start = text.index(f"- **{title}**")
    end = text.find("\n- **", start + 1)
    return text[start : end if end != -1 else len(text)]


def _hook_touchers(paths: Iterator[Path], root: Path = ROOT) -> set[str]:
    """Modules that touch a plugin manager's `hook` (`pm.hook.ct_x(...)`, `getattr(pm.hook, name)`)."""
    return {
        str(path.relative_to(root))
        for path in paths
        if any(
            isinstance(node, ast.Attribute) and node.attr == "hook"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    }


def test_the_hook_finder_finds_a_call_site(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("pm.hook.ct_register_commands(app=app)\n")
    (tmp_path / "b.py").write_text("caller = getattr(manager.hook, name)\n")
    (tmp_path / "c.py").write_text("hook = 1\nfrom x import hook\n")
    assert _hook_touchers(tmp_path.glob("*.py"), root=tmp_path) == {"a.py", "b.py"}


def test_hooks_are_called_only_where_architecture_says() -> None:
    """A new call site of a hook outside ct_core is a decision: ARCHITECTURE.md names it and why."""
    sources = (
        path
        for folder in ("ct_core", "ct_cli", "ct_local", "ct_plugins", "testing", "examples")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "tests" not in path.relative_to(ROOT).parts
    )
    section = " ".join(_section(ARCHITECTURE.read_text(encoding="utf-8"), "A plugin hook").split())
    assert "touch `pm.hook` at all:" in section, section
    named = _backticked(section.split("touch `pm.hook` at all:", 1)[1])
    assert _hook_touchers(sources) == {name for name in named if name.endswith(".py") and "/" in name}


def _command_tables(paths: Iterator[Path], root: Path = ROOT) -> dict[str, str]:
    """Module-level tables of lazy commands (three or more "package.module:name" strings): path -> name."""
    found = {}
    for path in paths:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            import_paths = [
                item
                for item in ast.walk(node.value)
                if isinstance(item, ast.Constant)
                and isinstance(item.value, str)
                and re.fullmatch(r"[a-z_][a-z0-9_.]*:[a-z_][a-z0-9_]*", item.value)
            ]
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if len(import_paths) >= 3 and isinstance(target, ast.Name):
                found[str(path.relative_to(root))] = target.id
    return found


def test_the_command_table_finder_finds_one(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("T = (('x', 'p.m:x', 'X'), ('y', 'p.m:y', 'Y'), ('z', 'p.n:z', 'Z'))\n")
    (tmp_path / "b.py").write_text("def f():\n    return ['p.m:x', 'p.m:y', 'p.m:z']\nONE = 'p.m:x'\n")
    assert _command_tables(tmp_path.glob("*.py"), root=tmp_path) == {"a.py": "T"}


def test_the_command_table_is_where_architecture_says() -> None:
    """ARCHITECTURE.md's "A CLI command" names the one module (and name) holding the lazy command table."""
    section = " ".join(_section(ARCHITECTURE.read_text(encoding="utf-8"), "A CLI command").split())
    named = re.search(r"command table\s+`(\w+)`\s+of\s+`([^`]+)`", section)
    assert named is not None, section
    assert _command_tables(sorted((ROOT / "ct_cli").rglob("*.py"))) == {named.group(2): named.group(1)}


def _surface_imports(paths: Iterator[Path]) -> set[str]:
    """The modules of ct_core, ct_cli and ct_local that `paths` import (anywhere in a module)."""
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            found.update(name for name in names if name.split(".")[0] in ("ct_core", "ct_cli", "ct_local"))
    return found


def test_the_surface_finder_finds_imports(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "import ct_core.fs\nfrom ct_core.data import plane\ndef f():\n    from ct_local.state import S\n"
        "from . import sibling\nimport httpx\n"
    )
    assert _surface_imports(tmp_path.glob("*.py")) == {"ct_core.fs", "ct_core.data", "ct_local.state"}


def test_plugins_use_only_the_surface_architecture_names() -> None:
    """Every module of ct the first-party plugins import is named in ARCHITECTURE.md's surface row,
    and every module named there is still used (a stale name is a claim gone false)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| The plugins reach ct through"))
    named = {span for span in row.split("`")[1::2] if re.fullmatch(r"ct_(core|cli|local)[a-z_.]*", span)}
    plugin_sources = (
        path for path in sorted(ROOT.glob("ct_plugins/*/ct_*/**/*.py")) if "tests" not in path.parts
    )
    assert _surface_imports(plugin_sources) == named
