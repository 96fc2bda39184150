"""The runs service: its HTTP routes, DBOS set-up, worker heartbeats and recovery, completion hooks.

One :class:`RunsService` per process. It serves the REST routes of docs/runs.md (datasets, runs,
metrics, logs, cancel, registered models), keeps its records in ct_runs.store, and executes runs
and dataset builds as DBOS workflows (ct_runs.workflows) on two queues. The Cortex Training side
is reached through ct_core clients made by ``client_for(owner, database, schema)``.

Two ways to run it:

- inside ``ct local serve`` (:func:`embedded_service`, through the ``ct_local_services`` hook):
  SQLite under the server's state dir, callers checked by the server's own tokens, and jobs
  created on the server itself with a token of the caller's role;
- on its own (``ct runs serve``, ct_runs.serve): SQLite or a shared Postgres, several workers,
  callers checked against the service token.

Workers announce themselves in a heartbeat table; a worker silent for longer than
``WORKER_STALE_AFTER_S`` is claimed by one live worker, which hands the dead worker's pending
workflows back to the queue through DBOS's public API (``list_workflows`` by executor id, then
``resume_workflow``), where the queue's global concurrency still applies.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ct_core import RoleClients
from ct_core.constants import IDEMPOTENCY_KEY_HEADER
from ct_core.errors import ValidationError
from ct_core.fs import atomic_write
from ct_core.http.routes import route_of
from ct_core.runs import check_idempotency_key
from ct_runs import datasets as ds
from ct_runs import spec as run_spec
from ct_runs.engine import Engine, public_run
from ct_runs.errors import RunsRefusal, aborted, invalid_argument, not_found
from ct_runs.finalize import refuse_unregistrable, refuse_unresumable
from ct_runs.ids import is_id, new_id
from ct_runs.progress import Progress, new_state
from ct_runs.store import (
    IN_FLIGHT,
    TERMINAL,
    RunKey,
    StartedRun,
    Store,
    rfc3339,
    sqlite_url,
    workflow_id_of,
)

if TYPE_CHECKING:
    from ct_runs.workflows import RunsWorkflows

log = logging.getLogger("ct_runs.service")

#: A worker's heartbeat period, and how long a silent one is considered alive.
HEARTBEAT_S = 2.0
WORKER_STALE_AFTER_S = 12.0
#: The DBOS application name and version: fixed, so a restarted or another worker recovers the
#: workflows (DBOS recovers only workflows of its own version). Version 2: the workflows are methods
#: of a configured instance (ct_runs.workflows), which version 1's recorded workflows do not name.
APPLICATION_NAME = "ct-runs"
APPLICATION_VERSION = "ct-runs-2"
#: Largest dataset upload and run spec the routes read.
MAX_DATASET_BYTES = ds.MAX_SOURCE_BYTES
MAX_SPEC_BYTES = 1024 * 1024
LIST_LIMIT_MAX = 1000
#: How often a registration's result is read while a caller waits on it; and how long a caller
#: waits before it is asked to ask again (well within the SDK's read timeout).
REGISTER_POLL_S = 0.1
#: How often a worker polls the registration queue, where a front that executes nothing puts them
#: (a process that executes workflows starts its callers' registrations at once). Each poll of a
#: DBOS queue is a few SQL statements: polled ten times a second it cost an idle server 4 % of a core.
REGISTER_QUEUE_POLL_S = 1.0
REGISTER_WAIT_S = 300.0
#: How long a stopping process waits for DBOS to shut down before it lets go (see stop()).
DBOS_STOP_WAIT_S = 0.3
LOG_LIMIT_MAX = 10_000
#: Seconds a caller is asked to wait (Retry-After of a 503 `unavailable`) while the service starts:
#: DBOS and the store take a second or a few to come up.
STARTING_RETRY_AFTER_S = 1

Authenticate = Callable[[Request], str]
#: The polling schedule of the clients that drive a run's jobs: each fwd-bwd and step is waited
#: on, and they finish in milliseconds on a fast server (the SDK's default first wait is 0.5 s).
TRAINING_POLL_INTERVAL_S = 0.005
TRAINING_POLL_MAX_INTERVAL_S = 0.25
#: Inside ct local serve a poll is a request to the service's own process: each one costs the
#: interpreter the training shares twice (client and server side). With two steps in flight a
#: result is needed only when the next step but one is sent, so the first poll waits longer.
EMBEDDED_POLL_INTERVAL_S = 0.02


#: How a boolean query parameter may be spelt (any case): what JSON and form encoders write.
BOOLEAN_SPELLINGS = {"true": True, "1": True, "false": False, "0": False}


def _operation_route(operation_id: str, endpoint: Callable[[Request], Awaitable[Response]]) -> Route:
    """The route of the spec's ``operation_id``, answered by ``endpoint`` and named by the operationId."""
    method, path = route_of(operation_id)
    return Route(path, endpoint, methods=[method], name=operation_id)


class RunsService:
    """The runs service of one process (HTTP routes and/or workflow execution)."""

    def __init__(
        self,
        *,
        state_dir: Path,
        client_for: Callable[[str, str, str], Any],
        authenticate: Authenticate,
        database_url: str | None = None,
        concurrency: int = 1,
        executor_id: str | None = None,
        webhook_urls: list[str] | None = None,
        webhook_secret: str | None = None,
        execute: bool = True,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.client_for = client_for
        self.authenticate = authenticate
        self.database_url = database_url or sqlite_url(self.state_dir / "runs.sqlite3")
        self.system_database_url = database_url or sqlite_url(self.state_dir / "dbos.sqlite3")
        self.concurrency = concurrency
        self.executor_id = executor_id or self._persistent_executor_id()
        self.webhook_urls = list(webhook_urls or [])
        self.webhook_secret = webhook_secret
        self.execute = execute
        self.store: Store | None = None
        self.engine: Engine = None  # type: ignore[assignment]  # set by start(), before any workflow runs
        self.started = False
        self.start_error: str | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._insert_lock = threading.Lock()
        self._dbos_client: Any = None
        self._workflows: RunsWorkflows | None = None

    def status(self) -> str:
        """Where the service is: "starting", "up", or "failed: <why it did not start>"."""
        if self.start_error is not None:
            return f"failed: {self.start_error}"
        return "up" if self.started and self.store is not None else "starting"

    def _persistent_executor_id(self) -> str:
        path = self.state_dir / "executor-id"
        if path.is_file():
            text = path.read_text().strip()
            if text:
                return text
        value = "ct-runs-" + secrets.token_hex(6)
        atomic_write(path, value, mode=0o600)
        return value

    # --- start and stop -------------------------------------------------------------------------

    def start(self) -> None:
        from dbos import DBOS, DBOSClient, DBOSPortableJSONSerializer

        from ct_runs import workflows

        self.store = Store(self.database_url)
        self.engine = Engine(self.store, self.client_for, executor_id=self.executor_id)
        logging.getLogger("httpx").setLevel(logging.WARNING)  # its INFO lines carry webhook URLs
        if not self.execute:
            # A front that only serves HTTP: it enqueues and cancels through DBOS's client and
            # executes nothing; the workers sharing its database run the workflows.
            self._dbos_client = DBOSClient(
                system_database_url=self.system_database_url,
                serializer=DBOSPortableJSONSerializer(),
                application_name=APPLICATION_NAME,
            )
            self.started = True
            return
        # DBOS hands this instance to every workflow it executes or recovers here (see
        # ct_runs.workflows); it must exist before DBOS is launched.
        self._workflows = workflows.RunsWorkflows(self)
        DBOS(
            config={
                "name": APPLICATION_NAME,
                "system_database_url": self.system_database_url,
                "application_version": APPLICATION_VERSION,
                "executor_id": self.executor_id,
                "serializer": DBOSPortableJSONSerializer(),
                "log_level": "WARNING",
                "run_migrations": True,
            }
        )
        DBOS.launch()
        DBOS.register_queue(
            workflows.RUNS_QUEUE, global_concurrency=self.concurrency, polling_interval_sec=0.5
        )
        DBOS.register_queue(workflows.DATASETS_QUEUE, worker_concurrency=1, polling_interval_sec=0.5)
        DBOS.register_queue(workflows.REGISTER_QUEUE, polling_interval_sec=REGISTER_QUEUE_POLL_S)
        self.started = True
        self.store.heartbeat(self.executor_id)
        self._sweep_unscheduled()
        thread = threading.Thread(target=self._watch_workers, name="ct-runs-workers", daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        if self._dbos_client is not None:
            self._dbos_client.destroy()
            self._dbos_client = None
        elif self.started:
            from dbos import DBOS

            # DBOS takes about a second to wind its threads down. A process that stops need not
            # wait for that: whatever a workflow was doing is recovered from the system database
            # at the next start, as after a crash. So wait a moment, then let the process go.
            closer = threading.Thread(
                target=DBOS.destroy, kwargs={"workflow_completion_timeout_sec": 0}, daemon=True
            )
            closer.start()
            closer.join(timeout=DBOS_STOP_WAIT_S)
        self.started = False
        if self.store is not None:
            self.store.close()

    # --- the workflow engine: in this process, or through DBOS's client -------------------------

    def _enqueue(self, queue: str, workflow: str, workflow_id: str, argument: str) -> None:
        from dbos import SetWorkflowID

        from ct_runs import workflows

        if self._dbos_client is not None:
            self._dbos_client.enqueue(
                {
                    "queue_name": queue,
                    "workflow_name": workflow,
                    "workflow_id": workflow_id,
                    "app_version": APPLICATION_VERSION,
                    "application_name": APPLICATION_NAME,
                    "class_name": workflows.WORKFLOWS_CLASS,
                    "instance_name": workflows.INSTANCE_NAME,
                },
                argument,
            )
            return
        assert self._workflows is not None  # made by start() before DBOS was launched
        function = {
            workflows.RUN_WORKFLOW: self._workflows.run_workflow,
            workflows.DATASET_WORKFLOW: self._workflows.dataset_workflow,
            workflows.REGISTER_WORKFLOW: self._workflows.register_workflow,
        }[workflow]
        with SetWorkflowID(workflow_id):
            _queue(queue).enqueue(function, argument)

    def _enqueue_run(self, run_id: str, workflow_id: str | None = None) -> None:
        """Enqueue the run's workflow: its first one is named by the run id, the one of each resume
        by ``workflow_id`` (``run_….resume-N``, a DBOS workflow id runs once)."""
        from ct_runs import workflows

        self._enqueue(workflows.RUNS_QUEUE, workflows.RUN_WORKFLOW, workflow_id or run_id, run_id)

    def _enqueue_dataset(self, dataset_id: str, workflow_id: str | None = None) -> None:
        """Enqueue the build's workflow: named by the dataset id, or by ``workflow_id`` when an
        upgrade carried the build over (see _carry_over_dataset)."""
        from ct_runs import workflows

        self._enqueue(
            workflows.DATASETS_QUEUE, workflows.DATASET_WORKFLOW, workflow_id or dataset_id, dataset_id
        )

    def _cancel_workflow(self, workflow_id: str) -> None:
        if self._dbos_client is not None:
            self._dbos_client.cancel_workflow(workflow_id)
            return
        from dbos import DBOS

        DBOS.cancel_workflow(workflow_id)

    def _sweep_unscheduled(self) -> None:
        """At start-up: enqueue the runs and builds whose workflow was never enqueued (a crash right
        after the insert), and carry over those an older version of the service left in flight."""
        import sqlalchemy as sa
        from dbos import DBOS

        from ct_runs import store as tables

        assert self.store is not None
        with self.store.tx() as c:
            run_ids = [
                (r.run_id, workflow_id_of(r.run_id, json.loads(r.state)))
                for r in c.execute(
                    sa.select(tables.runs.c.run_id, tables.runs.c.state).where(
                        tables.runs.c.status.in_(IN_FLIGHT)
                    )
                )
            ]
            dataset_ids = [
                (r.dataset_id, dataset_workflow_id(r.dataset_id, r.summary))
                for r in c.execute(
                    sa.select(tables.datasets.c.dataset_id, tables.datasets.c.summary).where(
                        tables.datasets.c.status == "building"
                    )
                )
            ]
        live = self.store.live_workers(WORKER_STALE_AFTER_S)
        for run_id, workflow_id in run_ids:
            status = DBOS.get_workflow_status(workflow_id)
            if status is None:
                self._enqueue_run(run_id, workflow_id)
            elif self._stranded(status, live):
                self._carry_over_quietly(self._carry_over_run, run_id, status)
        for dataset_id, workflow_id in dataset_ids:
            status = DBOS.get_workflow_status(workflow_id)
            if status is None:
                self._enqueue_dataset(dataset_id, workflow_id)
            elif self._stranded(status, live):
                self._carry_over_quietly(self._carry_over_dataset, dataset_id, status)

    @staticmethod
    def _carry_over_quietly(carry_over: Callable[[str, Any], None], subject: str, status: Any) -> None:
        """One carry-over that fails is logged, and the service starts with the others done: the
        next start tries it again (the run's or build's workflow is still the old one)."""
        try:
            carry_over(subject, status)
        except Exception:
            log.error(
                "carrying %s over to %s failed:\n%s", subject, APPLICATION_VERSION, traceback.format_exc()
            )

    def _stranded(self, status: Any, live: set[str]) -> bool:
        """Whether a run's or build's current workflow was left by another application version of
        the service where no worker will ever execute it: DBOS executes, dequeues and recovers only
        the workflows of its own version. Queued (or cancelled by a carry-over that stopped before
        it recorded its new workflow), or started by a worker that is gone: this process under its
        former version, or one whose heartbeat stopped. A worker of that version still alive
        carries its own workflow on; when it dies, the one that claims it carries the run over."""
        if status.app_version is None or status.app_version == APPLICATION_VERSION:
            return False
        if status.status in ("ENQUEUED", "CANCELLED"):
            return True
        if status.status != "PENDING":
            return False
        return status.executor_id == self.executor_id or status.executor_id not in live

    def _carry_over_run(self, run_id: str, status: Any) -> None:
        """Carry a run that an older version left in flight on under a workflow of this version, the
        way a resume does: its workflow is cancelled, a new one (``run_….resume-N``) is recorded in
        the run's state and enqueued, and the run goes on from its committed checkpoint (from its
        start when it has none), through the path a restart after a crash takes."""
        assert self.store is not None
        row = self.store.run_row(run_id)
        if row is None or row.status not in IN_FLIGHT:
            return
        if workflow_id_of(run_id, json.loads(row.state)) != status.workflow_id:
            return  # another worker carried it over meanwhile
        try:
            self._cancel_workflow(status.workflow_id)
        except Exception:
            log.info("cancelling workflow %s:\n%s", status.workflow_id, traceback.format_exc())
        progress = Progress.load(row.state)
        workflow_id = _next_workflow(run_id, progress)
        checkpoint = progress.resume
        where = (
            f"from checkpoint {checkpoint['checkpoint_id']} at step {checkpoint['step']}"
            if checkpoint is not None
            else "from its start"
        )
        message = (
            f"the service was upgraded ({status.app_version} to {APPLICATION_VERSION}) while the run "
            f"was {row.status}: its workflow {status.workflow_id} is cancelled and {workflow_id} "
            f"carries it on {where}"
        )
        entry = (
            time.time(),
            "WARNING",
            message,
            {
                "event": "upgraded",
                "step": progress.committed_step,
                "checkpoint_id": checkpoint["checkpoint_id"] if checkpoint is not None else None,
                "from_version": status.app_version,
                "to_version": APPLICATION_VERSION,
                "workflow_id": workflow_id,
                "worker": self.executor_id,
            },
        )
        if not self.store.write_state(
            run_id, progress.to_dict(), log_entries=[entry], only_if_state=row.state, only_if_status=IN_FLIGHT
        ):
            return  # another worker carried it over first, or the run changed meanwhile
        self._enqueue_run(run_id, workflow_id)
        log.warning("run %s: %s", run_id, message)

    def _carry_over_dataset(self, dataset_id: str, status: Any) -> None:
        """Build again, under a workflow of this version, a dataset an older version left building
        (a build is a single step that rewrites its outcome whole)."""
        assert self.store is not None
        row = self.store.dataset_row(dataset_id)
        if row is None or row.status != "building":
            return
        if dataset_workflow_id(dataset_id, row.summary) != status.workflow_id:
            return
        try:
            self._cancel_workflow(status.workflow_id)
        except Exception:
            log.info("cancelling workflow %s:\n%s", status.workflow_id, traceback.format_exc())
        workflow_id = f"{dataset_id}.{APPLICATION_VERSION}"
        if not self.store.set_dataset_workflow(dataset_id, workflow_id, only_if_summary=row.summary):
            return
        self._enqueue_dataset(dataset_id, workflow_id)
        log.warning(
            "dataset %s: the service was upgraded (%s to %s) while it was building: its workflow %s is "
            "cancelled and %s builds it again",
            dataset_id,
            status.app_version,
            APPLICATION_VERSION,
            status.workflow_id,
            workflow_id,
        )

    def _carry_over(self, status: Any) -> None:
        """Carry over the run or build of a workflow another version left (see _stranded)."""
        from ct_runs import workflows

        subject = str(status.workflow_id).split(".", 1)[0]
        if status.name == workflows.DATASET_WORKFLOW:
            self._carry_over_dataset(subject, status)
        elif status.name == workflows.RUN_WORKFLOW:
            self._carry_over_run(subject, status)

    def _watch_workers(self) -> None:
        from dbos import DBOS

        from ct_runs import workflows

        assert self.store is not None
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self.store.heartbeat(self.executor_id)
                for dead in self.store.claim_dead_workers(self.executor_id, WORKER_STALE_AFTER_S):
                    pending = DBOS.list_workflows(
                        status="PENDING", executor_id=dead, load_input=False, load_output=False
                    )
                    for wf in pending:
                        if wf.app_version not in (None, APPLICATION_VERSION):
                            self._carry_over(wf)
                            continue
                        queue = workflows.QUEUE_OF.get(wf.name, workflows.DATASETS_QUEUE)
                        DBOS.resume_workflow(wf.workflow_id, queue_name=queue)
                    if pending:
                        log.warning(
                            "worker %s stopped answering; %d of its workflows go back to the queue",
                            dead,
                            len(pending),
                        )
            except Exception:
                log.warning("worker heartbeat failed:\n%s", traceback.format_exc())

    # --- work done inside workflows -------------------------------------------------------------

    def build_dataset(self, dataset_id: str) -> str:
        assert self.store is not None
        row = self.store.dataset_row(dataset_id)
        if row is None:
            return "missing"
        summary = json.loads(row.summary)
        if summary["status"] != "building":
            return str(summary["status"])
        fields: dict[str, Any] = {
            k: tuple(v) if k == "label_fields" else v for k, v in json.loads(row.options).items()
        }
        options = ds.DatasetOptions(**fields)
        try:
            build = ds.build_dataset(bytes(row.source or b""), options)
        except RunsRefusal as exc:
            summary.update(status="failed", error={"code": exc.code, "message": exc.message})
            self.store.finish_dataset(dataset_id, summary, None)
            return "failed"
        summary.update(build.summary())
        summary.update(status="succeeded", error=None, finished_at=rfc3339(time.time()))
        self.store.finish_dataset(dataset_id, summary, {"train": build.train, "validation": build.validation})
        return "succeeded"

    def notify_completed(self, run_id: str, *, by: str = "workflow") -> list[dict[str, Any]]:
        """Send the run's completion webhook, when ``by`` (the workflow, or the cancel route) is
        the finalizer that ended the run: of two finalizers that raced, only the winner sends it."""
        assert self.store is not None
        if not self.webhook_urls:
            return []
        from ct_runs import webhooks

        row = self.store.run_row(run_id)
        finalizer = Progress.load(row.state).finalized_by
        if finalizer is not None and finalizer != by:
            return []
        run = public_run(row)
        delivery_id = f"{run_id}.completed"
        body = webhooks.body_for(run)
        results = []
        for url in self.webhook_urls:
            if self.store.delivered(delivery_id, url):
                continue
            result = webhooks.deliver(url, body, secret=self.webhook_secret, delivery_id=delivery_id)
            self.store.record_delivery(
                delivery_id,
                url,
                delivered=result.delivered,
                attempts=result.attempts,
                status_code=result.status_code,
                error=result.error,
            )
            severity = "INFO" if result.delivered else "WARNING"
            what = (
                "delivered" if result.delivered else f"not delivered ({result.error or result.status_code})"
            )
            self.store.add_logs(
                run_id,
                [
                    (
                        time.time(),
                        severity,
                        f"run.completed webhook to {url} {what} after {result.attempts} attempt(s)",
                        {"event": "webhook"},
                    )
                ],
            )
            results.append({"url": url, "delivered": result.delivered, "attempts": result.attempts})
        return results

    # --- HTTP -----------------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        """The service's routes, each bound to its operation of the REST contract by operationId
        (method and path from the route table generated out of openapi/cortex-training.yaml)."""
        return [
            # The build reads its own query (label_field may repeat): ct_runs.datasets checks it.
            _operation_route("buildDataset", self._h(self.post_dataset, None)),
            _operation_route("getDataset", self._h(self.get_dataset)),
            _operation_route("startRun", self._h(self.post_run)),
            _operation_route("listRuns", self._h(self.list_runs, ("status", "limit"))),
            _operation_route("cancelRun", self._h(self.cancel_run)),
            _operation_route("getRun", self._h(self.get_run)),
            _operation_route("getRunMetrics", self._h(self.run_metrics, ("after_step",))),
            _operation_route("getRunLogs", self._h(self.run_logs, ("structured", "after", "limit"))),
            _operation_route("resumeRun", self._h(self.resume_run)),
            _operation_route("registerRunModel", self._h(self.register_model)),
            _operation_route("getRegisteredModel", self._h(self.get_model)),
            _operation_route("listRegisteredModels", self._h(self.list_models, ("run_id", "limit"))),
        ]

    def _h(
        self, handler: Callable[[Request, str], Awaitable[Response]], query: tuple[str, ...] | None = ()
    ) -> Callable[[Request], Awaitable[Response]]:
        """The route of `handler`: the caller checked, the service up, and the query string holding
        only the parameters in `query`, each once (None: the handler reads its query itself)."""

        async def route(request: Request) -> Response:
            try:
                owner = self.authenticate(request)
                if self.start_error is not None:
                    raise RunsRefusal("internal", f"the runs service did not start: {self.start_error}")
                if not self.started or self.store is None:
                    raise RunsRefusal(
                        "unavailable",
                        "the runs service is starting; send the request again in a moment "
                        f"(Retry-After: {STARTING_RETRY_AFTER_S} s)",
                    )
                if query is not None:
                    _check_query(request, query)
                return await handler(request, owner)
            except RunsRefusal as exc:
                headers = {"retry-after": str(STARTING_RETRY_AFTER_S)} if exc.code == "unavailable" else None
                return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

        route.__name__ = handler.__name__
        return route

    @staticmethod
    def _where(request: Request) -> tuple[str, str]:
        return request.path_params["database"], request.path_params["schema"]

    def _owned(self, row: Any, request: Request, owner: str, what: str, ident: str) -> Any:
        database, schema = self._where(request)
        if (
            row is None
            or row.owner != owner
            or row.database.upper() != database.upper()
            or row.schema.upper() != schema.upper()
        ):
            raise not_found(f"{what} {ident} not found in {database}.{schema}")
        return row

    # datasets

    async def post_dataset(self, request: Request, owner: str) -> Response:
        # Every value as a list: the options refuse a parameter other than label_field given twice.
        query: dict[str, list[str]] = {}
        for key, value in request.query_params.multi_items():
            query.setdefault(key, []).append(value)
        options = ds.options_from_query(query)
        body = await request.body()
        if len(body) > MAX_DATASET_BYTES:
            raise invalid_argument(f"the dataset file is larger than {MAX_DATASET_BYTES} bytes", "body")
        if not body.strip():
            raise invalid_argument("the dataset file is empty: send JSONL rows as the request body", "body")
        database, schema = self._where(request)
        now = time.time()
        record: dict[str, Any] = {
            "dataset_id": new_id("ds"),
            "database": database,
            "schema": schema,
            "status": "building",
            "name": options.name,
            "created_ts": now,
            "created_at": rfc3339(now),
            "text_field": options.text_field,
            "label_fields": list(options.label_fields),
            "val_fraction": options.val_fraction,
            "seed": options.seed,
            "splits": None,
            "fingerprints": None,
            "labels": [],
            "violations": [],
            "error": None,
        }
        assert self.store is not None
        opts = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(options).items()}
        await run_in_threadpool(self.store.add_dataset, record, owner=owner, options=opts, source=body)
        await run_in_threadpool(self._enqueue_dataset, record["dataset_id"])
        return JSONResponse(_public_dataset(record), status_code=202)

    async def get_dataset(self, request: Request, owner: str) -> Response:
        dataset_id = request.path_params["dataset_id"]
        row = self._dataset_for(request, owner, dataset_id)
        return JSONResponse(_public_dataset(json.loads(row.summary)))

    def _named(self, request: Request, owner: str, ident: Any, kind: str) -> Any:
        """The dataset (``kind`` "ds") or registered model ("mdl") a spec names by id, when it is
        one of the caller's in this schema; None otherwise (the spec check then refuses the field)."""
        assert self.store is not None
        if not isinstance(ident, str) or not is_id(ident, kind):
            return None
        row = self.store.dataset_row(ident) if kind == "ds" else self.store.model_row(ident)
        try:
            return self._owned(row, request, owner, kind, ident)
        except RunsRefusal:
            return None

    def _dataset_for(self, request: Request, owner: str, dataset_id: str) -> Any:
        assert self.store is not None
        if not is_id(dataset_id, "ds"):
            raise not_found(
                f"dataset {dataset_id!r} not found: dataset ids look like ds_ followed by 26 characters"
            )
        return self._owned(self.store.dataset_row(dataset_id), request, owner, "dataset", dataset_id)

    # runs

    async def post_run(self, request: Request, owner: str) -> Response:
        body = await request.body()
        if len(body) > MAX_SPEC_BYTES:
            raise invalid_argument(f"the run spec is larger than {MAX_SPEC_BYTES} bytes")
        try:
            spec = json.loads(body or b"null")
        except ValueError as exc:
            raise invalid_argument(f"the run spec is not valid JSON: {exc}") from None
        if not isinstance(spec, dict):
            raise invalid_argument("the run spec must be a JSON object")
        dataset_id = spec.get("dataset_id")
        if dataset_id is None:
            raise invalid_argument("dataset_id is required: a succeeded dataset build's id", "dataset_id")
        if not isinstance(dataset_id, str):
            given = f"a {_json_type(dataset_id)}: {json.dumps(dataset_id)}"
            raise invalid_argument(f"dataset_id must be a string (a ds_ id), not {given}", "dataset_id")
        if not dataset_id:
            raise invalid_argument("dataset_id must not be empty: give a dataset build's id", "dataset_id")
        key = _run_key(request, spec)
        return await run_in_threadpool(self._start_run, request, owner, spec, dataset_id, key)

    def _start_run(
        self, request: Request, owner: str, spec: dict[str, Any], dataset_id: str, key: RunKey | None
    ) -> Response:
        assert self.store is not None
        database, schema = self._where(request)
        if key is not None:
            # A key seen before answers its run as it is now, without resolving the spec again
            # (the dataset may have changed meanwhile; the run the key started has not).
            seen = self.store.run_for_key(owner, database, schema, key.key)
            if seen is not None:
                return self._started(seen, key)
        row = self._dataset_for(request, owner, dataset_id)
        dataset = _public_dataset(json.loads(row.summary))
        validation = self._named(request, owner, spec.get("validation_dataset_id"), "ds")
        registered = self._named(request, owner, spec.get("model"), "mdl")
        validation_dataset = _public_dataset(json.loads(validation.summary)) if validation else None
        registered_model = _public_model(json.loads(registered.record)) if registered else None
        train_rows = (
            self.store.train_rows(dataset_id, separate_validation=validation is not None)
            if dataset["status"] == "succeeded"
            else []
        )
        resolved = run_spec.resolve_run(
            spec,
            dataset,
            train_rows,
            validation_dataset=validation_dataset,
            registered_model=registered_model,
            # The server's models: the run tokenizes with its model's tokenizer (ct_runs.tokenizers).
            served_models=self.client_for(owner, database, schema).list_models(),
        )
        now = time.time()
        labels_detail = [
            label for label in dataset.get("labels") or [] if label["label_id"] in set(resolved.label_ids)
        ]
        record = {
            "run_id": new_id("run"),
            "database": database,
            "schema": schema,
            "created_ts": now,
            "config_fingerprint": resolved.fingerprint,
            "config": resolved.config,
            "spec": resolved.spec,
            "dataset_id": dataset_id,
            "dataset_fingerprint": resolved.dataset_fingerprint,
            "model_config_tier": resolved.spec.get("model_config_tier", "S"),
            "model_name": resolved.model_name,
            "labels": list(resolved.label_ids),
            "label_fields": list(resolved.label_fields),
            "labels_detail": labels_detail,
            "seed": resolved.spec.get("seed", 0),
            "overrides": resolved.overrides,
            "trainer": resolved.trainer,
            "total_steps": resolved.total_steps,
            "steps_per_epoch": resolved.steps_per_epoch,
            "seq_len": resolved.seq_len,
            "plan": resolved.plan.to_dict(),
            "create_body": resolved.create_body,
            "model": resolved.model,
            "validation_dataset_id": resolved.validation_dataset_id,
            # A run that continues a registered model starts from that model's weights.
            "init_checkpoint": (
                {
                    "model_id": registered_model["model_id"],
                    "checkpoint_id": registered_model["checkpoint_id"],
                    "job_id": registered_model["job_id"],
                }
                if registered_model is not None and resolved.model == registered_model["model_id"]
                else None
            ),
        }
        with self._insert_lock:
            started = self.store.insert_run_unless_in_flight(record, new_state(), owner, key)
        if started.created:
            self._enqueue_run(started.run_id)
        return self._started(started, key)

    def _started(self, started: StartedRun, key: RunKey | None) -> Response:
        """The answer of a start: 201 and the new run, or 200 and the run that answers instead; a
        key first used with another request is refused, naming its run."""
        assert self.store is not None
        if key is not None and started.request_sha256 not in (None, key.request_sha256):
            raise RunsRefusal(
                "already_exists",
                f"idempotency key {key.key!r} already started run {started.run_id} with another spec; "
                "use a new key for a different run",
                field=IDEMPOTENCY_KEY_HEADER,
            )
        return JSONResponse(
            public_run(self.store.run_row(started.run_id)), status_code=201 if started.created else 200
        )

    async def list_runs(self, request: Request, owner: str) -> Response:
        assert self.store is not None
        status = request.query_params.get("status")
        if status is not None and status not in (*IN_FLIGHT, *TERMINAL):
            raise invalid_argument(f"status must be one of {', '.join((*IN_FLIGHT, *TERMINAL))}", "status")
        limit = _int_query(request, "limit", 100, 1, LIST_LIMIT_MAX)
        database, schema = self._where(request)
        rows = await run_in_threadpool(
            self.store.list_runs, database=database, schema=schema, owner=owner, status=status, limit=limit
        )
        return JSONResponse({"runs": [public_run(r) for r in rows]})

    def _run_for(self, request: Request, owner: str) -> Any:
        assert self.store is not None
        run_id = request.path_params["run_id"]
        if not is_id(run_id, "run"):
            raise not_found(f"run {run_id!r} not found: run ids look like run_ followed by 26 characters")
        return self._owned(self.store.run_row(run_id), request, owner, "run", run_id)

    async def get_run(self, request: Request, owner: str) -> Response:
        row = await run_in_threadpool(self._run_for, request, owner)
        return JSONResponse(public_run(row))

    async def cancel_run(self, request: Request, owner: str) -> Response:
        assert self.store is not None
        row = await run_in_threadpool(self._run_for, request, owner)
        status = await run_in_threadpool(self.store.request_cancel, row.run_id)
        if status == "cancelled" and row.status == "queued":
            await run_in_threadpool(self._cancel_queued, row.run_id)
        return JSONResponse(public_run(self.store.run_row(row.run_id)))

    def _cancel_queued(self, run_id: str) -> threading.Thread:
        """A queued run ends at once: its workflow is cancelled before it starts, and finalized.

        A worker may have picked the workflow up meanwhile and finalize the run too: one of the
        two ends it, and that one sends the webhook (here on the returned thread, or by the
        workflow's last step)."""
        assert self.store is not None and self.engine is not None
        row = self.store.run_row(run_id)
        try:
            self._cancel_workflow(workflow_id_of(run_id, json.loads(row.state)))
        except Exception:
            log.info("cancelling workflow %s:\n%s", run_id, traceback.format_exc())
        self.engine.finalize(run_id, "cancelled", by="cancel")
        thread = threading.Thread(target=self._notify_quietly, args=(run_id,), daemon=True)
        thread.start()
        return thread

    def _notify_quietly(self, run_id: str) -> None:
        try:
            self.notify_completed(run_id, by="cancel")
        except Exception:
            log.warning("webhook for %s failed:\n%s", run_id, traceback.format_exc())

    async def run_metrics(self, request: Request, owner: str) -> Response:
        assert self.store is not None
        after = _int_query(request, "after_step", -1, -1, 2**62)
        row = await run_in_threadpool(self._run_for, request, owner)
        series, cursor = await run_in_threadpool(self.store.metric_series, row.run_id, after)
        return JSONResponse({"series": series, "cursor": cursor})

    async def run_logs(self, request: Request, owner: str) -> Response:
        assert self.store is not None
        structured = _bool_query(request, "structured", False)
        after = _int_query(request, "after", 0, 0, 2**62)
        limit = _int_query(request, "limit", 1000, 1, LOG_LIMIT_MAX)
        row = await run_in_threadpool(self._run_for, request, owner)
        rows = await run_in_threadpool(self.store.log_entries, row.run_id, after, limit)
        entries = []
        cursor = after
        for r in rows:
            entry: dict[str, Any] = {"timestamp": rfc3339(r.ts), "severity": r.severity, "message": r.message}
            if structured:
                entry = {"seq": r.seq, **entry, **json.loads(r.context)}
            entries.append(entry)
            cursor = max(cursor, int(r.seq))
        return JSONResponse({"logs": entries, "cursor": cursor})

    async def resume_run(self, request: Request, owner: str) -> Response:
        row = await run_in_threadpool(self._run_for, request, owner)
        return await run_in_threadpool(self._resume, row.run_id)

    def _resume(self, run_id: str) -> Response:
        """Queue a failed or cancelled run again: a new workflow carries it on from its newest
        resumable checkpoint through the path a restart after a crash takes (ct_runs.engine)."""
        assert self.store is not None
        row = self.store.run_row(run_id)
        progress = Progress.load(row.state)
        refuse_unresumable(row, progress)
        checkpoint = progress.resume
        assert checkpoint is not None  # refused above otherwise
        workflow_id = _next_workflow(run_id, progress)
        progress.finished_ts = progress.error = progress.finalized_by = None
        progress.attempts_without_progress = 0
        entry = (
            time.time(),
            "INFO",
            f"resume requested after the run {row.status}: it carries on from checkpoint "
            f"{checkpoint['checkpoint_id']} at step {checkpoint['step']}",
            {
                "event": "resume_requested",
                "step": checkpoint["step"],
                "checkpoint_id": checkpoint["checkpoint_id"],
            },
        )
        if not self.store.reopen_run(
            run_id, progress.to_dict(), only_if_state=row.state, log_entries=[entry]
        ):
            raise aborted(f"run {run_id} changed while it was being resumed; read it and ask again")
        self._enqueue_run(run_id, workflow_id)
        return JSONResponse(public_run(self.store.run_row(run_id)))

    async def register_model(self, request: Request, owner: str) -> Response:
        row = await run_in_threadpool(self._run_for, request, owner)
        return await run_in_threadpool(self._register, row.run_id)

    def _register(self, run_id: str) -> Response:
        """Register a cancelled run's model through its registration workflow and answer the model.

        The contract answers with the RegisteredModel, so the request waits; the work is a DBOS
        workflow (ct_runs.workflows), so a crash in the middle of the export is finished by
        recovery, not left half done, and requests that ask at once wait on the same workflow."""
        assert self.store is not None
        row = self.store.run_row(run_id)
        registered = self.store.model_for_run(run_id)
        if registered is not None:
            return JSONResponse(_public_model(json.loads(registered.record)), status_code=200)
        refuse_unregistrable(row, Progress.load(row.state))
        workflow_id = self._registration_workflow(run_id)
        try:
            result = self._workflow_result(workflow_id)
        except RunsRefusal:
            raise
        except Exception as exc:
            log.error("registration %s failed:\n%s", workflow_id, traceback.format_exc())
            raise RunsRefusal(
                "internal",
                f"registering the model of run {run_id} failed ({type(exc).__name__}: {exc}); "
                "ask again to try once more",
            ) from None
        if "refused" in result:
            refused = result["refused"]
            raise RunsRefusal(refused["code"], refused["message"], field=refused.get("field"))
        return JSONResponse(_public_model(result["model"]), status_code=201 if result["created"] else 200)

    def _registration_workflow(self, run_id: str) -> str:
        """The run's registration workflow to wait on, enqueued unless it is under way already.

        Registrations are numbered (``run_….register-N``, a DBOS workflow id runs once): the first
        whose workflow does not exist yet, or is queued or running. One that ended without a model
        (it failed, or refused as the run changed meanwhile) is passed over: the run found no model
        above, so asking again tries once more."""
        from ct_runs import workflows

        number = 1
        while True:
            workflow_id = f"{run_id}.register-{number}"
            status = self._workflow_status(workflow_id)
            if status is None:
                if self._dbos_client is not None:
                    # A front: the workers take it from the queue.
                    self._enqueue(workflows.REGISTER_QUEUE, workflows.REGISTER_WORKFLOW, workflow_id, run_id)
                else:
                    # This process executes workflows: a caller waits, so start it now (two
                    # requests starting the same id get the one workflow).
                    from dbos import DBOS, SetWorkflowID

                    assert self._workflows is not None  # made by start() before DBOS was launched
                    with SetWorkflowID(workflow_id):
                        DBOS.start_workflow(self._workflows.register_workflow, run_id)
                return workflow_id
            if status.status in ("PENDING", "ENQUEUED"):
                return workflow_id
            number += 1

    def _workflow_status(self, workflow_id: str) -> Any:
        """DBOS's status of a workflow (None when there is none), here or through DBOS's client."""
        if self._dbos_client is not None:
            found = self._dbos_client.list_workflows(
                workflow_ids=[workflow_id], load_input=False, load_output=False
            )
        else:
            from dbos import DBOS

            found = DBOS.list_workflows(workflow_ids=[workflow_id], load_input=False, load_output=False)
        return found[0] if found else None

    def _workflow_result(self, workflow_id: str) -> dict[str, Any]:
        """Wait for a workflow's result, here or through DBOS's client: at most
        ``REGISTER_WAIT_S``, and not past the service's stop; then the caller is answered 503
        ``unavailable`` (with Retry-After), and asking again waits on the same workflow."""
        deadline = time.monotonic() + REGISTER_WAIT_S
        while True:
            status = self._workflow_status(workflow_id)
            if status is not None and status.status not in ("PENDING", "ENQUEUED"):
                break
            if self._stop.is_set() or time.monotonic() > deadline:
                raise RunsRefusal(
                    "unavailable",
                    f"the registration {workflow_id} is still under way; ask again in a moment "
                    "(the answer is the model once it is registered)",
                )
            self._stop.wait(REGISTER_POLL_S)
        if self._dbos_client is not None:
            handle = self._dbos_client.retrieve_workflow(workflow_id)
        else:
            from dbos import DBOS

            handle = DBOS.retrieve_workflow(workflow_id)
        return dict(handle.get_result(polling_interval_sec=REGISTER_POLL_S))

    async def get_model(self, request: Request, owner: str) -> Response:
        assert self.store is not None
        model_id = request.path_params["model_id"]
        if not is_id(model_id, "mdl"):
            raise not_found(
                f"model {model_id!r} not found: model ids look like mdl_ followed by 26 characters"
            )
        row = await run_in_threadpool(self.store.model_row, model_id)
        row = self._owned(row, request, owner, "model", model_id)
        return JSONResponse(_public_model(json.loads(row.record)))

    async def list_models(self, request: Request, owner: str) -> Response:
        assert self.store is not None
        run_id = request.query_params.get("run_id")
        if run_id is not None and not is_id(run_id, "run"):
            raise invalid_argument(
                f"run_id {run_id!r} is not a run id: run ids look like run_ followed by 26 characters",
                "run_id",
            )
        limit = _int_query(request, "limit", 100, 1, LIST_LIMIT_MAX)
        database, schema = self._where(request)
        rows = await run_in_threadpool(
            self.store.list_models, database=database, schema=schema, owner=owner, run_id=run_id, limit=limit
        )
        return JSONResponse({"models": [_public_model(json.loads(r.record)) for r in rows]})


def _next_workflow(run_id: str, progress: Progress) -> str:
    """Name the run's next workflow in its progress and return it: a DBOS workflow id runs once, so
    each resume (by request, or of a run an upgrade left behind) names a new one, ``run_….resume-N``."""
    progress.resumes += 1
    progress.workflow_id = f"{run_id}.resume-{progress.resumes}"
    return progress.workflow_id


def dataset_workflow_id(dataset_id: str, summary: str) -> str:
    """The id of a building dataset's current DBOS workflow: the dataset id, or the one recorded
    when an upgrade carried the build over."""
    return str(json.loads(summary).get("workflow_id") or dataset_id)


def _queue(name: str) -> Any:
    from dbos import DBOS

    queue = DBOS.retrieve_queue(name)
    if queue is None:
        raise RuntimeError(f"the DBOS queue {name} is not registered in this process")
    return queue


def _run_key(request: Request, spec: Mapping[str, Any]) -> RunKey | None:
    """The idempotency key a start names (None without one), with its request's SHA-256."""
    raw = request.headers.get(IDEMPOTENCY_KEY_HEADER)
    if raw is None:
        return None
    try:
        key = check_idempotency_key(raw, IDEMPOTENCY_KEY_HEADER)
    except ValidationError as exc:
        raise invalid_argument(str(exc), IDEMPOTENCY_KEY_HEADER) from None
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return RunKey(key, hashlib.sha256(canonical.encode()).hexdigest())


def _check_query(request: Request, allowed: tuple[str, ...]) -> None:
    """Refuse a query parameter the route does not take, or one given twice, naming it: a misspelt
    or doubled parameter would otherwise be ignored, and the caller read an answer to another
    question than the one asked."""
    seen: set[str] = set()
    for key, _ in request.query_params.multi_items():
        if key not in allowed:
            takes = f"it takes {', '.join(allowed)}" if allowed else "it takes none"
            raise invalid_argument(f"unknown query parameter {key!r} for this route; {takes}", key)
        if key in seen:
            raise invalid_argument(f"query parameter {key} is given more than once; give it once", key)
        seen.add(key)


def _bool_query(request: Request, name: str, default: bool) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    value = BOOLEAN_SPELLINGS.get(raw.strip().lower())
    if value is None:
        raise invalid_argument(f"{name} must be true or false, not {raw!r}", name)
    return value


def _json_type(value: Any) -> str:
    """The JSON name of a parsed JSON value's type, for messages."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string" if isinstance(value, str) else "null"


def _int_query(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid_argument(f"{name} must be an integer, not {raw!r}", name) from None
    if not low <= value <= high:
        raise invalid_argument(f"{name} must lie in [{low}, {high}]", name)
    return value


def _public_model(record: Mapping[str, Any]) -> dict[str, Any]:
    """The RegisteredModel JSON of a stored model record."""
    model = dict(record)
    model["created_at"] = rfc3339(model.pop("created_ts", None))
    model.pop("database", None)
    model.pop("schema", None)
    # Registered before these were recorded: a succeeded run's model, its template unknown.
    model.setdefault("run_status", "succeeded")
    return model


def _public_dataset(record: Mapping[str, Any]) -> dict[str, Any]:
    keys = (
        "dataset_id",
        "status",
        "name",
        "format",
        "created_at",
        "finished_at",
        "source",
        "text_field",
        "label_fields",
        "val_fraction",
        "seed",
        "splits",
        "fingerprints",
        "labels",
        "violations",
        "violations_truncated",
        "error",
    )
    return {k: record.get(k) for k in keys if k in record or k in ("error", "violations", "labels")}


# --- inside ct local serve ----------------------------------------------------------------------------


class EmbeddedService:
    """The `ct_local_services` object: routes now, DBOS once the server listens."""

    #: The key under which the local server's /healthz reports :meth:`status`.
    name = "runs"

    def __init__(self, state_dir: Path, settings: Any) -> None:
        self.settings = settings
        self.service = RunsService(
            state_dir=state_dir / "runs-service",
            client_for=self._client_for,
            authenticate=self._authenticate,
            webhook_urls=list(getattr(settings, "runs_webhook_urls", ()) or ()),
            webhook_secret=os.environ.get("CT_RUNS_WEBHOOK_SECRET"),
            concurrency=int(getattr(settings, "runs_concurrency", 1) or 1),
        )
        self._request_waiter: Callable[[str, float], bool] | None = None
        self.clients = RoleClients(
            lambda role: next((t for t, r in settings.tokens.items() if r == role), None),
            poll_interval=EMBEDDED_POLL_INTERVAL_S,
            poll_max_interval=TRAINING_POLL_MAX_INTERVAL_S,
        )

    def routes(self) -> list[Route]:
        return self.service.routes()

    def status(self) -> str:
        return self.service.status()

    def use_request_waiter(self, wait: Callable[[str, float], bool]) -> None:
        """The server's own signal that a request finished: its runs wait on it, not on polls."""
        self._request_waiter = wait

    def start(self, base_url: str) -> None:
        self.clients.start(base_url, request_waiter=self._request_waiter)
        try:
            self.service.start()
        except Exception as exc:
            self.service.start_error = f"{type(exc).__name__}: {exc}"
            log.error("the runs service did not start:\n%s", traceback.format_exc())

    def stop(self) -> None:
        self.service.stop()
        self.clients.close()

    def _authenticate(self, request: Request) -> str:
        from ct_local.http.context import caller_identity

        return caller_identity(request).role

    def _client_for(self, owner: str, database: str, schema: str) -> Any:
        return self.clients.get(owner, database, schema)


def embedded_service(state_dir: str, settings: Any) -> EmbeddedService | None:
    if not getattr(settings, "runs_service", True):
        return None
    return EmbeddedService(Path(state_dir), settings)


def token_authenticator(token: str) -> Authenticate:
    """Callers of a standalone service present its token as a bearer token; all share one owner."""

    def authenticate(request: Request) -> str:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
            raise RunsRefusal(
                "unauthenticated", "this runs service needs its token: Authorization: Bearer <token>"
            )
        return "service"

    return authenticate
