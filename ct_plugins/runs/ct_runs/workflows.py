"""The DBOS workflows of the runs service: a run, and a dataset build.

DBOS records each step's output in its system database; after a crash (of the process, or of a
worker machine whose runs another worker recovers) the workflow is executed again from the top,
completed steps return their recorded outputs, and the step that was in progress runs again.
That is why a training segment is written to be safe to run twice (ct_runs.engine explains how).

The workflow functions are registered at import time, as DBOS requires; they reach the running
service through :func:`current`, set by ct_runs.service before DBOS is launched. Values DBOS
stores are JSON (the service configures DBOS's portable JSON serializer): no pickle.
"""

from __future__ import annotations

import logging
import traceback
from typing import TYPE_CHECKING, Any, Protocol

from dbos import DBOS

if TYPE_CHECKING:
    from ct_runs.engine import Engine

log = logging.getLogger("ct_runs.workflows")

#: The queue runs wait on; its global concurrency bounds how many runs hold GPUs at once.
RUNS_QUEUE = "ct-runs"
#: Dataset builds have a queue of their own, so a long build never waits behind a long run.
DATASETS_QUEUE = "ct-datasets"

#: The registered names of the two workflows (what DBOS's client enqueues by name).
RUN_WORKFLOW = "ct_runs.run"
DATASET_WORKFLOW = "ct_runs.dataset"


class WorkflowHost(Protocol):
    """What the workflows reach of the running service (ct_runs.service.RunsService), declared here
    so that this module does not import the service that imports it."""

    engine: Engine

    def build_dataset(self, dataset_id: str) -> str: ...

    def notify_completed(self, run_id: str, *, by: str = "workflow") -> list[dict[str, Any]]: ...


_service: WorkflowHost | None = None


def install(service: WorkflowHost | None) -> None:
    global _service
    _service = service


def current() -> WorkflowHost:
    if _service is None:
        raise RuntimeError("the runs service is not running in this process")
    return _service


# --- a run ------------------------------------------------------------------------------------------


@DBOS.step(name="ct_runs.mark_running")
def mark_running_step(run_id: str) -> bool:
    return current().engine.mark_running(run_id)


@DBOS.step(name="ct_runs.segment")
def segment_step(run_id: str) -> dict[str, Any]:
    from ct_runs.engine import RunFailed

    try:
        return current().engine.run_segment(run_id)
    except RunFailed as exc:
        return {"done": True, "failed": str(exc)}
    except Exception as exc:
        log.error("run %s: segment failed:\n%s", run_id, traceback.format_exc())
        return {"done": True, "failed": f"{type(exc).__name__}: {exc}"}


@DBOS.step(name="ct_runs.finalize")
def finalize_step(run_id: str, outcome: str, error: str | None) -> dict[str, Any]:
    return current().engine.finalize(run_id, outcome, error, by="workflow")


@DBOS.step(name="ct_runs.notify")
def notify_step(run_id: str) -> list[dict[str, Any]]:
    return current().notify_completed(run_id, by="workflow")


@DBOS.workflow(name=RUN_WORKFLOW)
def run_workflow(run_id: str) -> str:
    """queued → running → segments until done → finalize → webhook; returns the final status."""
    if not mark_running_step(run_id):
        outcome, error = "cancelled", None
    else:
        outcome, error = "succeeded", None
        while True:
            result = segment_step(run_id)
            if result.get("failed"):
                outcome, error = "failed", str(result["failed"])
                break
            if result.get("done"):
                outcome = "cancelled" if result.get("cancelled") else "succeeded"
                break
            if result.get("retry_after_s"):
                DBOS.sleep(float(result["retry_after_s"]))
    final = finalize_step(run_id, outcome, error)
    notify_step(run_id)
    return str(final.get("status", outcome))


# --- a dataset build ----------------------------------------------------------------------------------


@DBOS.step(name="ct_runs.build_dataset")
def build_dataset_step(dataset_id: str) -> str:
    return current().build_dataset(dataset_id)


@DBOS.workflow(name=DATASET_WORKFLOW)
def dataset_workflow(dataset_id: str) -> str:
    return build_dataset_step(dataset_id)
