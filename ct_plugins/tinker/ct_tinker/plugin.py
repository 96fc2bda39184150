"""The tinker plugin's hooks: the Tinker-compatible API inside `ct local serve`.

Registered under the entry-point group `ct` as `tinker`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts

TINKER_COMMAND = (
    "ct_tinker.cli:tinker_app",
    "tinker",
    "Serve a Tinker-compatible API in front of Cortex Training.",
)


@hookimpl
def ct_register_commands(app: cyclopts.App) -> None:
    path, name, help_text = TINKER_COMMAND
    app.command(path, name=name, help=help_text)


@hookimpl
def ct_local_services(state_dir: str, settings: Any) -> Any:
    from ct_tinker.embedded import embedded_service

    return embedded_service(state_dir, settings)
