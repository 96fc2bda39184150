"""The `ct hello` command group; imported only when one of its commands runs."""

from __future__ import annotations

from typing import Annotated

from cyclopts import App, Parameter

from ct_cli import context, output
from ct_hello import MAX_GPUS_ENV, max_gpus

app = App(name="hello", help="Example plugin commands: greet, policy.")


@app.command
def greet(*, name: Annotated[str, Parameter(help="Who to greet.")] = "world") -> None:
    """Print a greeting as JSON."""
    output.emit({"greeting": f"hello, {name}"})


@app.command
def policy() -> None:
    """Print the GPU cap this plugin enforces on every create path."""
    output.emit({"max_gpus_per_sub_job": max_gpus(), "set_with": MAX_GPUS_ENV})


@app.command
def jobs() -> None:
    """Count the jobs of the configured endpoint, by status (uses the configured connection)."""
    counts: dict[str, int] = {}
    for job in context.client().list_jobs():
        status = str(job.get("status", "unknown"))
        counts[status] = counts.get(status, 0) + 1
    output.emit({"jobs": sum(counts.values()), "by_status": dict(sorted(counts.items()))})
