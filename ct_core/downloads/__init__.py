"""Downloads: checkpoint files over presigned links, and experiment-run artifacts.

`Downloads` holds the download methods of `CortexTrainingClient` (the facade forwards to it); the
work itself lives in the modules of this package, one concern each: `checkpoint` (export links,
resumable streaming),
`artifacts` (the artifact store interface), `chunks` (rebuilding a file from gzip chunks) and `logs`
(execution logs, stdout and metrics of a job). The user guides are docs/checkpoint-download.md and
docs/logs-and-metrics.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ct_core.constants import DEFAULT_TRANSFER_TIMEOUT_S
from ct_core.errors import CheckpointDownloadError, ChunkDamaged

# The modules doing the work load with the first download: a client that never downloads (a command
# line reading one job) does not import the link client, the chunk rebuilder or their dependencies.
if TYPE_CHECKING:
    from ct_core.context import Credential
    from ct_core.downloads.checkpoint import BytesCallback, FileCallback
    from ct_core.downloads.chunks import ChunkCallback, PreviewCallback, ProgressCallback
    from ct_core.downloads.logs import SharedDownloadState
    from ct_core.http.transport import Response, StreamedResponse

__all__ = ["CheckpointDownloadError", "ChunkDamaged", "DownloadContext", "Downloads"]


class DownloadContext:
    """What the download modules read of their client, and nothing else of it: where (URL, database,
    schema), as whom (`credential`), the client's request path (`request`, `stream`, its timeouts and
    TLS check) and the three control-plane reads a download needs. The modules take it wherever they
    take a client (they read the same names), so a plugin may still hand them a client. `shared` is
    the root memory and kept Connector sessions, shared with the client's for_job twins. (A plain
    class: a dataclass costs a millisecond of every command's start-up to define.)"""

    def __init__(
        self,
        *,
        base_url: str,
        database: str,
        schema: str,
        verify_ssl: bool | str,
        request_timeout: tuple[float, float],
        credential_of: Callable[[], Credential],
        request: Callable[..., Response],
        stream: Callable[..., AbstractContextManager[StreamedResponse]],
        list_checkpoints: Callable[[str], list[dict[str, Any]]],
        export_checkpoint: Callable[[str, str], dict[str, Any]],
        get_experiment_run: Callable[[str], dict[str, Any]],
        shared: SharedDownloadState | None = None,
    ) -> None:
        self.base_url, self.database, self.schema = base_url, database, schema
        self.verify_ssl, self.request_timeout = verify_ssl, request_timeout
        #: How the client signs in, read when a download needs it (a PAT client learns its host late).
        self.credential_of = credential_of
        self.request, self.stream = request, stream
        self.list_checkpoints, self.export_checkpoint = list_checkpoints, export_checkpoint
        self.get_experiment_run = get_experiment_run
        self.shared = shared

    @property
    def credential(self) -> Credential:
        return self.credential_of()

    @property
    def download_state(self) -> SharedDownloadState:
        """Made with the first download (so a client that never downloads never imports its modules)."""
        if self.shared is None:
            from ct_core.downloads.logs import SharedDownloadState

            self.shared = SharedDownloadState()
        return self.shared


class Downloads:
    """The download methods of one client (the facade forwards to them), over a `DownloadContext`."""

    def __init__(self, context: DownloadContext) -> None:
        self._context = context

    @property
    def state(self) -> SharedDownloadState:
        """Root memory and kept Connector sessions, shared with the client's for_job twins."""
        return self._context.download_state

    def download_checkpoint(
        self,
        job_id: str,
        checkpoint_id: str,
        output_dir: str | os.PathLike[str],
        *,
        include: Iterable[str] = (),
        on_bytes: BytesCallback | None = None,
        on_file: FileCallback | None = None,
        durable: bool = False,
        workers: int | None = None,
    ) -> dict[str, Any]:
        """Download a checkpoint's files into ``output_dir``.

        Each file streams into ``<name>.partial`` and is renamed only once its size matches the
        export; running it again continues a partial file with a Range request. ``include`` keeps
        only file names matching one of its globs. Returns ``{job_id, checkpoint_id, output_dir,
        files: [{filename, size_bytes, saved_path, resumed, already_present}]}``. ``durable=True``
        fsyncs each file before its rename, so a power cut right after the call loses nothing.
        Up to ``workers`` files are fetched at once (default: 4, or for a server on this machine one
        per two CPU cores; see ``default_workers``); the callbacks are still called one at a time,
        ``on_file`` in the order the files finish.
        """
        from ct_core.downloads.checkpoint import download_checkpoint

        return download_checkpoint(
            self._context,
            job_id,
            checkpoint_id,
            output_dir,
            include=include,
            on_bytes=on_bytes,
            on_file=on_file,
            durable=durable,
            workers=workers,
        )

    # --- download sessions ----------------------------------------------------------------------

    @property
    def keep_artifact_sessions(self) -> bool:
        """Keep a successful download's Connector session for the next one (default False).

        Shared with the clients for_job makes; turning it off closes the kept sessions.
        """
        return self.state.sessions.keep

    @keep_artifact_sessions.setter
    def keep_artifact_sessions(self, value: bool) -> None:
        pool = self.state.sessions
        pool.keep = bool(value)
        if not value:
            pool.close_all()

    def warm_artifact_session(self, job_id: str) -> None:
        """Resolve the job's run and, while sessions are kept and none is kept yet, log one in."""
        from ct_core.downloads import logs

        logs.warm_artifact_session(self._context, job_id)

    def close_sessions(self) -> None:
        if self._context.shared is not None:  # no download ran, no session was opened
            self._context.shared.sessions.close_all()

    # --- execution logs ---------------------------------------------------------------------------

    def download_execution_logs(
        self,
        job_id: str,
        output_dir: str | os.PathLike[str],
        *,
        resume: bool = False,
        sub_job_ids: Sequence[str] | None = None,
        progress: ProgressCallback | None = None,
        transfer_timeout_seconds: float | None = DEFAULT_TRANSFER_TIMEOUT_S,
    ) -> list[dict[str, Any]]:
        """Save every execution-log file to ``<output_dir>/<sub_job_id>/<filename>``.

        Files are staged in an owner-only hidden folder and moved into place; with ``resume`` a file
        whose listed size and checksum did not change is kept (``unchanged: True``).
        """
        from ct_core.downloads import logs

        return logs.download_execution_logs(
            self._context,
            job_id,
            output_dir,
            resume=resume,
            sub_job_ids=sub_job_ids,
            progress=progress,
            transfer_timeout_seconds=transfer_timeout_seconds,
        )

    def fetch_execution_logs(self, job_id: str) -> list[dict[str, Any]]:
        """Every execution-log file with its text in memory; prefer the download for big jobs."""
        from ct_core.downloads import logs

        return logs.fetch_execution_logs(self._context, job_id)

    # --- chunked streams: stdout, GPU/system metrics, training metrics ---------------------------

    def download_stdout_logs(
        self,
        job_id: str,
        output_dir: str | os.PathLike[str],
        *,
        resume: bool = False,
        max_workers: int | None = None,
        progress: ProgressCallback | None = None,
        on_chunk: ChunkCallback | None = None,
        sub_job_ids: Sequence[str] | None = None,
        strict: bool = False,
        stale_after_seconds: float | None = 600,
        transfer_timeout_seconds: float | None = DEFAULT_TRANSFER_TIMEOUT_S,
        preview_seconds: float | None = None,
        on_preview: PreviewCallback | None = None,
    ) -> list[dict[str, Any]]:
        """Rebuild each sub-job's saved console into ``<output_dir>/<sub_job_id>/stdout.log``.

        Chunks are fetched in parallel and appended in name order; progress is kept in manifests so
        ``resume=True`` only adds what is new. Damaged chunks are skipped and listed (raised with
        ``strict``). Raise `DownloadCancelled` from a callback to stop; what was written is kept.

        With ``preview_seconds`` and ``on_preview``, the first sub-job in ``sub_job_ids`` is written
        first, and its last ``preview_seconds`` of console reach ``on_preview`` before the rest of
        its history (see download_metrics for the callback's arguments).
        """
        from ct_core.downloads import chunks, logs

        return logs.download_chunked(
            self._context,
            job_id,
            output_dir,
            chunks.STDOUT,
            stale_after_seconds=stale_after_seconds,
            resume=resume,
            max_workers=max_workers,
            progress=progress,
            on_chunk=on_chunk,
            sub_job_ids=sub_job_ids,
            strict=strict,
            transfer_timeout_seconds=transfer_timeout_seconds,
            priority=list(sub_job_ids or ())[:1] if preview_seconds is not None else (),
            preview_seconds=preview_seconds,
            on_preview=on_preview,
        )

    def download_metrics(
        self,
        job_id: str,
        output_dir: str | os.PathLike[str],
        *,
        resume: bool = False,
        max_workers: int | None = None,
        progress: ProgressCallback | None = None,
        on_chunk: ChunkCallback | None = None,
        sub_job_ids: Sequence[str] | None = None,
        strict: bool = False,
        stale_after_seconds: float | None = 600,
        transfer_timeout_seconds: float | None = DEFAULT_TRANSFER_TIMEOUT_S,
        priority: Sequence[str] = (),
        on_commit: Callable[[dict[str, Any]], None] | None = None,
        preview_seconds: float | None = None,
        on_preview: PreviewCallback | None = None,
    ) -> list[dict[str, Any]]:
        """Rebuild GPU and system rows into ``<output_dir>/<sub_job_id>/gpu.jsonl``.

        Sub-jobs in ``priority`` are written first, in order; ``on_commit(entry)`` follows each
        committed file. With ``preview_seconds`` and ``on_preview``, the first priority sub-job's
        chunks from ``preview_seconds`` (plus two minutes of name slack) before its newest one are
        fetched first, and ``on_preview(sub_job_id, path, chunk_count, first_artifact_uri,
        last_artifact_uri)`` gets a file of their rows in time order, removed once it returns. No
        chunk is fetched twice; there is no preview when those chunks are most of what is new.
        """
        from ct_core.downloads import chunks, logs

        return logs.download_chunked(
            self._context,
            job_id,
            output_dir,
            chunks.GPU_METRICS,
            stale_after_seconds=stale_after_seconds,
            resume=resume,
            max_workers=max_workers,
            progress=progress,
            on_chunk=on_chunk,
            sub_job_ids=sub_job_ids,
            strict=strict,
            transfer_timeout_seconds=transfer_timeout_seconds,
            priority=priority,
            on_commit=on_commit,
            preview_seconds=preview_seconds,
            on_preview=on_preview,
        )

    def download_training_metrics(
        self,
        job_id: str,
        output_dir: str | os.PathLike[str],
        *,
        resume: bool = False,
        max_workers: int | None = None,
        progress: ProgressCallback | None = None,
        on_chunk: ChunkCallback | None = None,
        sub_job_ids: Sequence[str] | None = None,
        strict: bool = False,
        stale_after_seconds: float | None = 600,
        transfer_timeout_seconds: float | None = DEFAULT_TRANSFER_TIMEOUT_S,
        priority: Sequence[str] = (),
        on_commit: Callable[[dict[str, Any]], None] | None = None,
        preview_seconds: float | None = None,
        on_preview: PreviewCallback | None = None,
    ) -> list[dict[str, Any]]:
        """Rebuild the training-metrics rows of training sub-jobs into ``<sub_job_id>/training.jsonl``.

        Takes download_metrics' options, preview included."""
        from ct_core.downloads import chunks, logs

        return logs.download_chunked(
            self._context,
            job_id,
            output_dir,
            chunks.TRAINING_METRICS,
            stale_after_seconds=stale_after_seconds,
            resume=resume,
            max_workers=max_workers,
            progress=progress,
            on_chunk=on_chunk,
            sub_job_ids=sub_job_ids,
            strict=strict,
            transfer_timeout_seconds=transfer_timeout_seconds,
            priority=priority,
            on_commit=on_commit,
            preview_seconds=preview_seconds,
            on_preview=on_preview,
        )
