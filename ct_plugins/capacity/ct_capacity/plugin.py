"""The capacity plugin's hook: register `ct capacity`.

Registered under the entry-point group `ct` as `capacity`. The command began as a core command
(`ct_cli.commands.capacity`); this plugin is its successor. Until the core registration is
removed, the plugin takes the name over from exactly that core command (and from nothing else),
so `ct capacity` is this plugin's command and no name clash is reported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts

COMMAND_NAME = "capacity"
COMMAND_PATH = "ct_capacity.cli:capacity"
#: The core command this plugin supersedes.
SUPERSEDED_PATH = "ct_cli.commands.capacity:capacity"


def _registered_import_path(app: cyclopts.App, name: str) -> Any:
    # cyclopts keeps a lazily registered command as a spec with its import path; reading it does
    # not import the command module (app[name] would).
    spec = getattr(app, "_commands", {}).get(name)
    return getattr(spec, "import_path", None)


@hookimpl
def ct_register_commands(app: cyclopts.App) -> None:
    if COMMAND_NAME in app and _registered_import_path(app, COMMAND_NAME) == SUPERSEDED_PATH:
        del app[COMMAND_NAME]
    app.command(
        COMMAND_PATH,
        name=COMMAND_NAME,
        help="Show GPU capacity and usage per hardware type (--breakdown, --table).",
    )
