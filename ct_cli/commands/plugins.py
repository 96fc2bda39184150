"""`ct plugins`: what the plugin manager loaded, as JSON (name, version, hooks)."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from ct_cli import output


def plugins(
    *,
    all_: Annotated[
        bool, Parameter(name="--all", negative=(), help="Include the plugins built into ct itself.")
    ] = False,
) -> None:
    """List the installed plugins as {"plugins": [...], "errors": [...]}.

    Each plugin has its name, version, distribution and the hooks it implements; "errors" names
    every plugin that failed to load (or whose hook failed), with the reason. CT_PLUGINS limits
    which plugins load: a comma list of names, or an empty value for none.
    """
    from ct_core.plugins import get_plugin_manager, plugin_info

    pm = get_plugin_manager()
    output.emit(
        {
            "plugins": plugin_info(pm, include_builtin=all_),
            "errors": [failure.as_dict() for failure in pm.load_errors],
        }
    )
