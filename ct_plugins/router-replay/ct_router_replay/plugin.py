"""The router-replay plugin's hooks: check router_replay blocks and add `ct router-replay`.

Registered under the entry-point group `ct` as `router-replay`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts


@hookimpl
def ct_validate_sub_job(sub_job: dict[str, Any], location: str) -> list[str]:
    # Imported here, not with the module: loading the plugin (every `ct` start) needs no rules.
    from ct_router_replay.rules import check_sub_job

    return check_sub_job(sub_job, location)


@hookimpl
def ct_register_commands(app: cyclopts.App) -> None:
    app.command(
        "ct_router_replay.cli:app",
        name="router-replay",
        help="Size, bootstrap and discard MoE router replay (plan, bootstrap, discard).",
    )
