"""`ct download-checkpoint JOB_ID CHECKPOINT_ID --output-dir DIR [--include GLOB ...] [--workers N]`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output
from ct_cli.cmdline import UsageError
from ct_cli.commands._missing import name_what_is_missing


class _Bars:
    """Byte and file progress drawn with rich on stderr; stdout stays a single JSON document."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TransferSpeedColumn,
        )

        console = Console(file=output.current().stderr)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, Any] = {}
        self._files = self._progress.add_task("files", total=None)

    def __enter__(self) -> _Bars:
        self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._progress.stop()

    def on_bytes(self, filename: str, done: int, total: int) -> None:
        task = self._tasks.get(filename)
        if task is None:
            task = self._tasks[filename] = self._progress.add_task(filename, total=total)
        self._progress.update(task, completed=done)

    def on_file(self, filename: str, done: int, count: int) -> None:
        task = self._tasks.get(filename)
        if task is not None:
            self._progress.update(task, completed=self._progress.tasks[task].total)
        self._progress.update(self._files, description=f"files {done}/{count}", total=count, completed=done)


def download_checkpoint(
    job_id: Annotated[str, Parameter(help="The job that owns the checkpoint.")],
    checkpoint_id: Annotated[str, Parameter(help="The checkpoint to download, e.g. global_step12.")],
    /,
    *,
    output_dir: Annotated[Path, Parameter(help="Folder the checkpoint's files are written to.")],
    include: Annotated[
        list[str] | None,
        Parameter(
            help="Only files whose name matches this glob (repeat for several).", consume_multiple=False
        ),
    ] = None,
    durable: Annotated[
        bool,
        Parameter(help="Flush each file to disk before renaming it (survives a power cut; slower)."),
    ] = False,
    workers: Annotated[
        int | None,
        Parameter(
            help="Files fetched at once, at least 1 (default: 4; for a server on this machine, one "
            "per two CPU cores)."
        ),
    ] = None,
) -> None:
    """Download a checkpoint's files into --output-dir.

    Files arrive as NAME.partial and are renamed once complete and the size the service announced
    checks out; running the command again continues any partial file where it stopped. Progress goes
    to stderr; stdout gets {"job_id", "checkpoint_id", "output_dir", "files": [...]}.
    """
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be at least 1 (files fetched at once), got {workers}")
    client = context.client()
    with name_what_is_missing(client, job_id, checkpoint_id=checkpoint_id), _Bars() as bars:
        summary = client.download_checkpoint(
            job_id,
            checkpoint_id,
            output_dir,
            include=include or (),
            on_bytes=bars.on_bytes,
            on_file=bars.on_file,
            durable=durable,
            workers=workers,
        )
    output.emit(summary)
