"""Downloads (§5.9, §12.2-§12.5): checkpoint files over presigned links, and experiment-run artifacts.

`DownloadsMixin` adds the download methods to `CortexTrainingClient`; the work itself lives in the
modules of this package, one concern each: `checkpoint` (export links, resumable streaming) and
`artifacts` (the artifact store interface and its implementations).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ct_core.downloads.checkpoint import (
    BytesCallback,
    CheckpointDownloadError,
    FileCallback,
    download_checkpoint,
)

__all__ = ["CheckpointDownloadError", "DownloadsMixin"]


class DownloadsMixin:
    """Download methods of the client facade (needs ``list_checkpoints`` and ``export_checkpoint``)."""

    def download_checkpoint(
        self,
        job_id: str,
        checkpoint_id: str,
        output_dir: str | os.PathLike[str],
        *,
        include: Iterable[str] = (),
        on_bytes: BytesCallback | None = None,
        on_file: FileCallback | None = None,
    ) -> dict[str, Any]:
        """Download a checkpoint's files into ``output_dir`` (ART-24).

        Each file streams into ``<name>.partial`` and is renamed only once its size matches the
        export; running it again continues a partial file with a Range request. ``include`` keeps
        only file names matching one of its globs. Returns ``{job_id, checkpoint_id, output_dir,
        files: [{filename, size_bytes, saved_path, resumed, already_present}]}``.
        """
        return download_checkpoint(
            self, job_id, checkpoint_id, output_dir, include=include, on_bytes=on_bytes, on_file=on_file
        )
