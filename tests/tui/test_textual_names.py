"""Our screens and widgets keep their own state under names Textual does not use.

A subclass of a Textual `Widget`, `Screen` or `App` that stores its own value under one of
Textual's names replaces Textual's attribute without a word: `self.loading = True` on a widget,
for one, sets Textual's reactive and covers the widget with a loading indicator. This test reads
every class of `ct_cli.tui` built on Textual, with its own bases and mix-ins, and fails on any
name that one of them defines in its class body, or assigns as `self.<name>`, that the nearest
Textual base already has, except the hooks and reactives that are there to be overridden or set.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap
from types import ModuleType

import pytest
from textual.dom import DOMNode

import ct_cli.tui.screens

#: Textual's names that our classes override or set on purpose.
DELIBERATE = frozenset(
    {
        "BINDINGS",
        "CSS",
        "DEFAULT_CSS",
        "TITLE",
        "compose",
        "check_action",
        "sub_title",
        "title",
    }
)


def tui_modules() -> list[ModuleType]:
    names = ["ct_cli.tui.app"]
    names += [f"ct_cli.tui.screens.{info.name}" for info in pkgutil.iter_modules(ct_cli.tui.screens.__path__)]
    return [importlib.import_module(name) for name in names]


def textual_classes() -> list[type[DOMNode]]:
    found: dict[str, type[DOMNode]] = {}
    for module in tui_modules():
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, DOMNode) and value.__module__ == module.__name__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[key] for key in sorted(found)]


def nearest_textual_base(cls: type) -> type[DOMNode]:
    return next(base for base in cls.__mro__ if base.__module__.split(".")[0] == "textual")


def textual_names(base: type[DOMNode]) -> set[str]:
    """What the base has on its class, and what its constructor puts on an instance."""
    return set(dir(base)) | set(vars(base()))


def names_textual_adds(base: type[DOMNode]) -> set[str]:
    """What Textual writes into the body of every subclass of `base` by itself."""
    return set(vars(type("Probe", (base,), {})))


def self_assignments(cls: type) -> set[str]:
    """Every `self.<name>` the class's own source assigns to."""
    assigned: set[str] = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(cls)))):
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        while targets:
            target = targets.pop()
            if isinstance(target, (ast.Tuple, ast.List)):
                targets.extend(target.elts)
            elif (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                assigned.add(target.attr)
    return assigned


def own_names(cls: type, base: type[DOMNode]) -> dict[str, set[str]]:
    """For each of our classes in `cls`'s lineage (those before `base`, mix-ins included): the
    names it defines or assigns itself."""
    automatic = names_textual_adds(base)
    names: dict[str, set[str]] = {}
    for part in cls.__mro__[: cls.__mro__.index(base)]:
        body = {name for name in vars(part) if not name.startswith("__")} - automatic
        body |= set(inspect.get_annotations(part))
        names[part.__name__] = body | self_assignments(part)
    return names


def test_the_scan_sees_every_kind_of_class() -> None:
    kinds = {nearest_textual_base(cls).__name__ for cls in textual_classes()}
    assert {"App", "Screen", "VerticalScroll", "Vertical"} <= kinds


def test_the_scan_finds_a_shadowing_name() -> None:
    from textual.widget import Widget

    class Mixin:
        def start(self) -> None:
            self.loading = True

    class Pane(Mixin, Widget):
        refresh_s = 1.0

    theirs = textual_names(Widget)
    found = {owner: names & theirs for owner, names in own_names(Pane, Widget).items()}
    assert found == {"Pane": set(), "Mixin": {"loading"}}


@pytest.mark.parametrize("cls", textual_classes(), ids=lambda cls: cls.__qualname__)
def test_no_textual_name_is_shadowed(cls: type[DOMNode]) -> None:
    base = nearest_textual_base(cls)
    theirs = textual_names(base)
    clashes = {
        f"{owner}.{name}"
        for owner, names in own_names(cls, base).items()
        for name in names - DELIBERATE
        if name in theirs
    }
    assert not clashes, f"these names are Textual's ({base.__name__}); rename ours: {sorted(clashes)}"
