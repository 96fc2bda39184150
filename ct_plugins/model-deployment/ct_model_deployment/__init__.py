"""ct plugin `model-deployment`: ephemeral OpenAI-compatible endpoints (rest-api §14, DEP-01..17).

`spec` checks a deployment spec and turns it into a create-job body, `records` reads a job back as
deployment metadata, `sdk` holds the client-side methods (`ModelDeployments`, reachable as
`model_deployments(client)`), `cli` is the `ct model-deployment` command group and `plugin`
registers it.
"""

from __future__ import annotations

from ct_model_deployment.errors import (
    ModelDeploymentError,
    ModelDeploymentWaitError,
    ModelDeploymentWaitTimeout,
)
from ct_model_deployment.sdk import ModelDeployments, model_deployments

__all__ = [
    "ModelDeploymentError",
    "ModelDeploymentWaitError",
    "ModelDeploymentWaitTimeout",
    "ModelDeployments",
    "model_deployments",
]
