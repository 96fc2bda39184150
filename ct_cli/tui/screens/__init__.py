"""The TUI's screens, one module each, and how screens beyond the job's own come in.

`jobs` is the job picker, `logs` a job's log screen and `job` the same screen with the Resources
and Training tabs. Other screens (model deployments, runs, and any a plugin adds) are described
by a `ScreenEntry` and reached with their key from the picker. The built-in ones register
through the same hook as a plugin's (`ct_tui_screens`), so the picker treats them all alike.

This module imports no Textual at import time: a plugin may import `ScreenEntry` from it at its
own import, and only `ct tui` ever builds a screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ct_core.hookspecs import hookimpl

#: Keys the picker already uses: a screen entry cannot take them.
RESERVED_KEYS = frozenset({"slash", "/", "escape", "r", "q", "enter", "up", "down", "tab", "ctrl+c"})
#: A screen entry's name: short, lowercase, usable in an action string.
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
#: Keys as Textual names them: one printable character, or a named key such as `f5` / `ctrl+d`.
_KEY = re.compile(r"^(?:[!-~]|(?:ctrl\+|shift\+|alt\+)*[a-z][a-z0-9_]*)$")


@dataclass(frozen=True)
class ScreenEntry:
    """One screen `ct tui` can open from the job picker.

    :param name: a unique short name (`deployments`), used in the app's action and errors.
    :param key: the key that opens it from the picker (`d`), as Textual names keys.
    :param title: what the picker's footer shows for the key, and the screen's title.
    :param factory: builds the Textual `Screen` from the app's SDK client. It must be read-only.
    """

    name: str
    key: str
    title: str
    factory: Callable[[Any], Any]


def check_entry(entry: Any) -> str | None:
    """What is wrong with a hook's entry, or None when it can be used."""
    if not isinstance(entry, ScreenEntry):
        return f"expected a ct_cli.tui.screens.ScreenEntry, got {type(entry).__name__}"
    if not _NAME.match(entry.name):
        return f"screen name {entry.name!r} must be 1-40 lowercase letters, digits, '-' or '_'"
    if not _KEY.match(entry.key):
        return f"screen {entry.name!r}: key {entry.key!r} is not a key name Textual knows"
    if entry.key in RESERVED_KEYS:
        return f"screen {entry.name!r}: key {entry.key!r} is used by the job picker"
    if not callable(entry.factory):
        return f"screen {entry.name!r}: factory is not callable"
    return None


def _deployments(client: Any) -> Any:
    from ct_cli.tui.screens.deployments import DeploymentsScreen

    return DeploymentsScreen(client)


def _runs(client: Any) -> Any:
    from ct_cli.tui.screens.runs import RunsScreen

    return RunsScreen(client)


#: The screens that ship with ct.
BUILTIN_ENTRIES = (
    ScreenEntry("deployments", "d", "Deployments", _deployments),
    ScreenEntry("runs", "R", "Runs", _runs),
)


class BuiltinScreens:
    """The built-in screens, registered as a plugin of their own when `ct tui` starts."""

    @staticmethod
    @hookimpl
    def ct_tui_screens() -> list[ScreenEntry]:
        return list(BUILTIN_ENTRIES)


@dataclass(frozen=True)
class Collected:
    """The usable entries, and one line per entry or plugin that could not be used."""

    entries: tuple[ScreenEntry, ...]
    problems: tuple[str, ...]


def _flatten(results: Iterable[Any]) -> list[Any]:
    found: list[Any] = []
    for result in results:
        if isinstance(result, list | tuple):
            found.extend(result)
        else:
            found.append(result)
    return found


def collect_entries(pm: Any = None) -> Collected:
    """Every screen entry: the built-in ones first, then the plugins', checked one by one.

    A plugin whose hook fails, an entry that is malformed, or one whose name or key another entry
    took first is left out and named in `problems`; the other screens still come in.
    """
    from ct_core import plugins

    manager = pm if pm is not None else plugins.get_plugin_manager()
    plugins.register_builtin(manager, BuiltinScreens(), "ct-tui-screens")
    problems: list[str] = []
    entries: list[ScreenEntry] = []
    builtin: list[Any] = []
    others: list[tuple[str, Any]] = []
    for impl in reversed(manager.hook.ct_tui_screens.get_hookimpls()):
        try:
            result = impl.function()
        except Exception as exc:  # one plugin's failure must not take the TUI down
            problems.append(
                f"plugin {impl.plugin_name!r} failed in ct_tui_screens: {type(exc).__name__}: {exc}"
            )
            continue
        if result is None:
            continue
        items = _flatten([result])
        if impl.plugin_name == "ct-tui-screens":
            builtin.extend(items)
        else:
            others.extend((impl.plugin_name, item) for item in items)
    names: set[str] = set()
    keys: set[str] = set()
    for owner, entry in [("ct", item) for item in builtin] + others:
        problem = check_entry(entry)
        if problem is None and entry.name in names:
            problem = f"screen name {entry.name!r} is already taken"
        if problem is None and entry.key in keys:
            problem = f"screen {entry.name!r}: key {entry.key!r} already opens another screen"
        if problem is not None:
            problems.append(f"plugin {owner!r}: {problem}" if owner != "ct" else problem)
            continue
        names.add(entry.name)
        keys.add(entry.key)
        entries.append(entry)
    return Collected(tuple(entries), tuple(problems))
