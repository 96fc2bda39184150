"""`CortexTrainingClient`: the SDK facade over the Cortex Training REST API.

Method names and signatures follow the reference client so code ports by changing an import; the
answers are plain dicts and lists. This module holds the facade only: transport policy lives in
`_transport`/`_retry`, the generated-client bridge in `_api`, answer shaping in `_control_plane`,
polling in `_polling`, create-body checks in `validation`, connection choice in `connection`.

The data plane (forward_backward, step, save, load, the §7 operations, poll_request, live logs) comes
from `_dataplane.DataPlaneMixin` and builds on the same seams: `self._ops` for JSON operations,
`self._transport` for streamed chunk uploads under the same retry policy, and `self._poll_schedule()`
for request polling.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ct_core.config.typed import Hardware, SubJobConfig, hardware_wire
from ct_core.config.validation import build_create_body, validate_create_body
from ct_core.connect.resolve import normalize_host, rest_host
from ct_core.constants import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_ENDPOINT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_POLL_BACKOFF_MULTIPLIER,
    DEFAULT_POLL_INTERVAL,
    DEFAULT_POLL_MAX_INTERVAL,
    DEFAULT_POLL_TIMEOUT,
    DEFAULT_POOL_MAXSIZE,
    DEFAULT_READ_TIMEOUT,
    PAT_TOKEN_TYPE,
    TOKEN_TYPE_HEADER,
)
from ct_core.control import shaping as _control_plane
from ct_core.control.polling import TERMINAL_JOB_STATES, PollSchedule, normalize_job_status
from ct_core.control.shaping import (
    DEFAULT_BREAKDOWN_DIMENSIONS,
    create_job_body_from_job,
)
from ct_core.data.generate import GenerateMixin
from ct_core.data.plane import DataPlaneMixin
from ct_core.data.results import RequestRegistry
from ct_core.downloads import DownloadsMixin
from ct_core.errors import APIError, JobTerminalError, JobWaitTimeout
from ct_core.http import retry as _retry
from ct_core.http.operations import Operations
from ct_core.http.transport import AuthProvider, Transport, capacity_timeout, validate_request_timeout

__all__ = ["CortexTrainingClient", "create_job_body_from_job"]

#: Experiment runs never change for a job; remember the newest ones (§5.7, CP-15).
EXPERIMENT_RUN_CACHE_SIZE = 256


class _ExperimentRunCache:
    """A small thread-safe LRU shared by a client and the clients `for_job` derives from it."""

    def __init__(self, size: int = EXPERIMENT_RUN_CACHE_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str, str], dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str]) -> dict[str, Any] | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return dict(value) if value is not None else None

    def put(self, key: tuple[str, str, str], value: dict[str, Any]) -> None:
        with self._lock:
            self._items[key] = dict(value)
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def _account_list_predicate(error: BaseException) -> bool:
    # The account list answers 404 when the route is missing or disabled: that never heals (§5.3).
    if isinstance(error, APIError) and error.status_code == 404:
        return False
    return _retry.is_transient(error)


class CortexTrainingClient(GenerateMixin, DataPlaneMixin, DownloadsMixin):
    """A client for one database and schema of a Cortex Training service.

    Against a local or compatible server::

        client = CortexTrainingClient(base_url="http://127.0.0.1:8084", database="DB", schema="PUBLIC")

    With a programmatic access token, or a Snowflake connection profile::

        client = CortexTrainingClient.from_pat(host="myorg-acct.snowflakecomputing.com", pat=token,
                                               database="DB", schema="PUBLIC")
        client = CortexTrainingClient.from_configs(connection="training")

    Use it as a context manager, or call `close()`, to release its connections.
    """

    def __init__(
        self,
        base_url: str,
        database: str,
        schema: str,
        endpoint: str = DEFAULT_ENDPOINT,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        poll_timeout: float = DEFAULT_POLL_TIMEOUT,
        poll_backoff_multiplier: float = DEFAULT_POLL_BACKOFF_MULTIPLIER,
        poll_max_interval: float = DEFAULT_POLL_MAX_INTERVAL,
        pool_maxsize: int = DEFAULT_POOL_MAXSIZE,
        max_retries: int = DEFAULT_MAX_RETRIES,
        request_timeout: float | tuple[float, float] = (DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT),
        *,
        verify_ssl: bool | str = True,
        headers: Mapping[str, str] | None = None,
        auth: AuthProvider | None = None,
    ) -> None:
        # Checked in this order so the first bad argument names itself (CFG-01 fixes the messages);
        # each rule is a thunk so a later comparison never runs ahead of an earlier failure.
        rules: tuple[tuple[Callable[[], bool], str], ...] = (
            (lambda: poll_interval > 0, "poll_interval must be > 0"),
            (lambda: poll_timeout > 0, "poll_timeout must be > 0"),
            (lambda: poll_backoff_multiplier >= 1.0, "poll_backoff_multiplier must be >= 1.0"),
            (lambda: poll_max_interval >= poll_interval, "poll_max_interval must be >= poll_interval"),
            (lambda: pool_maxsize > 0, "pool_maxsize must be > 0"),
            (lambda: max_retries >= 0, "max_retries must be >= 0"),
        )
        for holds, message in rules:
            if not holds():
                raise ValueError(message)
        self.base_url = base_url.rstrip("/")
        self.database, self.schema, self.endpoint = database, schema, endpoint
        # The polling schedule every wait_* helper follows (see _poll_schedule).
        self.poll_interval, self.poll_timeout = poll_interval, poll_timeout
        self.poll_backoff_multiplier, self.poll_max_interval = poll_backoff_multiplier, poll_max_interval
        self.max_retries = max_retries
        self.request_timeout = validate_request_timeout(request_timeout)
        self.verify_ssl = verify_ssl
        self._auth = auth
        self._pat_host: str | None = None
        self._transport = Transport(
            self.base_url,
            headers=dict(headers or {}),
            verify=verify_ssl,
            timeout=self.request_timeout,
            pool_maxsize=pool_maxsize,
            max_retries=max_retries,
            auth=auth,
        )
        self._owns_transport = True
        self._ops = Operations(self._transport, database=database, schema=schema, endpoint=endpoint)
        self._experiment_runs = _ExperimentRunCache()
        self._requests = RequestRegistry()
        self._sleep = time.sleep

    # --- construction --------------------------------------------------------------------------

    @classmethod
    def from_pat(
        cls,
        host: str,
        pat: str,
        database: str,
        schema: str,
        endpoint: str = DEFAULT_ENDPOINT,
        verify_ssl: bool = True,
        *,
        telemetry_timeout: float = 3.0,
        **client_kwargs: Any,
    ) -> CortexTrainingClient:
        """Sign every request with a programmatic access token; no sign-in round trip.

        `host` may carry a scheme or a trailing slash. REST calls go to the hyphen form of a Snowflake
        account host (§2.1). `telemetry_timeout` is accepted for compatibility; ct sends no telemetry.
        """
        del telemetry_timeout
        headers = {"Authorization": f"Bearer {pat}", TOKEN_TYPE_HEADER: PAT_TOKEN_TYPE}
        client = cls(
            base_url=f"https://{rest_host(normalize_host(host))}",
            database=database,
            schema=schema,
            endpoint=endpoint,
            verify_ssl=verify_ssl,
            headers=headers,
            **client_kwargs,
        )
        client._pat_host = normalize_host(host)
        return client

    @classmethod
    def from_configs(
        cls,
        connection: str | None = None,
        database: str | None = None,
        schema: str | None = None,
        endpoint: str | None = None,
        verify_ssl: bool = True,
        **client_kwargs: Any,
    ) -> CortexTrainingClient:
        """Use a Snowflake connection profile from connections.toml (§2.2).

        The profile is `connection`, else the one `ct login` remembered, else the Connector's default.
        Where no profile exists at all, CORTEX_TRAINING_HOST and CORTEX_TRAINING_PAT are used (CI).
        """
        from ct_core.connect import snowflake as _snowflake
        from ct_core.connect.files import default_connection_name, read_connection_profiles, read_login_state
        from ct_core.connect.resolve import ConnectionOptions, client_from_resolved, resolve_connection

        profiles = read_connection_profiles()
        name = connection
        if not name:
            login = read_login_state()
            name = login.profile if login is not None and login.profile else None
        if not name and default_connection_name() in profiles:
            name = default_connection_name()
        options = ConnectionOptions(
            connection=name, database=database, schema=schema, endpoint=endpoint, verify_ssl=verify_ssl
        )
        if not name:
            # No profile anywhere: the CI fallback through the environment.
            return client_from_resolved(resolve_connection(options), **client_kwargs)
        resolved = resolve_connection(options)
        session = _snowflake.open_profile_session(name)
        server_url = _snowflake.session_server_url(session)
        scheme, _, host = server_url.partition("://")
        client = cls(
            base_url=f"{scheme}://{rest_host(host)}",
            database=resolved.database,
            schema=resolved.schema,
            endpoint=resolved.endpoint,
            verify_ssl=verify_ssl,
            auth=_snowflake.SnowflakeSessionAuth(name, session),
            **client_kwargs,
        )
        return client

    def for_job(self, job: Mapping[str, Any]) -> CortexTrainingClient:
        """A client bound to the database and schema of a job from the account-level list.

        It shares this client's connections, auth and experiment-run cache; closing it closes nothing
        shared. It never creates a database.
        """
        database, schema = job.get("database_name"), job.get("schema_name")
        if not database or not schema:
            raise ValueError(
                "for_job needs a job from the account-level list (with database_name and schema_name)"
            )
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.database, twin.schema = str(database), str(schema)
        twin._transport = self._transport.borrow()
        twin._owns_transport = False
        twin._ops = Operations(
            twin._transport, database=twin.database, schema=twin.schema, endpoint=self.endpoint
        )
        return twin

    def close(self) -> None:
        """Release the connections (and the Snowflake session) this client owns."""
        if not self._owns_transport:
            return
        self._close_artifact_sessions()
        self._transport.close()
        closer = getattr(self._auth, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> CortexTrainingClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def create_snowpark_session(self) -> Any:
        """A Snowpark Session signed in with this client's credentials (CFG-29).

        A profile client opens an independent session from its profile; a PAT client signs in
        with its token as its own user and role. The session uses this client's database and
        schema, and belongs to the caller (close it). Needs the ``snowpark`` extra.
        """
        from ct_core.connect.snowpark import snowpark_session

        return snowpark_session(self)

    @property
    def _prefix(self) -> str:
        return f"{self.base_url}/api/v2/databases/{self.database}/schemas/{self.schema}/{self.endpoint}"

    def _poll_schedule(self) -> PollSchedule:
        return PollSchedule(
            interval=self.poll_interval,
            timeout=self.poll_timeout,
            multiplier=self.poll_backoff_multiplier,
            max_interval=self.poll_max_interval,
            sleep=self._sleep,
        )

    # --- jobs ----------------------------------------------------------------------------------

    def create_job(
        self,
        sub_jobs: Sequence[SubJobConfig],
        experiment_name: str | None = None,
        hardware: str | Hardware | None = None,
        idle_timeout_seconds: int | None = None,
        pending_timeout_seconds: int | None = None,
    ) -> str:
        """Create a job from typed sub-jobs and return its job id.

        At most one training sub-job, any number of sampling ones. `hardware` is H200 (the server's
        default), B200 or B300. `idle_timeout_seconds` is 0 (never reclaimed) or 300-604800;
        `pending_timeout_seconds` is 300-604800. Raises ValidationError before sending when
        anything is off.
        """
        body = build_create_body(
            sub_jobs,
            experiment_name=experiment_name,
            hardware=hardware,
            idle_timeout_seconds=idle_timeout_seconds,
            pending_timeout_seconds=pending_timeout_seconds,
        )
        return str(self.create_job_from_body(body)["job_id"])

    def create_job_from_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a job from a raw REST create body; returns the answer (`{"job_id": ...}`).

        The body is checked and normalized by `validate_create_body` first. The request is retried
        only when it provably never reached the server, so a job is never created twice.
        """
        normalized = validate_create_body(body)
        answer = self._ops.call("createJob", body=normalized, predicate=_retry.never_reached_server)
        answer = answer if isinstance(answer, dict) else {}
        job_id = answer.get("job_id")
        if isinstance(job_id, str) and job_id:
            self._transport.recent_jobs.add(job_id)
        return answer

    def get_job(self, job_id: str) -> dict[str, Any]:
        """The job record: status, reason, times, hardware, timeouts and every sub-job (§5.2)."""
        return self._ops.call("getJob", params={"job_id": job_id}, job_id=job_id) or {}

    def wait_for_job(self, job_id: str) -> dict[str, Any]:
        """Poll until the job is running and return its record.

        pending, placing and initializing keep polling; failed, cancelled, terminated (and the
        legacy done, completed, succeeded, canceled) raise JobTerminalError at once; the poll timeout
        raises JobWaitTimeout.
        """
        schedule = self._poll_schedule()
        while True:
            job = self.get_job(job_id)
            status = normalize_job_status(job.get("status"))
            if status == "running":
                return job
            if status in TERMINAL_JOB_STATES:
                reason = job.get("reason") or ""
                raise JobTerminalError(
                    f"Job {job_id} reached terminal state '{status}': {reason}",
                    job_id=job_id,
                    status=status,
                    reason=str(reason),
                )
            if schedule.expired():
                raise JobWaitTimeout(f"Job {job_id} did not become running within {self.poll_timeout}s")
            schedule.wait()

    def list_jobs(self, status: str | None = None) -> list[dict[str, Any]]:
        """Jobs of this schema that the role owns, optionally filtered by one status (sent as given)."""
        answer = self._ops.call("listJobs", query={"status": status})
        jobs = answer.get("jobs") if isinstance(answer, dict) else None
        return list(jobs or [])

    def cancel_job(self, job_id: str) -> None:
        """Cancel a job; repeating it while cancelling or cancelled succeeds."""
        # A 409 here means the job is failed or terminated: a state, not a hiccup (BUG-04).
        predicate = _retry.general(
            job_id=job_id, recent_jobs=self._transport.recent_jobs, final=_retry.conflict_is_final
        )
        self._ops.call("cancelJob", params={"job_id": job_id}, predicate=predicate)

    def get_experiment_run(self, job_id: str) -> dict[str, Any]:
        """`{"experiment_name": ..., "experiment_run_name": ...}` of a job (cached; failures are not)."""
        key = (self.database, self.schema, job_id)
        cached = self._experiment_runs.get(key)
        if cached is not None:
            return cached
        answer = self._ops.call("getExperimentRun", params={"job_id": job_id}, job_id=job_id) or {}
        self._experiment_runs.put(key, answer)
        return dict(answer)

    # --- account-level list --------------------------------------------------------------------

    def list_jobs_page(
        self,
        database: str | None = None,
        schema: str | None = None,
        status: str | Iterable[str] | None = None,
        submitted_by: str | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        max_retries: int | None = None,
        request_timeout: float | tuple[float, float] | None = None,
    ) -> dict[str, Any]:
        """One page of the jobs the caller can see across the account, newest first (§5.3).

        Returns `{"jobs": [...], "next_page_token": str | None}`. Raises AccountJobListUnavailable
        (403, 404, 405) and InvalidPageToken at once.
        """
        query = _control_plane.account_list_params(
            database=database,
            schema=schema,
            status=status,
            submitted_by=submitted_by,
            created_after=created_after,
            created_before=created_before,
            page_size=page_size,
            page_token=page_token,
        )
        if max_retries is not None and (isinstance(max_retries, bool) or max_retries < 0):
            raise ValueError("max_retries must be >= 0")
        timeout = validate_request_timeout(request_timeout) if request_timeout is not None else None
        try:
            answer = self._ops.call(
                "listAccountJobs",
                query=query,
                predicate=_account_list_predicate,
                max_retries=max_retries,
                timeout=timeout,
            )
        except APIError as error:
            raise _control_plane.classify_account_list_error(error) from None
        answer = answer if isinstance(answer, dict) else {}
        return {
            "jobs": list(answer.get("jobs") or []),
            "next_page_token": answer.get("next_page_token") or None,
        }

    def iter_jobs(
        self,
        database: str | None = None,
        schema: str | None = None,
        status: str | Iterable[str] | None = None,
        submitted_by: str | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Every job across the account, page after page, until no next_page_token is returned.

        The arguments are checked now, before any request; pages are fetched while iterating.
        """
        filters: dict[str, Any] = {
            "database": database,
            "schema": schema,
            "status": status,
            "submitted_by": submitted_by,
            "created_after": created_after,
            "created_before": created_before,
            "page_size": page_size,
        }
        _control_plane.account_list_params(**filters)

        def pages() -> Iterator[dict[str, Any]]:
            token: str | None = None
            while True:
                page = self.list_jobs_page(**filters, page_token=token)
                yield from page["jobs"]
                token = page["next_page_token"]
                if not token:
                    return

        return pages()

    # --- account-scoped reads ------------------------------------------------------------------

    def list_models(self) -> list[dict[str, Any]]:
        """Models the account offers for new jobs (policy discovery, not a capacity promise)."""
        answer = self._ops.call("listModels")
        models = answer.get("models") if isinstance(answer, dict) else None
        return list(models or [])

    def _capacity(self, hardware: Hardware | str | None, breakdown: str | None) -> Any:
        query = {
            "hardware": hardware_wire(hardware) if hardware is not None else None,
            "breakdown": breakdown,
        }
        return self._ops.call(
            "getCapacity",
            query=query,
            predicate=_retry.never,
            timeout=capacity_timeout(self.request_timeout),
        )

    def get_capacity(self, hardware: Hardware | str | None = None) -> dict[str, Any]:
        """The account's GPU ceiling and usage, with all six keys filled (§5.5).

        One attempt, bounded by 10 s connect / 30 s read; a 409 517604 (unsupported hardware) is raised.
        """
        return _control_plane.normalize_capacity(self._capacity(hardware, None))

    def get_capacity_breakdown(
        self,
        hardware: Hardware | str | None = None,
        *,
        dimensions: Iterable[str] | str = DEFAULT_BREAKDOWN_DIMENSIONS,
    ) -> dict[str, Any]:
        """Capacity plus the usage split by `dimensions` (job_type, submitted_by), normalized (§5.5)."""
        names = _control_plane.breakdown_dimensions(dimensions)
        answer = self._capacity(hardware, ",".join(names))
        return _control_plane.normalize_capacity_breakdown(answer, names)

    # --- checkpoints ---------------------------------------------------------------------------

    def list_checkpoints(self, job_id: str) -> list[dict[str, Any]]:
        """The job's checkpoints, in no guaranteed order (select by created_at)."""
        answer = self._ops.call("listCheckpoints", params={"job_id": job_id}, job_id=job_id)
        checkpoints = answer.get("checkpoints") if isinstance(answer, dict) else None
        return list(checkpoints or [])

    def export_checkpoint(self, job_id: str, checkpoint_id: str) -> dict[str, Any]:
        """Short-lived download links of a checkpoint's files: `{checkpoint_id, files, expires_at}`."""
        # No job_id grace: a checkpoint exists only long after its job was created, so a 517601 here
        # (missing checkpoint or job) is final at once.
        params = {"job_id": job_id, "checkpoint_id": checkpoint_id}
        return self._ops.call("exportCheckpoint", params=params) or {}

    def delete_checkpoint(self, job_id: str, checkpoint_id: str) -> None:
        """Delete a checkpoint; a missing one raises (NotFoundError), it is not a success."""
        params = {"job_id": job_id, "checkpoint_id": checkpoint_id}
        self._ops.call("deleteCheckpoint", params=params)

    # --- model deployments (plugin) ------------------------------------------------------------

    @property
    def model_deployments(self) -> Any:
        """The model-deployment methods of this client (§14), from the ct-model-deployment plugin.

        `client.model_deployments.create(spec)`, `.wait(d)`, `.drop(d)`, ... Imported on first use,
        so the core package works (and starts fast) without it; missing, it raises ImportError.
        """
        from ct_model_deployment import ModelDeployments

        return ModelDeployments(self)
