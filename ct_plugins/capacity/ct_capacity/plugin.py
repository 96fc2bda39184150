"""The capacity plugin's hook: register `ct capacity`.

Registered under the entry-point group `ct` as `capacity`. The command is loaded lazily by
import path, so `ct --help` does not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts

COMMAND_NAME = "capacity"
COMMAND_PATH = "ct_capacity.cli:capacity"


@hookimpl
def ct_register_commands(app: cyclopts.App) -> None:
    app.command(
        COMMAND_PATH,
        name=COMMAND_NAME,
        help="Show GPU capacity and usage per hardware type (--breakdown, --table).",
    )
