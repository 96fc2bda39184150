"""The deployment methods of the SDK (docs/model-deployments.md).

`model_deployments(client)` (or `ModelDeployments(client)`) wraps a `CortexTrainingClient`; the
methods reuse the job endpoints through the client's transport, so retries, auth and TLS are the
client's. Every HTTP error leaves here reworded, naming the deployment and never the job.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ct_core.control.polling import PollSchedule
from ct_core.errors import APIError, CTConnectionError, ValidationError, redact_secrets
from ct_core.fs import atomic_replace, exclusive_lock
from ct_core.http import retry as _retry
from ct_core.operations import control_plane, runs
from ct_model_deployment import records
from ct_model_deployment.errors import (
    MalformedDeploymentRecord,
    MalformedDeploymentWarning,
    ModelDeploymentError,
    ModelDeploymentNotFound,
    ModelDeploymentWaitError,
    ModelDeploymentWaitTimeout,
    replace_backing_ids,
    rewrite_api_error,
    rewrite_connection_error,
)
from ct_model_deployment.spec import (
    check_spec,
    create_body,
    deployment_id_of,
    job_id_of,
    registered_checkpoint,
)

#: Log kinds a deployment offers: the service's execution logs, or the saved console.
LOG_TYPES = ("execution", "stdout")
#: Every downloaded file is readable by its owner only.
FILE_MODE = 0o600
#: The notes a job download keeps beside a file `{}` and reads back to resume: a rebuilt file's
#: manifest, a rebuild cut short (its file and manifest), an execution log's listed size and checksum.
RESUME_NOTES = (".{}.manifest.json", ".{}.partial", ".{}.partial.manifest.json", ".{}.artifact.json")
#: The hidden folder, inside the output folder, where the job downloads run (same filesystem).
STAGING_DIR = ".ct-deployment-download"
#: Held while a deployment download works in a folder: one at a time per folder.
LOCK_FILE = ".ct-deployment-download.lock"
#: The status of the server's refusal to cancel a failed or terminated job (cancelJob).
CONFLICT_STATUS = 409
#: The status of an unknown registered model (getRegisteredModel): final at once, never retried.
NOT_FOUND_STATUS = 404


#: The next step under a 404 for a checkpoint source's job, and for an unknown registered model.
SOURCE_JOB_HINT = (
    "check source.job_id (the training job that saved the checkpoint), database and schema; "
    "ct list shows your jobs"
)
REGISTERED_MODEL_HINT = (
    "check source.model_id against the model_id of the run that registered it, and that the runs "
    "service serves this database and schema"
)

#: Loggers whose lines may name the backing job while a deployment method runs: the request log,
#: retry notes and the download notices. Each gets the filter below, because a logger's
#: filter does not see records that only propagate through it.
NAMED_LOGGERS = ("ct_core.transport", "ct_core.retry", "ct_core.downloads", "cortex_training")
#: (backing job id, deployment id) of the deployment method running in this context, if any.
_NAMING: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "ct_deployment", default=None
)


class _DeploymentNaming(logging.Filter):
    """Rewrites request log lines so they carry the deployment id, never the backing job id."""

    def filter(self, record: logging.LogRecord) -> bool:
        naming = _NAMING.get()
        if naming is not None:
            job_id, deployment = naming
            text = record.getMessage()
            if job_id in text:
                record.msg, record.args = replace_backing_ids(text, job_id, deployment), None
        return True


_FILTER = _DeploymentNaming()
for _name in NAMED_LOGGERS:
    logging.getLogger(_name).addFilter(_FILTER)


def load_spec(spec: dict[str, Any] | str | Path) -> Any:
    """A spec given as a dict, or read from a JSON file path."""
    if isinstance(spec, dict):
        return spec
    text = Path(spec).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{spec}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def _not_found(error: BaseException) -> bool:
    return isinstance(error, APIError) and error.status_code == NOT_FOUND_STATUS


def _source_model(job: dict[str, Any], source_job_id: str) -> str:
    for sub_job in job.get("sub_jobs") or []:
        if isinstance(sub_job, dict) and str(sub_job.get("job_type", "")).lower() == "training":
            name = sub_job.get("model_name")
            if isinstance(name, str) and name:
                return name
    raise ValidationError(f"source job {source_job_id} has no training sub-job with a model_name")


class ModelDeployments:
    """Create, read, wait for and drop model deployments of one client's database and schema."""

    def __init__(self, client: Any, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self._sleep = sleep

    # --- plumbing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def errors_named(
        self, deployment: str | None, job_id: str | None, *, hint: str | None = None
    ) -> Iterator[None]:
        """Inside the block, API and connection errors name the deployment, never its backing job.

        `hint` is the next step a 404 inside the block gets instead of the deployment's own.
        """
        token = _NAMING.set((job_id, deployment) if job_id and deployment else None)
        try:
            yield
        except APIError as error:
            raise rewrite_api_error(
                error,
                deployment_id=deployment,
                job_id=job_id,
                database=self.client.database,
                schema=self.client.schema,
                hint=hint,
            ) from None
        except CTConnectionError as error:
            raise rewrite_connection_error(error, deployment_id=deployment, job_id=job_id) from None
        finally:
            _NAMING.reset(token)

    def _read_job(self, job_id: str) -> dict[str, Any]:
        # No grace for a job created moments ago: a deployment lookup takes 517601 as final.
        answer: Any = control_plane.get_job(self.client, job_id=job_id, predicate=_retry.general())
        return answer if isinstance(answer, dict) else {}

    def _lookup(self, deployment: str) -> tuple[str, dict[str, Any]]:
        job_id = job_id_of(deployment)
        with self.errors_named(deployment, job_id):
            job = self._read_job(job_id)
        if not records.is_deployment(job):
            raise ValidationError(f"{deployment} is not a model deployment")
        return job_id, job

    def base_url(self, deployment: str | None = None) -> str:
        """`<prefix>/inference/v1` of this client's schema: the OpenAI base URL."""
        if deployment is not None:
            job_id_of(deployment)
        # The OpenAI-compatible routes of the spec share one base: the models listing sits right under it.
        return self.client.url_for("listDeploymentModels").removesuffix("/models")

    def _metadata(self, job: dict[str, Any]) -> dict[str, Any]:
        return records.metadata(job, base_url=self.base_url())

    # --- methods -------------------------------------------------------------------------------

    def normalize_spec(self, spec: dict[str, Any] | str | Path) -> dict[str, Any]:
        """The checked, normalized spec; no request is made (what `create --dry-run` prints)."""
        return check_spec(load_spec(spec))

    def resolve_registered_model(self, model_id: str) -> dict[str, Any]:
        """The checkpoint source (`type`, `job_id`, `checkpoint_id`) a registered model stands for.

        One GET of the runs service's record (getRegisteredModel); an unknown model fails at once
        with a ModelDeploymentError naming it, any other failure as the service's error.
        """
        try:
            answer: Any = runs.get_registered_model(
                self.client,
                model_id=model_id,
                # The general rule retries a 404 (a new job can lag); an unknown model never appears.
                predicate=_retry.general(final=_not_found),
            )
        except APIError as error:
            raise self._registered_model_error(error, model_id) from None
        except CTConnectionError as error:
            raise rewrite_connection_error(error, deployment_id=None, job_id=None) from None
        return registered_checkpoint(answer, model_id)

    def _registered_model_error(self, error: APIError, model_id: str) -> ModelDeploymentError:
        where = f"{self.client.database}.{self.client.schema}"
        if error.status_code == NOT_FOUND_STATUS:
            message = f"registered model {model_id} not found in {where}"
        else:
            message = f"registered model {model_id} lookup failed with HTTP {error.status_code}"
            if error.code is not None:
                message += f" ({error.code})"
            if error.server_message:
                message += f": {redact_secrets(error.server_message)}"
        if error.request_id:
            message += f" (snowflake request id: {error.request_id})"
        reworded = ModelDeploymentError(
            message,
            response=error.response,
            status_code=error.status_code,
            code=error.code,
            request_id=error.request_id,
            server_message=error.server_message,
        )
        if error.status_code == NOT_FOUND_STATUS:
            reworded.hint = REGISTERED_MODEL_HINT
        return reworded

    def create(
        self, spec: dict[str, Any] | str | Path, *, on_created: Callable[[str], None] | None = None
    ) -> dict[str, Any]:
        """Create a deployment from a spec (dict or JSON file); returns its metadata.

        A registered-model source is resolved here, just before the source job is read and the
        job created: into the checkpoint its run exported. `on_created(deployment_id)` is called
        as soon as the service has answered the create, before the deployment is read back: a
        caller interrupted after that (Ctrl+C) still knows which deployment it made.
        """
        checked = self.normalize_spec(spec)
        source = checked["source"]
        if source["type"] == "registered_model":
            source = self.resolve_registered_model(source["model_id"])
            checked = {**checked, "source": source}
        if source["type"] == "checkpoint":
            with self.errors_named(None, None, hint=SOURCE_JOB_HINT):
                model = _source_model(self.client.get_job(source["job_id"]), source["job_id"])
        else:
            model = source["model"]
        with self.errors_named(None, None):
            answer = self.client.create_job_from_body(create_body(checked, model))
        job_id = str(answer.get("job_id", ""))
        deployment = deployment_id_of(job_id)
        if on_created is not None:
            on_created(deployment)
        # The first read of a job just created keeps the service's grace for a 517601: the
        # new job may take a moment to show up. Later lookups take that answer as final.
        with self.errors_named(deployment, job_id):
            job = self.client.get_job(job_id)
        return self._metadata(job)

    def describe(self, deployment: str) -> dict[str, Any]:
        """The full metadata of one deployment (GET /{job_id})."""
        _, job = self._lookup(deployment)
        return self._metadata(job)

    get = describe

    def list_model_deployments(
        self,
        statuses: Iterable[str] | None = None,
        *,
        on_malformed: Callable[[dict[str, str]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Deployments of the schema, oldest first, optionally only those in `statuses` (any case).

        A deployment whose record is malformed is left out, and the rest still listed: each one is
        reported as `{"deployment", "status", "error"}` to `on_malformed`, or, without it, as a
        `MalformedDeploymentWarning`. Reading that deployment alone (`describe`) raises the error.
        """
        wanted = None
        if statuses is not None:
            wanted = {str(status).strip().upper() for status in statuses}
            unknown = sorted(wanted - set(records.KNOWN_STATUSES))
            if unknown:
                raise ValidationError(
                    f"unknown deployment status {', '.join(unknown)}; use {', '.join(records.KNOWN_STATUSES)}"
                )
        with self.errors_named(None, None):
            jobs = self.client.list_jobs()
        found = []
        for job in jobs:
            if not isinstance(job, dict) or not records.is_deployment(job):
                continue
            try:
                found.append(self._metadata(job))
            except MalformedDeploymentRecord as error:
                # Its status is known even when its shape is not: a filter applies to it as well.
                status = records.deployment_status(job.get("status"))
                if wanted is not None and status not in wanted:
                    continue
                problem = {
                    "deployment": deployment_id_of(str(job.get("job_id", ""))),
                    "status": status,
                    "error": str(error),
                }
                if on_malformed is None:
                    warnings.warn(str(error), MalformedDeploymentWarning, stacklevel=2)
                else:
                    on_malformed(problem)
        found.sort(key=lambda record: str(record.get("created_at") or ""))
        return [record for record in found if wanted is None or record["status"] in wanted]

    def wait(self, deployment: str, timeout: float | None = None) -> dict[str, Any]:
        """Poll until READY and return the metadata; nothing is ever dropped here."""
        job_id_of(deployment)
        limit = self.client.poll_timeout if timeout is None else timeout
        if limit <= 0:
            raise ValidationError("timeout must be > 0")
        schedule = PollSchedule(
            interval=self.client.poll_interval,
            timeout=limit,
            multiplier=self.client.poll_backoff_multiplier,
            max_interval=self.client.poll_max_interval,
            sleep=self._sleep,
        )
        while True:
            _, job = self._lookup(deployment)
            record = self._metadata(job)
            status = record["status"]
            if status == "READY":
                return record
            if status in records.FAILURE_STATUSES:
                failure = record.get("failure") or {}
                # Code and message both, as describe shows them: the code alone rarely says
                # what to fix.
                said = f": {failure['message']}" if failure.get("message") else ""
                raise ModelDeploymentWaitError(
                    f"model deployment {deployment} is {status} (failure code "
                    f"{failure.get('code') or 'unknown'}){said}; see its logs with "
                    f"ct model-deployment logs {deployment} (download-log)",
                    deployment=record,
                )
            if status == "DROPPED":
                raise ModelDeploymentWaitError(
                    f"model deployment {deployment} was dropped", deployment=record
                )
            if schedule.expired():
                raise ModelDeploymentWaitTimeout(
                    f"model deployment {deployment} is not READY after {limit:g}s (status {status}); it is "
                    f"still running and holding GPUs: drop it with ct model-deployment drop {deployment}",
                    deployment=record,
                )
            schedule.wait()

    def drop(self, deployment: str) -> dict[str, Any]:
        """Drop a deployment; idempotent (a gone one is dropped). Returns {deployment, dropped, status}."""
        try:
            job_id, job = self._lookup(deployment)
        except ModelDeploymentNotFound:
            return {"deployment": deployment, "dropped": True, "status": "DROPPED"}
        status = records.deployment_status(job.get("status"))
        if status in records.FAILURE_STATUSES:
            # Nothing to release: the server refuses to cancel these, and they hold no GPUs.
            return {"deployment": deployment, "dropped": False, "status": status}
        if status in records.DROP_STATUSES:
            return {"deployment": deployment, "dropped": True, "status": status}
        try:
            with self.errors_named(deployment, job_id):
                # As the spec's rule for cancelJob, without the grace for a job created moments ago.
                control_plane.cancel_job(
                    self.client, job_id=job_id, predicate=_retry.general(final=_retry.conflict_is_final)
                )
        except ModelDeploymentNotFound:
            return {"deployment": deployment, "dropped": True, "status": "DROPPED"}
        except ModelDeploymentError as error:
            # A 409 means the job left a cancellable status after it was read (it failed, or was
            # terminated): answer for the status it has now, as if it had been read first.
            if error.status_code != CONFLICT_STATUS:
                raise
            return self._drop_answer(deployment, job_id, cancelled=False)
        return self._drop_answer(deployment, job_id, cancelled=True)

    def _drop_answer(self, deployment: str, job_id: str, *, cancelled: bool) -> dict[str, Any]:
        try:
            with self.errors_named(deployment, job_id):
                status = records.deployment_status(self._read_job(job_id).get("status"))
        except ModelDeploymentNotFound:
            return {"deployment": deployment, "dropped": True, "status": "DROPPED"}
        dropped = cancelled or status in records.DROP_STATUSES
        return {"deployment": deployment, "dropped": dropped, "status": status}

    # --- logs and metrics ---------------------------------------------------------------------

    def download_logs(
        self,
        deployment: str,
        output_dir: str | os.PathLike[str],
        log_type: str = "execution",
        *,
        resume: bool = False,
    ) -> list[dict[str, Any]]:
        """Save the deployment's execution (or stdout) logs flat into `output_dir`, mode 0600.

        With `resume`, what an earlier download into the same folder saved is kept: an execution
        log whose size and checksum did not change is not fetched again (`unchanged: True`), and
        the console gets only its new chunks appended.
        """
        if log_type not in LOG_TYPES:
            raise ValidationError(f"log_type must be one of {', '.join(LOG_TYPES)}")
        job_id, job = self._lookup(deployment)
        if log_type == "stdout":
            method, counted = "download_stdout_logs", True
        else:
            method, counted = "download_execution_logs", False
        return self._download_flat(
            deployment, job_id, job, output_dir, method, counted=counted, resume=resume
        )

    def download_metrics(
        self, deployment: str, output_dir: str | os.PathLike[str], *, resume: bool = False
    ) -> list[dict[str, Any]]:
        """Save the deployment's GPU and system metrics flat into `output_dir`, mode 0600.

        With `resume`, only chunks an earlier download into the same folder did not have are fetched.
        """
        job_id, job = self._lookup(deployment)
        return self._download_flat(
            deployment, job_id, job, output_dir, "download_metrics", counted=True, resume=resume
        )

    def _download_flat(
        self,
        deployment: str,
        job_id: str,
        job: dict[str, Any],
        output_dir: str | os.PathLike[str],
        method: str,
        *,
        counted: bool,
        resume: bool,
    ) -> list[dict[str, Any]]:
        target = Path(output_dir)
        target.mkdir(parents=True, exist_ok=True)
        # The job downloads write <sub_job_id>/<file> with their resume notes beside it. They work in a
        # hidden folder inside the target (same filesystem: every move is a rename), one download
        # of a folder at a time; a folder left by a killed download is emptied back out first.
        staging = target / STAGING_DIR
        with exclusive_lock(target / LOCK_FILE):
            _lift_out(staging, target)
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(mode=0o700)
            try:
                if resume:
                    # Loaded with the first download, as the job downloads themselves are.
                    from ct_core.downloads.chunks import sub_job_dir

                    _bring_back(target, sub_job_dir(staging, _sub_job_id(job, job_id)))
                with self.errors_named(deployment, job_id):
                    entries = getattr(self.client, method)(job_id, staging, resume=resume)
                return [self._flat_entry(entry, target, deployment, job_id, counted) for entry in entries]
            finally:
                # Whatever is still in the job layout (a file brought back but not listed again,
                # a rebuild cut short) goes back beside the others, so a later resume finds it.
                _lift_out(staging, target)
                shutil.rmtree(staging, ignore_errors=True)

    @staticmethod
    def _flat_entry(
        entry: dict[str, Any], target: Path, deployment: str, job_id: str, counted: bool
    ) -> dict[str, Any]:
        name = str(entry["filename"])
        saved = entry.get("saved_path")
        for note in [name, *(pattern.format(name) for pattern in RESUME_NOTES)]:
            moved = Path(saved).with_name(note) if saved else None
            if moved is not None and moved.is_file():
                os.chmod(moved, FILE_MODE)
                # The downloads already wrote the file whole; lifting it out is one rename.
                atomic_replace(moved, target / note, durable=False)
        result: dict[str, Any] = {"filename": name, "saved_path": str(target / name)}
        if counted:
            result["chunk_count"] = entry.get("chunk_count", 0)
        else:
            result["unchanged"] = bool(entry.get("unchanged"))
        notices = [replace_backing_ids(str(n), job_id, deployment) for n in entry.get("warnings") or []]
        if notices:
            result["warnings"] = notices
        return result

    # The method names of the reference documentation, for code written against it.
    create_model_deployment = create
    describe_model_deployment = describe
    get_model_deployment = describe
    wait_for_model_deployment = wait
    drop_model_deployment = drop
    download_model_deployment_logs = download_logs
    download_model_deployment_metrics = download_metrics
    model_deployment_base_url = base_url


def _sub_job_id(job: dict[str, Any], job_id: str) -> str:
    """The deployment's one sub-job id, as its files are filed under it."""
    sub_job = records.sampling_sub_job(job) or {}
    return str(sub_job.get("sub_job_id") or f"{job_id}:sampling:0")


def _notes_of(folder: Path, name: str) -> list[Path]:
    return [
        folder / pattern.format(name) for pattern in RESUME_NOTES if (folder / pattern.format(name)).is_file()
    ]


def _bring_back(target: Path, sub_folder: Path) -> None:
    """Move each flat file that has resume notes, with its notes, into the job layout the job
    downloads resume from (`<staging>/<sub_job_id>/`)."""
    sub_folder.mkdir(parents=True, exist_ok=True)
    names: set[str] = set()
    for pattern in RESUME_NOTES:
        suffix = pattern.format("")[1:]  # the note's name is "." + the file's name + this
        names.update(note.name[1 : -len(suffix)] for note in target.glob(pattern.format("?*")))
    for name in sorted(names):
        for path in [target / name, *_notes_of(target, name)]:
            if path.is_file():
                os.replace(path, sub_folder / path.name)


def _lift_out(staging: Path, target: Path) -> None:
    """Move every file left in the job layout back flat into `target`, owner-only."""
    if not staging.is_dir():
        return
    for sub_folder in staging.iterdir():
        if not sub_folder.is_dir():
            continue
        for path in sub_folder.iterdir():
            # Locks and the downloads' own temporary files stay behind with the folder.
            if path.is_file() and not path.name.endswith((".lock", ".tmp")):
                os.chmod(path, FILE_MODE)
                os.replace(path, target / path.name)


def model_deployments(client: Any) -> ModelDeployments:
    """The deployment methods bound to `client`."""
    return ModelDeployments(client)
