"""The model-deployment plugin's hook: register the `ct model-deployment` command group.

Registered under the entry-point group `ct` as `model-deployment`. The group is named by import
path, so `ct --help` lists it without importing the commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts

COMMAND_NAME = "model-deployment"
COMMAND_PATH = "ct_model_deployment.cli:app"
COMMAND_HELP = "Create, watch, call and drop OpenAI-compatible model deployments."


@hookimpl
def ct_register_commands(app: cyclopts.App) -> None:
    app.command(COMMAND_PATH, name=COMMAND_NAME, help=COMMAND_HELP)
