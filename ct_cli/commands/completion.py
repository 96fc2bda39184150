"""`ct completion SHELL`: shell completion for ct, printed or installed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from cyclopts import Parameter

from ct_cli import output

Shell = Literal["bash", "zsh", "fish", "powershell"]


def _root_app():  # type: ignore[no-untyped-def]
    from ct_cli.app import build_app
    from ct_cli.main import _prog_name
    from ct_core.plugins import get_plugin_manager

    # A fresh app holding the same commands, plugin commands included; building it is cheap
    # because commands stay lazy until the completion generator walks them.
    return build_app(get_plugin_manager(), name=_prog_name())


def completion(
    shell: Annotated[Shell, Parameter(help="The shell to complete for.")],
    /,
    *,
    install: Annotated[
        bool, Parameter(negative=(), help="Write the script where the shell loads it, and say where.")
    ] = False,
    output_path: Annotated[
        Path | None, Parameter(name="--output", help="With --install: write the script to this file.")
    ] = None,
) -> None:
    """Print the completion script for SHELL (e.g. `ct completion bash > ~/.ct-complete.bash`).

    This is the one command whose stdout is not JSON: it is the script itself. With --install,
    the script is written to the shell's completion folder and a JSON summary is printed.
    """
    app = _root_app()
    prog = app.name[0]
    if not install:
        output.emit_text(app.generate_completion(prog_name=prog, shell=shell))
        return
    path = app.install_completion(shell=shell, output=output_path, add_to_startup=False)
    output.emit({"installed": True, "path": str(path), "shell": shell})
