"""ct-plugin-hello: the hook implementations `ct` finds through the `hello` entry point.

This module is imported on every `ct` start, so it stays tiny: it imports only the hook marker,
registers its command group by import path (the group module is imported when `ct hello ...`
runs, not for `ct --help`), and keeps its validator free of heavy imports.
"""

from __future__ import annotations

import os
from typing import Any

from ct_core.config.typed import normalize_job_type
from ct_core.hookspecs import hookimpl

#: Environment variable that sets the team's GPU cap per sub-job.
MAX_GPUS_ENV = "CT_HELLO_MAX_GPUS"
#: The cap when the variable is unset.
DEFAULT_MAX_GPUS = 8


def max_gpus() -> int:
    """The GPU cap per sub-job this plugin enforces."""
    raw = os.environ.get(MAX_GPUS_ENV, "").strip()
    return int(raw) if raw.isdigit() else DEFAULT_MAX_GPUS


@hookimpl
def ct_register_commands(app: Any) -> None:
    # By import path, with help= given here: a lazy group's own help is read only when it runs.
    app.command("ct_hello.cli:app", name="hello", help="Example plugin commands: greet, policy.")


@hookimpl
def ct_validate_sub_job(sub_job: dict[str, Any], location: str) -> list[str] | None:
    # The config block depends on the sub-job type; the core checks have already run. Read the
    # type with the core's helper: "TRAINING" and "job_type_training" are accepted spellings too.
    key = (
        "training_config" if normalize_job_type(sub_job.get("job_type")) == "training" else "inference_config"
    )
    config = sub_job.get(key)
    if not isinstance(config, dict):
        return None
    n_gpus = config.get("n_gpus")
    limit = max_gpus()
    if isinstance(n_gpus, int) and not isinstance(n_gpus, bool) and n_gpus > limit:
        return [f"{location}.{key}.n_gpus: ct-hello allows at most {limit} GPUs per sub-job, got {n_gpus}"]
    return None
