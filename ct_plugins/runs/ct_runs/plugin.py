"""The runs plugin's hooks: the `ct datasets` and `ct runs` command groups, and the runs service
inside `ct local serve`.

Registered under the entry-point group `ct` as `runs`. The command groups are named by import
path, so `ct --help` lists them without importing DBOS or the service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts

DATASETS_COMMAND = (
    "ct_runs.cli:datasets_app",
    "datasets",
    "Build fingerprinted, leakage-checked datasets for runs.",
)
RUNS_COMMAND = (
    "ct_runs.cli:runs_app",
    "runs",
    "Start, watch, plot and cancel managed training runs; serve the runs service.",
)


@hookimpl
def ct_register_commands(app: cyclopts.App) -> None:
    for path, name, help_text in (DATASETS_COMMAND, RUNS_COMMAND):
        app.command(path, name=name, help=help_text)


@hookimpl
def ct_local_services(state_dir: str, settings: dict[str, Any]) -> Any:
    from ct_runs.service import embedded_service

    return embedded_service(state_dir, settings)
