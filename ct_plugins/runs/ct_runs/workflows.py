"""The DBOS workflows of the runs service: a run, a dataset build, and the registration of a
cancelled run's model.

DBOS records each step's output in its system database; after a crash (of the process, or of a
worker machine whose runs another worker recovers) the workflow is executed again from the top,
completed steps return their recorded outputs, and the step that was in progress runs again.
That is why a training segment is written to be safe to run twice (ct_runs.training explains how).

The workflows are methods of :class:`RunsWorkflows`, a DBOS configured instance: DBOS records the
instance's class and name with every workflow it starts, and hands the registered instance back
as ``self`` when it executes or recovers one, so a step reaches the running service as
``self.host``. The service makes its instance before DBOS is launched (DBOS requires it), one per
process, as DBOS itself is; every worker names it ``INSTANCE_NAME``, so any of them can recover
any run. Values DBOS stores are JSON (the service configures DBOS's portable JSON serializer): no
pickle.
"""

from __future__ import annotations

import logging
import traceback
from typing import TYPE_CHECKING, Any, Protocol

from dbos import DBOS, DBOSConfiguredInstance

if TYPE_CHECKING:
    from ct_runs.engine import Engine

log = logging.getLogger("ct_runs.workflows")

#: The queue runs wait on; its global concurrency bounds how many runs hold GPUs at once.
RUNS_QUEUE = "ct-runs"
#: Dataset builds have a queue of their own, so a long build never waits behind a long run.
DATASETS_QUEUE = "ct-datasets"
#: Registrations of cancelled runs' models too: the request that asked for one waits on it.
REGISTER_QUEUE = "ct-registrations"

#: The registered names of the two workflows (what DBOS's client enqueues by name), and the class
#: and instance names DBOS records with them.
RUN_WORKFLOW = "ct_runs.run"
DATASET_WORKFLOW = "ct_runs.dataset"
REGISTER_WORKFLOW = "ct_runs.register"
#: The queue each workflow waits on.
QUEUE_OF = {RUN_WORKFLOW: RUNS_QUEUE, DATASET_WORKFLOW: DATASETS_QUEUE, REGISTER_WORKFLOW: REGISTER_QUEUE}
WORKFLOWS_CLASS = "ct_runs.RunsWorkflows"
INSTANCE_NAME = "runs-service"


class WorkflowHost(Protocol):
    """What the workflows reach of the running service (ct_runs.service.RunsService), declared here
    so that this module does not import the service that imports it."""

    engine: Engine

    def build_dataset(self, dataset_id: str) -> str: ...

    def notify_completed(self, run_id: str, *, by: str = "workflow") -> list[dict[str, Any]]: ...


@DBOS.dbos_class(WORKFLOWS_CLASS)
class RunsWorkflows(DBOSConfiguredInstance):
    """The service's workflows and their steps, bound to the service that runs them."""

    def __init__(self, host: WorkflowHost) -> None:
        self.host = host
        super().__init__(INSTANCE_NAME)

    # --- a run ------------------------------------------------------------------------------------

    @DBOS.step(name="ct_runs.mark_running")
    def mark_running_step(self, run_id: str) -> bool:
        return self.host.engine.mark_running(run_id)

    @DBOS.step(name="ct_runs.segment")
    def segment_step(self, run_id: str) -> dict[str, Any]:
        from ct_runs.lifecycle import RunFailed

        try:
            return self.host.engine.run_segment(run_id)
        except RunFailed as exc:
            return {"done": True, "failed": str(exc)}
        except Exception as exc:
            log.error("run %s: segment failed:\n%s", run_id, traceback.format_exc())
            return {"done": True, "failed": f"{type(exc).__name__}: {exc}"}

    @DBOS.step(name="ct_runs.finalize")
    def finalize_step(self, run_id: str, outcome: str, error: str | None) -> dict[str, Any]:
        return self.host.engine.finalize(run_id, outcome, error, by="workflow")

    @DBOS.step(name="ct_runs.notify")
    def notify_step(self, run_id: str) -> list[dict[str, Any]]:
        return self.host.notify_completed(run_id, by="workflow")

    @DBOS.workflow(name=RUN_WORKFLOW)
    def run_workflow(self, run_id: str) -> str:
        """queued → running → segments until done → finalize → webhook; returns the final status."""
        if not self.mark_running_step(run_id):
            outcome, error = "cancelled", None
        else:
            outcome, error = "succeeded", None
            while True:
                result = self.segment_step(run_id)
                if result.get("failed"):
                    outcome, error = "failed", str(result["failed"])
                    break
                if result.get("done"):
                    outcome = "cancelled" if result.get("cancelled") else "succeeded"
                    break
                if result.get("retry_after_s"):
                    DBOS.sleep(float(result["retry_after_s"]))
        final = self.finalize_step(run_id, outcome, error)
        self.notify_step(run_id)
        return str(final.get("status", outcome))

    # --- a dataset build ------------------------------------------------------------------------------

    @DBOS.step(name="ct_runs.build_dataset")
    def build_dataset_step(self, dataset_id: str) -> str:
        return self.host.build_dataset(dataset_id)

    @DBOS.workflow(name=DATASET_WORKFLOW)
    def dataset_workflow(self, dataset_id: str) -> str:
        return self.build_dataset_step(dataset_id)

    # --- the registration of a cancelled run's model ----------------------------------------------

    @DBOS.step(name="ct_runs.save_model")
    def save_model_step(self, run_id: str) -> dict[str, Any]:
        return self.host.engine.save_cancelled(run_id)

    @DBOS.step(name="ct_runs.record_model")
    def record_model_step(self, run_id: str, model: dict[str, Any]) -> dict[str, Any]:
        return self.host.engine.record_cancelled(run_id, model)

    @DBOS.workflow(name=REGISTER_WORKFLOW)
    def register_workflow(self, run_id: str) -> dict[str, Any]:
        """Export the cancelled run's best checkpoint, then register it: ``{"model", "created"}``,
        or ``{"refused": error body}``. A crash between or inside the steps is finished by DBOS's
        recovery: the export recorded is registered once (ct_runs.finalize)."""
        saved = self.save_model_step(run_id)
        if "saved" not in saved:
            return saved
        return self.record_model_step(run_id, saved["saved"])
