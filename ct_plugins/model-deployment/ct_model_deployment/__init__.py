"""ct plugin `model-deployment`: ephemeral OpenAI-compatible endpoints (docs/model-deployments.md).

`spec` checks a deployment spec and turns it into a create-job body, `records` reads a job back as
deployment metadata, `sdk` holds the client-side methods (`ModelDeployments`, reachable as
`model_deployments(client)`), `cli` is the `ct model-deployment` command group and `plugin`
registers it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ct_model_deployment.errors import (
        MalformedDeploymentWarning,
        ModelDeploymentError,
        ModelDeploymentWaitError,
        ModelDeploymentWaitTimeout,
    )
    from ct_model_deployment.sdk import ModelDeployments, model_deployments

# Loaded on first use: `ct --help` imports this package (for its plugin module) and needs none of it.
_EXPORTS = {
    "MalformedDeploymentWarning": "ct_model_deployment.errors",
    "ModelDeploymentError": "ct_model_deployment.errors",
    "ModelDeploymentWaitError": "ct_model_deployment.errors",
    "ModelDeploymentWaitTimeout": "ct_model_deployment.errors",
    "ModelDeployments": "ct_model_deployment.sdk",
    "model_deployments": "ct_model_deployment.sdk",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "MalformedDeploymentWarning",
    "ModelDeploymentError",
    "ModelDeploymentWaitError",
    "ModelDeploymentWaitTimeout",
    "ModelDeployments",
    "model_deployments",
]
