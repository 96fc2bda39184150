"""`CortexTrainingClient`: the SDK facade over the Cortex Training REST API.

Method names and signatures follow the reference client so code ports by changing an import; the
answers are plain dicts and lists. The facade owns the control-plane methods (jobs, the account
list, capacity, checkpoints) and forwards the rest to its parts, each built with an explicit
`ClientContext` (ct_core.context): the data plane (`ct_core.data.plane.DataPlane`), generation
(`ct_core.data.generate.Generation`) and downloads (`ct_core.downloads.Downloads`).

Every request goes through the one `Transport.request()` (ct_core.http.transport): URLs from the
route table generated out of openapi/, the retry policy of ct_core.http.retry, error mapping in
ct_core.errors. Answer shaping lives in ct_core.control.shaping, create-body checks in
ct_core.config.validation, connection choice in ct_core.connect.

Plugins and scripts that need an operation the facade has no method for use the public low-level
interface: `client.request(operation_id, ...)`, `client.stream(...)`, `client.url_for(...)` and
`client.rest_prefix`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, cast

from ct_core import errors
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
from ct_core.context import ClientContext, Credential, PollSettings, forward_lazily, forward_to
from ct_core.control import shaping as _control_plane
from ct_core.control.polling import TERMINAL_JOB_STATES, PollSchedule, normalize_job_status
from ct_core.control.shaping import (
    DEFAULT_BREAKDOWN_DIMENSIONS,
    create_job_body_from_job,
)
from ct_core.data.chunk_groups import MAX_REQUEST_CHUNK_BYTES
from ct_core.data.plane import DataPlane
from ct_core.data.results import RequestRegistry
from ct_core.downloads import DownloadContext, Downloads
from ct_core.errors import JobTerminalError, JobWaitTimeout
from ct_core.http import retry as _retry
from ct_core.http.pool import Road
from ct_core.http.transport import (
    AuthProvider,
    Response,
    StreamedResponse,
    Transport,
    capacity_timeout,
    validate_request_timeout,
)
from ct_core.operations import account, control_plane

if TYPE_CHECKING:
    from ct_core.config.typed import Hardware, SubJobConfig
    from ct_core.connect.resolve import ConnectionOptions, ResolvedConnection
    from ct_core.data.generate import Generation
    from ct_core.downloads.logs import SharedDownloadState
    from ct_core.operations import models as api_models
    from ct_core.runs import DatasetsAPI, RunsAPI

__all__ = ["CortexTrainingClient", "Credential", "create_job_body_from_job"]

#: The plugin that gives a client its model-deployment methods (hook `ct_model_deployments`): its
#: entry-point name and its distribution, named when it is missing.
MODEL_DEPLOYMENT_PLUGIN = "model-deployment"
MODEL_DEPLOYMENT_DISTRIBUTION = "ct-model-deployment"
#: Experiment runs never change for a job; remember the newest ones.
EXPERIMENT_RUN_CACHE_SIZE = 256


def _account_list_predicate(error: BaseException) -> bool:
    # The account list answers 404 when the route is missing or disabled: that never heals.
    if isinstance(error, errors.APIError) and error.status_code == 404:
        return False
    return _retry.is_transient(error)


class CortexTrainingClient:
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
        sleep: Callable[[float], None] | None = None,
        max_request_chunk_bytes: int = MAX_REQUEST_CHUNK_BYTES,
        token: str | None = None,
        request_waiter: Callable[[str, float], bool] | None = None,
        road: Road | None = None,
    ) -> None:
        """`token`, when given, signs every request as `Authorization: Bearer <token>` (a server that
        wants a bearer token, such as a ct_local started with --token); it is never shown in an
        error message. It cannot be combined with `auth`, which signs requests itself.

        `request_waiter(request_id, seconds) -> bool`, for code running inside the server's own
        process (a service of `ct local serve`): blocks until the request may have finished (True)
        or `seconds` passed (False). `poll_request` then reads a request's status when the waiter
        returns, instead of every `poll_interval` (see docs/plugins.md).

        `road`, also only for code inside the server's process: carries the requests to the server
        without a socket while it is usable (`ct_core.http.pool.Road`; see docs/plugins.md)."""
        # Checked in this order so the first bad argument names itself (tests pin the messages);
        # each rule is a thunk so a later comparison never runs ahead of an earlier failure.
        rules: tuple[tuple[Callable[[], bool], str], ...] = (
            (lambda: poll_interval > 0, "poll_interval must be > 0"),
            (lambda: poll_timeout > 0, "poll_timeout must be > 0"),
            (lambda: poll_backoff_multiplier >= 1.0, "poll_backoff_multiplier must be >= 1.0"),
            (lambda: poll_max_interval >= poll_interval, "poll_max_interval must be >= poll_interval"),
            (lambda: pool_maxsize > 0, "pool_maxsize must be > 0"),
            (lambda: max_retries >= 0, "max_retries must be >= 0"),
            (lambda: max_request_chunk_bytes > 0, "max_request_chunk_bytes must be > 0"),
        )
        for holds, message in rules:
            if not holds():
                raise ValueError(message)
        fixed_headers = dict(headers or {})
        if token is not None:
            if not isinstance(token, str) or not token.strip():
                raise ValueError("token must be a non-empty string")
            if auth is not None:
                raise ValueError("pass token= or auth=, not both: an auth provider signs requests itself")
            fixed_headers = {k: v for k, v in fixed_headers.items() if k.lower() != "authorization"}
            fixed_headers["Authorization"] = f"Bearer {token.strip()}"
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
            headers=fixed_headers,
            verify=verify_ssl,
            timeout=self.request_timeout,
            pool_maxsize=pool_maxsize,
            max_retries=max_retries,
            auth=auth,
            sleep=sleep,
            path_defaults={"database": database, "schema": schema, "endpoint": endpoint},
            road=road,
        )
        self._owns_transport = True
        self.max_request_chunk_bytes = max_request_chunk_bytes
        self.request_waiter = request_waiter
        # Shared with the clients for_job derives, keyed by location, so it spans databases.
        self._experiment_runs = functools.lru_cache(maxsize=EXPERIMENT_RUN_CACHE_SIZE)(
            self._fetch_experiment_run
        )
        self._build_parts()

    def _build_parts(self, shared_downloads: SharedDownloadState | None = None) -> None:
        ctx = ClientContext(
            transport=self._transport,
            requests=RequestRegistry(),
            poll=PollSettings(
                interval=self.poll_interval,
                timeout=self.poll_timeout,
                multiplier=self.poll_backoff_multiplier,
                max_interval=self.poll_max_interval,
            ),
            sleep=self._transport.sleep,
            max_request_chunk_bytes=self.max_request_chunk_bytes,
            get_job=self.get_job,
            list_checkpoints=self.list_checkpoints,
            model_deployments=lambda: self.model_deployments,
            request_waiter=self.request_waiter,
        )
        self._ctx = ctx
        self._data = DataPlane(ctx)
        self._generation_part: Generation | None = None  # built with the first generate call
        self._downloads = Downloads(self._download_context(shared_downloads))

    def _download_context(self, shared: SharedDownloadState | None) -> DownloadContext:
        return DownloadContext(
            base_url=self.base_url,
            database=self.database,
            schema=self.schema,
            verify_ssl=self.verify_ssl,
            request_timeout=self.request_timeout,
            credential_of=lambda: self.credential,
            request=self._transport.request,
            stream=self._transport.stream,
            list_checkpoints=self.list_checkpoints,
            export_checkpoint=self.export_checkpoint,
            get_experiment_run=self.get_experiment_run,
            shared=shared,
        )

    @property
    def _generation(self) -> Generation:
        if self._generation_part is None:
            from ct_core.data.generate import Generation

            self._generation_part = Generation(self._ctx, self._data)
        return self._generation_part

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
        account host. `telemetry_timeout` is accepted for compatibility; ct sends no telemetry.
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
        """Use a Snowflake connection profile from connections.toml.

        The connection is chosen by the one resolver the `ct` CLI uses (`ct_core.connect.resolve`), in
        its profiles-first order: the profile is `connection`, else CORTEX_TRAINING_CONNECTION, else
        the one `ct login` remembered, else the Connector's default; only when no profile exists are
        CORTEX_TRAINING_HOST and CORTEX_TRAINING_PAT used (CI). See docs/configuration.md.
        """
        from ct_core.connect.resolve import ConnectionOptions, resolve_connection

        options = ConnectionOptions(
            connection=connection, database=database, schema=schema, endpoint=endpoint, verify_ssl=verify_ssl
        )
        return cls.from_resolved(resolve_connection(options, profiles_first=True), **client_kwargs)

    @classmethod
    def from_resolved(cls, resolved: ResolvedConnection, **client_kwargs: Any) -> CortexTrainingClient:
        """Build the client for a connection `ct_core.connect.resolve` resolved."""
        common: dict[str, Any] = {
            "database": resolved.database,
            "schema": resolved.schema,
            "endpoint": resolved.endpoint,
            "poll_interval": resolved.poll_interval,
            "poll_timeout": resolved.poll_timeout,
            **client_kwargs,
        }
        if resolved.mode == "base_url":
            assert resolved.base_url is not None
            # A token here is the server's plain bearer token (a token-protected `ct local serve`).
            return cls(
                base_url=resolved.base_url, verify_ssl=resolved.verify_ssl, token=resolved.pat, **common
            )
        if resolved.mode == "pat":
            assert resolved.host is not None and resolved.pat is not None
            return cls.from_pat(
                host=resolved.host, pat=resolved.pat, verify_ssl=resolved.verify_ssl, **common
            )
        from ct_core.connect import snowflake as _snowflake

        assert resolved.profile is not None
        session = _snowflake.open_profile_session(resolved.profile)
        scheme, _, host = _snowflake.session_server_url(session).partition("://")
        return cls(
            base_url=f"{scheme}://{rest_host(host)}",
            verify_ssl=resolved.verify_ssl,
            auth=_snowflake.SnowflakeSessionAuth(resolved.profile, session),
            **common,
        )

    @classmethod
    def from_options(
        cls, options: ConnectionOptions | None = None, **client_kwargs: Any
    ) -> CortexTrainingClient:
        """Resolve `options` (flags, environment, remembered login) and build the client."""
        from ct_core.connect.resolve import resolve_connection

        return cls.from_resolved(resolve_connection(options), **client_kwargs)

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
        return self._twin(
            database=str(database),
            schema=str(schema),
            transport=self._transport.bind(database=str(database), schema=str(schema)),
        )

    def with_polling(self, interval: float, max_interval: float) -> CortexTrainingClient:
        """A client that polls on another schedule, sharing this one's connections and auth.

        For loops that wait on many short requests (the runs service polls every fwd-bwd and
        step): `interval` is the first wait, growing by the client's multiplier up to
        `max_interval`. Closing it closes nothing shared.
        """
        if not 0 < interval <= max_interval:
            raise ValueError("with_polling needs 0 < interval <= max_interval")
        return self._twin(poll_interval=float(interval), poll_max_interval=float(max_interval))

    def _twin(
        self,
        *,
        database: str | None = None,
        schema: str | None = None,
        transport: Transport | None = None,
        poll_interval: float | None = None,
        poll_max_interval: float | None = None,
    ) -> CortexTrainingClient:
        """A client sharing this one's connections, auth, experiment-run cache and download state,
        with the settings given changed; it owns nothing, so closing it closes nothing shared.
        Every setting is copied by name (no attribute cloning), then its parts are built anew."""
        twin = object.__new__(type(self))
        twin.base_url, twin.endpoint = self.base_url, self.endpoint
        twin.database = self.database if database is None else database
        twin.schema = self.schema if schema is None else schema
        twin.poll_interval = self.poll_interval if poll_interval is None else poll_interval
        twin.poll_timeout = self.poll_timeout
        twin.poll_backoff_multiplier = self.poll_backoff_multiplier
        twin.poll_max_interval = self.poll_max_interval if poll_max_interval is None else poll_max_interval
        twin.max_retries, twin.request_timeout = self.max_retries, self.request_timeout
        twin.verify_ssl, twin.max_request_chunk_bytes = self.verify_ssl, self.max_request_chunk_bytes
        twin.request_waiter = self.request_waiter
        twin._auth, twin._pat_host = self._auth, self._pat_host
        twin._transport = self._transport if transport is None else transport
        twin._owns_transport = False
        twin._experiment_runs = self._experiment_runs
        twin._build_parts(shared_downloads=self._downloads.state)
        return twin

    def close(self) -> None:
        """Release the connections (and the Snowflake session) this client owns."""
        if not self._owns_transport:
            return
        self._downloads.close_sessions()
        self._transport.close()
        closer = getattr(self._auth, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> CortexTrainingClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def create_snowpark_session(self) -> Any:
        """A Snowpark Session signed in with this client's credentials.

        A profile client opens an independent session from its profile; a PAT client signs in
        with its token as its own user and role. The session uses this client's database and
        schema, and belongs to the caller (close it). Needs the ``snowpark`` extra.
        """
        from ct_core.connect.snowpark import snowpark_session

        return snowpark_session(self)

    # --- the low-level interface (plugins, scripts) --------------------------------------------

    def request(self, operation_id: str, **options: Any) -> Response:
        """Send one REST operation of the spec by its operationId, under the client's policy.

        The same path every method of the client takes (retries, timeouts, auth, errors mapped to
        `APIError`). `options` are those of `Transport.request`: `params` (path parameters over this
        client's database, schema and endpoint), `query`, `json_body` or `content`, `predicate`,
        `job_id`, `timeout`, `max_retries`. Returns the 2xx `Response` (`.json()`, `.content`).
        """
        return self._transport.request(operation_id, **options)

    def stream(self, operation_id: str, **options: Any) -> AbstractContextManager[StreamedResponse]:
        """Send one operation and read the answer as it arrives: ``with client.stream(...) as r:``.

        One attempt (no retry); for server-sent events and files. Options as in `request`, without
        the retry ones.
        """
        return self._transport.stream(operation_id, **options)

    def url_for(self, operation_id: str, **params: Any) -> str:
        """The absolute URL of an operation, path parameters filled (this client's location by default)."""
        return self._transport.url(operation_id, params)

    @property
    def rest_prefix(self) -> str:
        """The absolute URL of this client's per-schema Cortex Training routes."""
        return self.url_for("listJobs")

    @property
    def credential(self) -> Credential:
        """How this client signs in (see `Credential`)."""
        profile = getattr(self._auth, "connection", None)
        if self._auth is not None and profile:
            return Credential("profile", profile=str(profile))
        bearer = self._transport.header("Authorization") or ""
        if self._pat_host and bearer.startswith("Bearer "):
            return Credential("pat", host=self._pat_host, token=bearer.removeprefix("Bearer "))
        return Credential("none")

    @property
    def sleep(self) -> Callable[[float], None]:
        """How the client waits between retries and polls (`time.sleep` unless injected)."""
        return self._transport.sleep

    def _poll_schedule(self) -> PollSchedule:
        return self._ctx.poll_schedule()

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
        from ct_core.config.validation import build_create_body  # the create-body rules load to create

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
        from ct_core.config.validation import validate_create_body

        normalized = validate_create_body(body)
        # Retried only when it never left this machine (the spec's rule for createJob).
        answer: Any = control_plane.create_job(
            self._transport, body=cast("api_models.CreateJobRequest", normalized)
        )
        answer = answer if isinstance(answer, dict) else {}
        job_id = answer.get("job_id")
        if isinstance(job_id, str) and job_id:
            self._transport.recent_jobs.add(job_id)
        return answer

    def get_job(self, job_id: str) -> dict[str, Any]:
        """The job record: status, reason, times, hardware, timeouts and every sub-job (operation getJob)."""
        answer: Any = control_plane.get_job(self._transport, job_id=job_id)
        return answer or {}

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
        answer: Any = control_plane.list_jobs(self._transport, status=status)
        jobs = answer.get("jobs") if isinstance(answer, dict) else None
        return list(jobs or [])

    def cancel_job(self, job_id: str) -> None:
        """Cancel a job; repeating it while cancelling or cancelled succeeds."""
        # A 409 here means the job is failed or terminated: a state, not a hiccup, so it is never
        # retried (the spec's rule for cancelJob).
        control_plane.cancel_job(self._transport, job_id=job_id)

    def get_experiment_run(self, job_id: str) -> dict[str, Any]:
        """`{"experiment_name": ..., "experiment_run_name": ...}` of a job (cached; failures are not)."""
        return dict(self._experiment_runs(self.database, self.schema, job_id))

    def _fetch_experiment_run(self, database: str, schema: str, job_id: str) -> dict[str, Any]:
        answer: Any = control_plane.get_experiment_run(
            self._transport, job_id=job_id, database=database, schema=schema
        )
        return answer or {}

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
        """One page of the jobs the caller can see across the account, newest first (listAccountJobs).

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
            answer: Any = account.list_account_jobs(
                self._transport,
                **query,
                predicate=_account_list_predicate,
                max_retries=max_retries,
                timeout=timeout,
            )
        except errors.APIError as error:
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
        answer: Any = account.list_models(self._transport)
        models = answer.get("models") if isinstance(answer, dict) else None
        return list(models or [])

    def _capacity(self, hardware: Hardware | str | None, breakdown: str | None) -> Any:
        from ct_core.config.typed import hardware_wire

        # One attempt (the spec's rule for getCapacity), under the capacity lookup's shorter bound.
        return control_plane.get_capacity(
            self._transport,
            hardware=hardware_wire(hardware) if hardware is not None else None,
            breakdown=breakdown,
            timeout=capacity_timeout(self.request_timeout),
        )

    def get_capacity(self, hardware: Hardware | str | None = None) -> dict[str, Any]:
        """The account's GPU ceiling and usage, with all six keys filled (operation getCapacity).

        One attempt, bounded by 10 s connect / 30 s read; a 409 517604 (unsupported hardware) is raised.
        """
        return _control_plane.normalize_capacity(self._capacity(hardware, None))

    def get_capacity_breakdown(
        self,
        hardware: Hardware | str | None = None,
        *,
        dimensions: Iterable[str] | str = DEFAULT_BREAKDOWN_DIMENSIONS,
    ) -> dict[str, Any]:
        """Capacity plus the usage split by `dimensions` (job_type, submitted_by), normalized."""
        names = _control_plane.breakdown_dimensions(dimensions)
        answer = self._capacity(hardware, ",".join(names))
        return _control_plane.normalize_capacity_breakdown(answer, names)

    # --- checkpoints ---------------------------------------------------------------------------

    def list_checkpoints(self, job_id: str) -> list[dict[str, Any]]:
        """The job's checkpoints, in no guaranteed order (select by created_at)."""
        answer: Any = control_plane.list_checkpoints(self._transport, job_id=job_id)
        checkpoints = answer.get("checkpoints") if isinstance(answer, dict) else None
        return list(checkpoints or [])

    def export_checkpoint(self, job_id: str, checkpoint_id: str) -> dict[str, Any]:
        """Short-lived download links of a checkpoint's files: `{checkpoint_id, files, expires_at}`."""
        # No job_id grace (the spec's rule "settled"): a checkpoint exists only long after its job
        # was created, so a 517601 here (missing checkpoint or job) is final at once.
        answer: Any = control_plane.export_checkpoint(
            self._transport, job_id=job_id, checkpoint_id=checkpoint_id
        )
        return answer or {}

    def delete_checkpoint(self, job_id: str, checkpoint_id: str) -> None:
        """Delete a checkpoint; a missing one raises (NotFoundError), it is not a success."""
        control_plane.delete_checkpoint(self._transport, job_id=job_id, checkpoint_id=checkpoint_id)

    # --- managed runs and dataset builds (the runs service) ------------------------------------

    @property
    def datasets(self) -> DatasetsAPI:
        """Dataset builds of this schema: `client.datasets.build(path)`, `.get(ds)`, `.wait(ds)`.

        Imported on first use; docs/runs.md describes the methods. A fresh, stateless view each
        time, so a `for_job` twin talks to its own schema.
        """
        from ct_core.runs import DatasetsAPI

        return DatasetsAPI(self._ctx.operations())

    @property
    def runs(self) -> RunsAPI:
        """Managed training runs of this schema: `client.runs.start(spec)`, `.get`, `.list`,
        `.metrics`, `.follow_metrics`, `.logs`, `.follow_logs`, `.cancel`, `.wait`, `.resume`,
        `.register`, `.models`, `.get_model`, `.deploy`, `.chat`.

        Imported on first use; docs/runs.md describes the methods.
        """
        from ct_core.runs import RunsAPI

        return RunsAPI(self._ctx.operations())

    # --- model deployments (plugin) ------------------------------------------------------------

    @property
    def model_deployments(self) -> Any:
        """The model-deployment methods of this client, from the plugin that provides them.

        `client.model_deployments.create(spec)`, `.wait(d)`, `.drop(d)`, ... The ct-model-deployment
        plugin provides them through the `ct_model_deployments` hook (ct itself imports no
        plugin); without it, this raises `MissingPluginError` naming it. docs/model-deployments.md
        describes the methods. The same methods are on the client under the contract's names
        (`create_model_deployment`, `wait_for_model_deployment`, ...).
        """
        from ct_core.plugins import get_plugin_manager, missing_plugin_error

        pm = get_plugin_manager()
        methods = pm.hook.ct_model_deployments(client=self)
        if methods is None:
            raise missing_plugin_error(
                pm,
                needs="model deployments",
                entry_point=MODEL_DEPLOYMENT_PLUGIN,
                distribution=MODEL_DEPLOYMENT_DISTRIBUTION,
            )
        return methods

    def create_model_deployment(self, spec: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
        """Create a model deployment from a spec (a dict or a JSON file); returns its metadata."""
        return self.model_deployments.create_model_deployment(spec)

    def list_model_deployments(
        self,
        statuses: Iterable[str] | None = None,
        *,
        on_malformed: Callable[[dict[str, str]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """The schema's model deployments, oldest first; only those in `statuses` (any case) if given.

        A deployment whose record is malformed is left out and reported to `on_malformed` (its
        `{"deployment", "status", "error"}`), or without it as a `MalformedDeploymentWarning`.
        """
        return self.model_deployments.list_model_deployments(statuses, on_malformed=on_malformed)

    def describe_model_deployment(self, deployment: str) -> dict[str, Any]:
        """The metadata of one model deployment (`sf-ct-<UUID>`)."""
        return self.model_deployments.describe_model_deployment(deployment)

    def get_model_deployment(self, deployment: str) -> dict[str, Any]:
        """The metadata of one model deployment (the same as `describe_model_deployment`)."""
        return self.model_deployments.get_model_deployment(deployment)

    def wait_for_model_deployment(self, deployment: str, timeout: float | None = None) -> dict[str, Any]:
        """Wait until the deployment is READY (default limit: the client's poll timeout); never drops it."""
        return self.model_deployments.wait_for_model_deployment(deployment, timeout)

    def drop_model_deployment(self, deployment: str) -> dict[str, Any]:
        """Drop a model deployment (cancels its backing job when it still runs)."""
        return self.model_deployments.drop_model_deployment(deployment)

    def download_model_deployment_logs(
        self, deployment: str, output_dir: str | os.PathLike[str], log_type: str = "execution"
    ) -> list[dict[str, Any]]:
        """Save the deployment's execution (or `stdout`) logs directly into `output_dir`."""
        return self.model_deployments.download_model_deployment_logs(deployment, output_dir, log_type)

    def download_model_deployment_metrics(
        self, deployment: str, output_dir: str | os.PathLike[str]
    ) -> list[dict[str, Any]]:
        """Save the deployment's GPU and system metrics directly into `output_dir`."""
        return self.model_deployments.download_model_deployment_metrics(deployment, output_dir)

    def model_deployment_base_url(self, deployment: str | None = None) -> str:
        """The OpenAI-compatible base URL of this client's schema (`<prefix>/inference/v1`)."""
        return self.model_deployments.model_deployment_base_url(deployment)

    # --- the data plane (ct_core.data.plane.DataPlane) -----------------------------------------

    forward_backward = forward_to("_data", DataPlane.forward_backward)
    step = forward_to("_data", DataPlane.step)
    save = forward_to("_data", DataPlane.save)
    load = forward_to("_data", DataPlane.load)
    checkpoint_id_from_save_result = staticmethod(DataPlane.checkpoint_id_from_save_result)
    operation = forward_to("_data", DataPlane.operation)
    forward = forward_to("_data", DataPlane.forward)
    fwd = forward
    fwd_no_grad = forward
    weight_sync = forward_to("_data", DataPlane.weight_sync)
    bootstrap_router_replay = forward_to("_data", DataPlane.bootstrap_router_replay)
    router_replay_discard = forward_to("_data", DataPlane.router_replay_discard)
    reset_prefix_cache = forward_to("_data", DataPlane.reset_prefix_cache)
    cancel_request = forward_to("_data", DataPlane.cancel_request)
    get_request_status = forward_to("_data", DataPlane.get_request_status)
    poll_request = forward_to("_data", DataPlane.poll_request)
    pipeline = forward_to("_data", DataPlane.pipeline)
    handle = forward_to("_data", DataPlane.handle)
    tail_logs = forward_to("_data", DataPlane.tail_logs)
    stream_logs = forward_to("_data", DataPlane.stream_logs)
    default_log_sub_job = forward_to("_data", DataPlane.default_log_sub_job)
    tail_events = forward_to("_data", DataPlane.tail_events)
    stream_events = forward_to("_data", DataPlane.stream_events)

    # --- generation (ct_core.data.generate.Generation) -----------------------------------------

    if TYPE_CHECKING:
        generate = forward_to("_generation", Generation.generate)
        generate_stream = forward_to("_generation", Generation.generate_stream)
        iter_generate_events = forward_to("_generation", Generation.iter_generate_events)
    else:  # generation's module loads with the first call
        generate = forward_lazily("_generation", "ct_core.data.generate", "Generation.generate")
        generate_stream = forward_lazily("_generation", "ct_core.data.generate", "Generation.generate_stream")
        iter_generate_events = forward_lazily(
            "_generation", "ct_core.data.generate", "Generation.iter_generate_events"
        )

    # --- downloads (ct_core.downloads.Downloads) -----------------------------------------------

    download_checkpoint = forward_to("_downloads", Downloads.download_checkpoint)
    warm_artifact_session = forward_to("_downloads", Downloads.warm_artifact_session)
    download_execution_logs = forward_to("_downloads", Downloads.download_execution_logs)
    fetch_execution_logs = forward_to("_downloads", Downloads.fetch_execution_logs)
    download_stdout_logs = forward_to("_downloads", Downloads.download_stdout_logs)
    download_metrics = forward_to("_downloads", Downloads.download_metrics)
    download_training_metrics = forward_to("_downloads", Downloads.download_training_metrics)

    @property
    def download_state(self) -> Any:
        """What downloads remember between calls (root listings, kept sessions); shared with for_job."""
        return self._downloads.state

    @property
    def keep_artifact_sessions(self) -> bool:
        """Keep a successful download's Connector session for the next one (default False).

        Shared with the clients for_job makes; turning it off closes the kept sessions.
        """
        return self._downloads.keep_artifact_sessions

    @keep_artifact_sessions.setter
    def keep_artifact_sessions(self, value: bool) -> None:
        self._downloads.keep_artifact_sessions = value
