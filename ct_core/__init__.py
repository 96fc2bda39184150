"""ct_core: the hand-written Cortex Training SDK.

Names are resolved lazily so that `import ct_core` stays cheap: it imports neither torch,
transformers nor snowflake.connector.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: The one place the version is written: the build reads it (pyproject.toml, hatch's dynamic version),
#: and `ct --version` prints it.
from ct_core.version import __version__ as __version__

_EXPORTS = {
    "CortexTrainingClient": "ct_core.client",
    "RoleClients": "ct_core.role_clients",
    "SubJobConfig": "ct_core.config.typed",
    "TrainingConfig": "ct_core.config.typed",
    "InferenceConfig": "ct_core.config.typed",
    "Hardware": "ct_core.config.typed",
    "JobType": "ct_core.config.typed",
    "CTError": "ct_core.errors",
    "WireError": "ct_core.errors",
}

__all__ = [
    "CTError",
    "CortexTrainingClient",
    "Hardware",
    "InferenceConfig",
    "JobType",
    "RoleClients",
    "SubJobConfig",
    "TrainingConfig",
    "WireError",
    "wire",
]

if TYPE_CHECKING:
    from ct_core import wire
    from ct_core.client import CortexTrainingClient
    from ct_core.config.typed import Hardware, InferenceConfig, JobType, SubJobConfig, TrainingConfig
    from ct_core.errors import CTError, WireError
    from ct_core.role_clients import RoleClients


def __getattr__(name: str) -> Any:
    if name == "wire":
        return importlib.import_module("ct_core.wire")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ct_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
