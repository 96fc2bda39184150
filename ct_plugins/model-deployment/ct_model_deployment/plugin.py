"""The model-deployment plugin's hooks: the `ct model-deployment` command group, and the deployment
methods of an SDK client.

Registered under the entry-point group `ct` as `model-deployment`. The group is named by import
path, so `ct --help` lists it without importing the commands; the SDK methods are imported when a
client first asks for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts

    from ct_model_deployment.sdk import ModelDeployments

COMMAND_NAME = "model-deployment"
COMMAND_PATH = "ct_model_deployment.cli:app"
COMMAND_HELP = "Create, watch, call and drop OpenAI-compatible model deployments."


@hookimpl
def ct_register_commands(app: cyclopts.App) -> None:
    app.command(COMMAND_PATH, name=COMMAND_NAME, help=COMMAND_HELP)


@hookimpl
def ct_model_deployments(client: Any) -> ModelDeployments:
    """`client.model_deployments` and the client's `*_model_deployment*` methods."""
    from ct_model_deployment.sdk import ModelDeployments

    return ModelDeployments(client)
