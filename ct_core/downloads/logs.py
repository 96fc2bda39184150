"""Execution logs, persisted stdout and metrics of a job, on top of an artifact store.

This module resolves a job's run and its store, then hands the work to `chunks.ChunkDownload` (for
the chunked streams) or does the whole-file copies of execution logs itself. It also adds the
download notices (docs/logs-and-metrics.md): a sub-job with console output but no metrics is never
left out silently, and a download made while chunks may still be arriving says so.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ct_core import fs
from ct_core.constants import SNOWFLAKE_HOST_SUFFIXES
from ct_core.control.polling import TERMINAL_JOB_STATES, normalize_job_status
from ct_core.downloads.artifacts import ArtifactEntry, ArtifactStore, LocalArtifactStore
from ct_core.downloads.chunks import (
    DEFAULT_TRANSFER_TIMEOUT_S,
    GPU_METRICS,
    STDOUT,
    TRAINING_METRICS,
    ChunkDownload,
    Retrier,
    RootMemory,
    Stream,
    belongs_to_job,
    chunk_start_time,
    progress_bar,
    sub_job_dir,
)
from ct_core.downloads.sessions import SessionPool
from ct_core.errors import NoChunksError
from ct_core.operations import AnswerRecorder, control_plane

logger = logging.getLogger("cortex_training")

#: A large execution log gets at least size / this rate (bytes per second) per GET attempt.
EXECUTION_LOG_MIN_RATE = 512 * 1024
#: While a job runs, and this long after it ends, its last chunks may still be arriving.
LATE_CHUNK_WINDOW_S = 120.0
#: A running sub-job with stdout chunks this old and no metrics chunks gets a warning.
MISSING_METRICS_AFTER_S = 120.0
#: A job-status lookup still running once the chunks are written is waited for this long.
STATUS_LOOKUP_GRACE_S = 10.0
EXECUTION_ROOTS = ("_logs", "checkpoints/_logs")
#: Job states after which no new chunk is written: every ended state, the legacy spellings (`done`,
#: `canceled`) included.
_ENDED = TERMINAL_JOB_STATES


class SharedDownloadState:
    """What a client and its for_job twins share between downloads: root memory and kept sessions."""

    def __init__(self) -> None:
        self.roots = RootMemory()
        self.sessions = SessionPool()


def shared_state(client: Any) -> SharedDownloadState:
    """The download state ``client`` shares with its for_job twins (`client.download_state`)."""
    state: SharedDownloadState = client.download_state
    return state


def root_memory(client: Any) -> RootMemory:
    return shared_state(client).roots


def artifact_store(client: Any, job_id: str) -> ArtifactStore:
    """The store holding ``job_id``'s run: a Connector session for a Snowflake account, or the
    routes of ct_local (and compatible servers) beside the REST API."""
    run = client.get_experiment_run(job_id)
    if any(suffix in client.base_url for suffix in SNOWFLAKE_HOST_SUFFIXES):
        from ct_core.downloads.snowflake_store import SnowflakeArtifactStore, connector_for

        return SnowflakeArtifactStore(
            connector_for(client),
            run,
            pool=shared_state(client).sessions,
            location=(str(client.database), str(client.schema)),
        )
    return LocalArtifactStore(client, run)


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    with contextlib.suppress(ValueError):
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def job_and_server_now(client: Any, job_id: str) -> tuple[dict[str, Any], datetime]:
    """GET /{job_id} and the server's clock from the response's Date header (local clock without one)."""
    from email.utils import parsedate_to_datetime

    recorder = AnswerRecorder(client)
    body: Any = control_plane.get_job(recorder, job_id=job_id)
    now = datetime.now(UTC)
    with contextlib.suppress(TypeError, ValueError):
        stamped = parsedate_to_datetime(recorder.answer.header("date") or "")
        now = stamped if stamped.tzinfo else stamped.replace(tzinfo=UTC)
    return (body if isinstance(body, dict) else {}), now


class StatusLookup:
    """GET /{job_id} on a daemon thread, so the notices' lookup never holds a download back.

    It starts before the listing and runs beside the fetches. Its answer is waited for at most
    ``grace`` seconds once the chunks are written; a lookup that is slower, or fails, costs only the
    notices, never the download. The thread is a daemon, so a stuck request cannot delay exit.
    """

    def __init__(self, client: Any, job_id: str) -> None:
        self._finished = threading.Event()
        self._answer: tuple[dict[str, Any], datetime] | None = None
        threading.Thread(
            target=self._lookup, args=(client, job_id), name="ct-job-status", daemon=True
        ).start()

    def _lookup(self, client: Any, job_id: str) -> None:
        try:
            self._answer = job_and_server_now(client, job_id)
        except Exception as error:  # the notices are optional; the download is not
            logger.debug("job status for the download notices of %s is unavailable: %s", job_id, error)
        finally:
            self._finished.set()

    def answer(self, grace: float) -> tuple[dict[str, Any], datetime] | None:
        """The job and the server's clock, or None when the lookup failed or is still running."""
        if not self._finished.wait(grace):
            logger.debug("job status lookup still running after %.0f s; notices skipped", grace)
            return None
        return self._answer


def stall_warning(
    job: dict[str, Any], now: datetime, label: str, sub: str, newest: datetime | None, stale_after: float
) -> str | None:
    """The stall notice: the newest chunk is old while the job, and the sub-job, have been running a
    while."""
    if newest is None or normalize_job_status(job.get("status")) != "running":
        return None
    for entry in job.get("sub_jobs") or []:
        listed = isinstance(entry, dict) and entry.get("sub_job_id") == sub and entry.get("status")
        if listed and str(entry["status"]).lower() != "running":
            return None
    changed = _parse_time(job.get("state_changed_at"))
    if changed is not None and (now - changed).total_seconds() < stale_after:
        return None
    # A chunk's name is the time it starts: its newest line may be up to one upload interval later.
    age = (now - newest).total_seconds()
    if age <= stale_after:
        return None
    return (
        f"newest saved {label} output for {sub} is from {newest.strftime('%Y-%m-%d %H:%M:%S')} UTC "
        f"({int(age // 60)} min ago) while the job is still running; uploads may be stalled. "
        "Contact support if this persists."
    )


def _late_chunk_warning(job: dict[str, Any], now: datetime, label: str, sub: str) -> str | None:
    """The late-chunk notice: while the job runs, or shortly after it ended, the newest chunks may be
    missing.

    ``now`` is the server's clock (the Date header of the job lookup), like the stall check's."""
    status = normalize_job_status(job.get("status"))
    changed = _parse_time(job.get("state_changed_at"))
    recent_end = (
        status in _ENDED and changed is not None and (now - changed).total_seconds() < LATE_CHUNK_WINDOW_S
    )
    if status in ("running", "cancelling") or recent_end:
        return (
            f"the newest {label} chunks of {sub} may still be uploading; download again in a minute "
            "or two to pick them up (with resume=True only what is new is fetched)"
        )
    return None


def warm_artifact_session(client: Any, job_id: str) -> None:
    """Resolve the run and, while sessions are kept and none is kept for this location,
    log one in and keep it. Raises what resolving or logging in raises, keeping nothing."""
    store = artifact_store(client, job_id)
    pool = shared_state(client).sessions
    location = (str(client.database), str(client.schema))
    opener = getattr(store, "session", None)  # only a Connector-backed store has a session to open
    if not pool.keep or pool.has(location) or opener is None:
        store.close()
        return
    try:
        opener()
    except BaseException:
        store.close()
        raise
    store.close(keep=True)


def download_chunked(
    client: Any,
    job_id: str,
    output_dir: str | os.PathLike[str],
    stream: Stream,
    *,
    stale_after_seconds: float | None = 600,
    **options: Any,
) -> list[dict[str, Any]]:
    """Rebuild ``stream`` for every (or each named) sub-job; adds the stall and late-chunk notices."""
    lookup = StatusLookup(client, job_id) if stale_after_seconds is not None else None
    store = artifact_store(client, job_id)
    kept = False
    try:
        # Training rows: a named sub-job without any is left out, never an error.
        missing_ok = stream is TRAINING_METRICS or stream is GPU_METRICS
        download = ChunkDownload(
            store,
            job_id,
            output_dir,
            stream,
            missing_ok=missing_ok,
            root_memory=root_memory(client),
            **options,
        )
        grouped = download.list_chunks()
        # Listed before any GET, so a sub-job named by mistake fails before anything is written.
        console = _console_listing(download, store, grouped, options.get("sub_job_ids"))
        results = download.run(grouped)
        kept = not download.retrier.abandoned and not download.listing_left_running
        known = lookup.answer(STATUS_LOOKUP_GRACE_S) if lookup is not None else None
        if known is None:
            return results
        job, server_now = known
        extra = _missing_metrics_entries(job, server_now, grouped, console) if stream is GPU_METRICS else []
        if stale_after_seconds is not None:
            for entry in results:
                sub = entry["sub_job_id"]
                notices = [
                    # Training rows come only with training calls: a quiet trainer is not a stall.
                    None
                    if stream is TRAINING_METRICS
                    else stall_warning(
                        job,
                        server_now,
                        stream.label,
                        sub,
                        chunk_start_time(grouped[sub].paths[-1]),
                        stale_after_seconds,
                    ),
                    _late_chunk_warning(job, server_now, stream.label, sub),
                ]
                for notice in filter(None, notices):
                    logger.warning("%s", notice)
                    entry.setdefault("warnings", []).append(notice)
        return results + extra
    finally:
        store.close(keep=kept)


def _console_listing(
    download: ChunkDownload,
    store: ArtifactStore,
    grouped: dict[str, Any],
    sub_job_ids: Sequence[str] | None,
) -> dict[str, Any]:
    """For a metrics download, the stdout chunks of the same sub-jobs; {} for other streams.

    A sub-job named in ``sub_job_ids`` may lack metrics as long as it has stdout; one with neither
    is a NoChunksError, raised before any GET.
    """
    if download.stream is not GPU_METRICS:
        return {}
    stdout = ChunkDownload(
        store, download.job_id, download.output_dir, STDOUT, sub_job_ids=sub_job_ids, missing_ok=True
    )
    console = stdout.list_chunks()
    named = list(sub_job_ids) if sub_job_ids is not None else []
    unknown = [s for s in named if s not in grouped and s not in console]
    if unknown:
        found = set(grouped) | set(console)
        if len(named) == 1:
            # Only that sub-job's folders were listed: list the roots whole to say which have some.
            for stream in (GPU_METRICS, STDOUT):
                whole = ChunkDownload(store, download.job_id, download.output_dir, stream, missing_ok=True)
                found |= set(whole.list_chunks())
        available = sorted(found - set(unknown))
        raise NoChunksError(
            f"no metrics or stdout chunks for {', '.join(unknown)}", sub_job_ids=unknown, available=available
        )
    return console


def _missing_metrics_entries(
    job: dict[str, Any], now: datetime, grouped: dict[str, Any], console: dict[str, Any]
) -> list[dict[str, Any]]:
    """Sub-jobs with stdout but no metrics get an entry with a warning instead of nothing.

    Ages are judged with ``now``, the server's clock."""
    status = normalize_job_status(job.get("status"))
    changed = _parse_time(job.get("state_changed_at"))
    entries = []
    for sub in sorted(set(console) - set(grouped)):
        if status in _ENDED:
            notice = (
                f"no GPU metrics were saved for {sub}: it ran on an image from before metrics were "
                "uploaded, or ended before its first metrics upload"
            )
        else:
            first = chunk_start_time(console[sub].paths[0])
            since = max((t for t in (first, changed) if t is not None), default=None)
            if since is None or (now - since).total_seconds() < MISSING_METRICS_AFTER_S:
                continue
            notice = f"{sub} has saved stdout but no metrics yet; metric uploads may be stalled"
        logger.warning("%s", notice)
        entries.append(
            {
                "sub_job_id": sub,
                "filename": GPU_METRICS.filename,
                "saved_path": None,
                "chunk_count": 0,
                "first_artifact_uri": None,
                "last_artifact_uri": None,
                "warnings": [notice],
            }
        )
    return entries


# --- execution logs ------------------------------------------------------------------------------


def _execution_files(
    store: ArtifactStore, job_id: str, sub_job_ids: Sequence[str] | None, retrier: Retrier
) -> dict[tuple[str, str], ArtifactEntry]:
    """(sub_job_id, filename) -> entry; a file under both roots keeps the ``_logs/`` copy."""
    single = sub_job_ids[0] if sub_job_ids is not None and len(sub_job_ids) == 1 else None
    chosen: dict[tuple[str, str], ArtifactEntry] = {}
    for root in EXECUTION_ROOTS:
        folder = f"{root}/{single}" if single and belongs_to_job(single, job_id) else root
        for entry in retrier.run(f"LIST {folder}/", lambda f=folder: store.list(f)):  # type: ignore[misc]
            sub, _, filename = entry.path[len(root) + 1 :].partition("/")
            if not filename or not belongs_to_job(sub, job_id):
                continue
            chosen.setdefault((sub, filename), entry)
    if sub_job_ids is not None:
        have = {sub for sub, _ in chosen}
        missing = [s for s in sub_job_ids if s not in have]
        if missing:
            if single:
                have = {s for s, _ in _execution_files(store, job_id, None, retrier)}
            available = sorted(have - set(missing))
            raise NoChunksError(
                f"no execution logs for {', '.join(missing)}", sub_job_ids=missing, available=available
            )
        chosen = {key: value for key, value in chosen.items() if key[0] in sub_job_ids}
    return dict(sorted(chosen.items()))


def _attempt_timeout(transfer_timeout_seconds: float | None, size: int) -> float | None:
    if transfer_timeout_seconds is None:
        return None
    return max(transfer_timeout_seconds, size / EXECUTION_LOG_MIN_RATE)


def download_execution_logs(
    client: Any,
    job_id: str,
    output_dir: str | os.PathLike[str],
    *,
    resume: bool = False,
    sub_job_ids: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    transfer_timeout_seconds: float | None = DEFAULT_TRANSFER_TIMEOUT_S,
) -> list[dict[str, Any]]:
    """Every execution-log file to ``<output_dir>/<sub_job_id>/<filename>``, streamed (mode 0600; each
    saved_path absolute, whatever ``output_dir`` is)."""
    output_dir = Path(output_dir).expanduser().resolve()
    store = artifact_store(client, job_id)
    cancelled = threading.Event()
    listing = Retrier(cancelled, transfer_timeout_seconds)
    fetches: list[Retrier] = []
    kept = saved_any = False
    try:
        files = _execution_files(store, job_id, sub_job_ids, listing)
        results = []
        for index, ((sub, filename), entry) in enumerate(files.items(), start=1):
            dest = sub_job_dir(Path(output_dir), sub) / filename
            meta_path = dest.with_name(f".{dest.name}.artifact.json")
            listed = {"size": entry.size, "md5": entry.md5}
            unchanged = False
            if resume and dest.is_file():
                with contextlib.suppress(OSError, ValueError):
                    unchanged = json.loads(meta_path.read_text(encoding="utf-8")) == listed
            if not unchanged:
                dest.parent.mkdir(parents=True, exist_ok=True)
                retrier = Retrier(cancelled, _attempt_timeout(transfer_timeout_seconds, entry.size))
                fetches.append(retrier)
                _fetch_whole(store, entry, dest, retrier)
                fs.atomic_write(meta_path, json.dumps(listed), durable=False)
                saved_any = True
            if progress is not None:
                # One finished line per file, in the form of the chunked downloads' lines.
                bar = progress_bar(index, len(files))
                progress(f"execution logs: {bar} {index}/{len(files)} {sub}/{filename}\n")
            results.append(
                {
                    "sub_job_id": sub,
                    "filename": filename,
                    "artifact_uri": store.run_uri + entry.path,
                    "saved_path": str(dest),
                    "bytes": dest.stat().st_size,
                    "unchanged": unchanged,
                }
            )
        # A session that had an attempt abandoned past its time limit is never kept.
        kept = not listing.abandoned and not any(r.abandoned for r in fetches)
        return results
    except BaseException as error:
        if saved_any:
            with contextlib.suppress(AttributeError):
                error.download_progress_saved = True  # type: ignore[attr-defined]
        raise
    finally:
        store.close(keep=kept)


def _fetch_whole(store: ArtifactStore, entry: ArtifactEntry, dest: Path, retrier: Retrier) -> None:
    """GET into a hidden owner-only directory beside ``dest``, then move into place (the old copy
    stays as it was if anything fails)."""
    stages: list[Path] = []

    def attempt() -> Path:
        stage = Path(tempfile.mkdtemp(prefix=".execution-log-", suffix=".tmp", dir=dest.parent))
        stages.append(stage)
        return store.get(entry.path, stage, timeout=retrier.timeout)

    try:
        local = retrier.run(f"GET {entry.path}", attempt)
        os.chmod(local, 0o600)
        fs.atomic_replace(local, dest, durable=False)
    finally:
        for stage in stages:
            shutil.rmtree(stage, ignore_errors=True)


def fetch_execution_logs(client: Any, job_id: str) -> list[dict[str, Any]]:
    """The same files as download_execution_logs, bodies in memory (UTF-8 with replacement)."""
    store = artifact_store(client, job_id)
    cancelled = threading.Event()
    try:
        retrier = Retrier(cancelled, DEFAULT_TRANSFER_TIMEOUT_S)
        files = _execution_files(store, job_id, None, retrier)
        results = []
        with tempfile.TemporaryDirectory(prefix="ct-execution-logs-") as temp:
            for (sub, filename), entry in files.items():
                folder = Path(tempfile.mkdtemp(dir=temp))
                local = retrier.run(f"GET {entry.path}", lambda e=entry, f=folder: store.get(e.path, f))  # type: ignore[misc]
                results.append(
                    {
                        "sub_job_id": sub,
                        "filename": filename,
                        "artifact_uri": store.run_uri + entry.path,
                        "content": local.read_bytes().decode("utf-8", errors="replace"),
                    }
                )
        return results
    finally:
        store.close()
