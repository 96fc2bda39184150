"""Checkpoint download (§5.9, ART-24): export links, resumable streaming to disk, atomic promotion.

The flow is list -> export -> one streamed GET per file. Each file is written to
``<name>.partial`` beside its destination; an existing partial file is continued with a ``Range``
request, and a server that answers 200 instead of 206 restarts the file from byte 0. The size the
export announced is checked before the partial file is renamed into place, so a destination name
only ever holds a complete file.

Like curl, pip and huggingface_hub, the data is not fsynced by default: a process that is killed
loses nothing the page cache holds, and forcing every byte to disk before the rename would make the
disk, not the network, the pace of every download. ``durable=True`` fsyncs the file and its folder
before and after the rename, for downloads that must survive a power cut the moment they return.

Presigned links carry their own credentials in the query, so the files are fetched by a separate
client (link_client.py) that never sends the service's auth headers. The generated client is not
used here: it reads whole bodies into memory, and a checkpoint can be many gigabytes.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from ct_core.downloads.link_client import LinkClient, LinkTimeouts, LinkTransportError
from ct_core.errors import CTError, NotFoundError

logger = logging.getLogger("ct_core.downloads")

#: Extra attempts per file after a transient failure (connection drop, 5xx, 429); finished bytes
#: stay in the partial file, so an attempt continues where the last one stopped.
TRANSIENT_RETRIES = 5
#: Backoff between attempts: doubles from the first value up to the cap (seconds).
RETRY_FIRST_WAIT_S = 0.2
RETRY_MAX_WAIT_S = 5.0
#: Statuses a presigned store answers for a link that is past its expiry (ART-24).
EXPIRED_STATUSES = frozenset({401, 403})
#: Statuses worth another attempt on the same link.
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Suffix of the file a download is written to until it is complete (§5.9).
PARTIAL_SUFFIX = ".partial"
#: Connect / read timeouts for presigned-link GETs (seconds): reads are per block, not per file.
LINK_TIMEOUTS = LinkTimeouts(connect=30.0, read=120.0)

_DECIMAL = re.compile(r"[0-9]+")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")

#: ``on_bytes(filename, bytes_done, bytes_total)`` after each write; ``on_file(filename, done, count)``
#: when a file is finished.
BytesCallback = Callable[[str, int, int], None]
FileCallback = Callable[[str, int, int], None]


class CheckpointDownloadError(CTError):
    """A checkpoint file could not be downloaded or failed its checks; nothing was promoted."""


class _LinkExpired(Exception):
    """The presigned link was refused as expired; the caller re-exports once."""


class _Transient(Exception):
    """A failure another attempt on the same link may fix."""


@dataclass
class _FileSpec:
    filename: str
    url: str
    size: int
    dest: Path


def parse_size_bytes(value: Any, filename: str) -> int:
    """§5.9: ``size_bytes`` is a non-negative integer or a string of decimal digits."""
    if isinstance(value, bool):
        raise CheckpointDownloadError(f"export gave {filename!r} an invalid size_bytes: {value!r}")
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return int(value)
    raise CheckpointDownloadError(f"export gave {filename!r} an invalid size_bytes: {value!r}")


def safe_destination(output_dir: Path, filename: Any) -> Path:
    """Where ``filename`` goes under ``output_dir``; refuses any name that could land elsewhere."""
    if not isinstance(filename, str) or not filename or "\\" in filename or "\x00" in filename:
        raise CheckpointDownloadError(f"refusing unsafe checkpoint file name {filename!r}")
    pure = PurePosixPath(filename)
    if pure.is_absolute() or any(part in ("", ".", "..") for part in filename.split("/")):
        raise CheckpointDownloadError(f"refusing unsafe checkpoint file name {filename!r}")
    root = output_dir.resolve()
    target = (root / Path(*pure.parts)).resolve()
    # A symlink already in the output dir could still point outside it.
    if not target.is_relative_to(root) or target == root:
        raise CheckpointDownloadError(f"refusing checkpoint file name {filename!r}: it leaves {output_dir}")
    return target


def _expired(expires_at: Any) -> bool:
    if not isinstance(expires_at, str) or not expires_at:
        return False
    try:
        moment = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment <= datetime.now(UTC)


def _partial_of(dest: Path) -> Path:
    return dest.with_name(dest.name + PARTIAL_SUFFIX)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class CheckpointDownloader:
    """Downloads the files of one checkpoint export into a folder (one instance per download)."""

    def __init__(
        self,
        export: Callable[[], Mapping[str, Any]],
        output_dir: Path,
        *,
        include: Sequence[str] = (),
        verify: bool | str = True,
        on_bytes: BytesCallback | None = None,
        on_file: FileCallback | None = None,
        sleep: Callable[[float], None] = time.sleep,
        links: LinkClient | None = None,
        durable: bool = False,
    ) -> None:
        self._export = export
        self.output_dir = Path(output_dir)
        self.include = list(include)
        self._on_bytes = on_bytes
        self._on_file = on_file
        self._sleep = sleep
        self._own_links = links is None
        self._durable = durable
        self._links_client = links or LinkClient(verify, LINK_TIMEOUTS)
        self._reexported = False
        self._links: dict[str, str] = {}

    def close(self) -> None:
        if self._own_links:
            self._links_client.close()

    # --- export ---------------------------------------------------------------------------------

    def _specs(self, answer: Mapping[str, Any]) -> list[_FileSpec]:
        files = answer.get("files")
        if not isinstance(files, list):
            raise CheckpointDownloadError("checkpoint export answer has no files list")
        specs: list[_FileSpec] = []
        for entry in files:
            if not isinstance(entry, Mapping):
                raise CheckpointDownloadError(f"checkpoint export listed a non-object file entry: {entry!r}")
            name = entry.get("filename")
            dest = safe_destination(self.output_dir, name)
            assert isinstance(name, str)
            if self.include and not any(fnmatch.fnmatchcase(name, glob) for glob in self.include):
                continue
            url = entry.get("url")
            if not isinstance(url, str) or not url.startswith(("https://", "http://")):
                raise CheckpointDownloadError(f"checkpoint export gave {name!r} no usable URL")
            specs.append(_FileSpec(name, url, parse_size_bytes(entry.get("size_bytes"), name), dest))
        return specs

    def _refresh(self, name: str) -> str:
        """Re-export once per download after a link was refused as expired; the new link for ``name``."""
        if self._reexported:
            raise CheckpointDownloadError(
                f"the download link for {name!r} was refused as expired again after a fresh export"
            )
        self._reexported = True
        logger.info("download link for %s expired; exporting the checkpoint again", name)
        fresh = {spec.filename: spec for spec in self._specs(self._export())}
        if name not in fresh:
            raise CheckpointDownloadError(f"{name!r} is no longer part of the checkpoint export")
        self._links.update({n: s.url for n, s in fresh.items()})
        return fresh[name].url

    # --- one file ---------------------------------------------------------------------------------

    def _attempt(self, spec: _FileSpec, url: str, partial: Path) -> None:
        """One GET: continue ``partial`` from its current size; raise _LinkExpired / _Transient."""
        offset = partial.stat().st_size if partial.exists() else 0
        if offset > spec.size:
            # Longer than the file can be: nothing in it can be trusted.
            partial.unlink()
            offset = 0
        if offset == spec.size and spec.size > 0:
            return
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        try:
            with self._links_client.get(url, headers) as response:
                status = response.status_code
                if status in EXPIRED_STATUSES:
                    raise _LinkExpired(status)
                if status in TRANSIENT_STATUSES:
                    raise _Transient(f"HTTP {status}")
                if status == 416:
                    # Nothing past our offset: either the partial is complete or it is from another
                    # version of the file. The size check below decides; restart when it is short.
                    if offset != spec.size:
                        partial.unlink(missing_ok=True)
                        raise _Transient("range not satisfiable; restarting the file")
                    return
                if status == 200:
                    mode, start = "wb", 0
                elif status == 206:
                    match = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", ""))
                    if match is None or int(match.group(1)) != offset:
                        # A range we did not ask for: start over rather than splice wrong bytes.
                        partial.unlink(missing_ok=True)
                        raise _Transient("server answered an unexpected range; restarting the file")
                    mode, start = "ab", offset
                else:
                    raise CheckpointDownloadError(f"downloading {spec.filename!r} failed with HTTP {status}")
                done = start
                with open(partial, mode) as sink:
                    # Blocks as the network delivers them (bounded by the transport's read size),
                    # not re-chunked: a buffered block would be lost when the connection drops.
                    for block in response.iter_blocks():
                        sink.write(block)
                        done += len(block)
                        if done > spec.size:
                            break
                        if self._on_bytes is not None:
                            self._on_bytes(spec.filename, done, spec.size)
                    if self._durable:
                        sink.flush()
                        os.fsync(sink.fileno())
        except LinkTransportError as error:
            if not error.retryable:
                raise CheckpointDownloadError(f"downloading {spec.filename!r} failed: {error}") from error
            raise _Transient(str(error)) from error

    def _fetch(self, spec: _FileSpec) -> bool:
        """Download one file into place; True when an earlier partial file was continued."""
        partial = _partial_of(spec.dest)
        spec.dest.parent.mkdir(parents=True, exist_ok=True)
        resumed = partial.exists() and 0 < partial.stat().st_size <= spec.size
        failures = 0
        while True:
            url = self._links[spec.filename]
            try:
                self._attempt(spec, url, partial)
            except _LinkExpired:
                self._refresh(spec.filename)
                continue
            except _Transient as error:
                failures += 1
                if failures > TRANSIENT_RETRIES:
                    raise CheckpointDownloadError(
                        f"downloading {spec.filename!r} kept failing ({error}); "
                        f"run the command again to continue from {partial.name}"
                    ) from None
                wait = min(RETRY_MAX_WAIT_S, RETRY_FIRST_WAIT_S * 2 ** (failures - 1))
                logger.warning("retrying %s in %.1fs: %s", spec.filename, wait, error)
                self._sleep(wait)
                continue
            got = partial.stat().st_size if partial.exists() else 0
            if spec.size == 0 and not partial.exists():
                partial.touch()
            if got != spec.size:
                if got > spec.size:
                    partial.unlink()
                    raise CheckpointDownloadError(
                        f"{spec.filename!r} came back larger than the {spec.size} bytes the export announced"
                    )
                failures += 1
                if failures > TRANSIENT_RETRIES:
                    raise CheckpointDownloadError(
                        f"{spec.filename!r} stopped at {got} of {spec.size} bytes; "
                        f"run the command again to continue"
                    )
                continue
            os.replace(partial, spec.dest)
            if self._durable:
                _fsync_dir(spec.dest.parent)
            return resumed

    # --- whole download ----------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]]:
        answer = self._export()
        specs = self._specs(answer)
        self._links = {spec.filename: spec.url for spec in specs}
        if _expired(answer.get("expires_at")):
            # Known to be stale before the first byte: spend the one re-export now.
            self._reexported = True
            self._links.update({s.filename: s.url for s in self._specs(self._export())})
        self.output_dir.mkdir(parents=True, exist_ok=True)
        results: list[dict[str, Any]] = []
        for index, spec in enumerate(specs, start=1):
            if spec.dest.is_file() and spec.dest.stat().st_size == spec.size:
                # Same name and size as the export: a finished earlier run. (Kept, not re-fetched.)
                results.append(self._entry(spec, resumed=False, skipped=True))
            else:
                resumed = self._fetch(spec)
                results.append(self._entry(spec, resumed=resumed, skipped=False))
            if self._on_file is not None:
                self._on_file(spec.filename, index, len(specs))
        return results

    @staticmethod
    def _entry(spec: _FileSpec, *, resumed: bool, skipped: bool) -> dict[str, Any]:
        return {
            "filename": spec.filename,
            "size_bytes": spec.size,
            "saved_path": str(spec.dest),
            "resumed": resumed,
            "already_present": skipped,
        }


def download_checkpoint(
    client: Any,
    job_id: str,
    checkpoint_id: str,
    output_dir: str | os.PathLike[str],
    *,
    include: Iterable[str] = (),
    on_bytes: BytesCallback | None = None,
    on_file: FileCallback | None = None,
    verify: bool | str | None = None,
    durable: bool = False,
) -> dict[str, Any]:
    """Download a checkpoint's files into ``output_dir``; the CLI-08 summary dict.

    ``client`` is a `CortexTrainingClient` (anything with list_checkpoints / export_checkpoint).
    ``durable=True`` fsyncs each file before it takes its final name.
    """
    known = {str(c.get("checkpoint_id")) for c in client.list_checkpoints(job_id) if isinstance(c, Mapping)}
    if checkpoint_id not in known:
        raise NotFoundError(
            f"checkpoint {checkpoint_id} not found in job {job_id}", status_code=404, code=None
        )
    downloader = CheckpointDownloader(
        lambda: client.export_checkpoint(job_id, checkpoint_id),
        Path(output_dir),
        include=list(include),
        verify=getattr(client, "verify_ssl", True) if verify is None else verify,
        on_bytes=on_bytes,
        on_file=on_file,
        durable=durable,
    )
    try:
        files = downloader.run()
    finally:
        downloader.close()
    return {
        "job_id": job_id,
        "checkpoint_id": checkpoint_id,
        "output_dir": str(Path(output_dir).resolve()),
        "files": files,
    }
