"""Checkpoint download: export links, resumable streaming to disk, atomic promotion.

See docs/checkpoint-download.md; the export is operationId exportCheckpoint.


The flow is list -> export -> one streamed GET per file. Each file is written to
``<name>.partial`` beside its destination; an existing partial file is continued with a ``Range``
request, and a server that answers 200 instead of 206 restarts the file from byte 0. The size the
export announced is checked before the partial file is renamed into place, so a destination name
only ever holds a complete file.

Name and size do not say whose bytes a file holds (two checkpoints of one model have files of
equal names and sizes), so every file and ``.partial`` has a record under
``<output_dir>/.ct-download/``: the job, the checkpoint, the file name, the export's size and ETag,
and the ETag the link answered with. A file counts as already present, and a ``.partial`` is
continued, only when its record matches the export being downloaded and is tied to that very file
on disk (its inode, and for a finished file its modification time); anything else is fetched from
byte 0. A resumed GET carries ``If-Range`` with the recorded ETag, so a link whose object changed
sends the whole new file instead of the missing tail of the old one.

Like curl, pip and huggingface_hub, the data is not fsynced by default: a process that is killed
loses nothing the page cache holds, and forcing every byte to disk before the rename would make the
disk, not the network, the pace of every download. ``durable=True`` fsyncs the file and its folder
before and after the rename, for downloads that must survive a power cut the moment they return.

Failures are retried under `ct_core.http.retry.CHECKPOINT_LINKS` (the numbers and the reasons are in
ct_core.constants), each attempt continuing the partial file where the last one stopped.

Presigned links carry their own credentials in the query, so the files are fetched by a separate
client (link_client.py) that never sends the service's auth headers. The generated client is not
used here: it reads whole bodies into memory, and a checkpoint can be many gigabytes.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, TypeGuard
from urllib.parse import unquote

from ct_core import fs
from ct_core.constants import CHECKPOINT_LINK_EXPIRED_STATUSES, CHECKPOINT_RETRYABLE_STATUSES
from ct_core.downloads.link_client import LinkClient, LinkTimeouts
from ct_core.errors import CheckpointDownloadError, LinkTransportError, NotFoundError
from ct_core.http.retry import CHECKPOINT_LINKS, RetryPolicy, run_with_retries

__all__ = ["CheckpointDownloadError", "CheckpointDownloader", "download_checkpoint"]

logger = logging.getLogger("ct_core.downloads")

#: Statuses a presigned store answers for a link that is past its expiry (the export is asked again).
EXPIRED_STATUSES = CHECKPOINT_LINK_EXPIRED_STATUSES
#: Statuses worth another attempt on the same link.
TRANSIENT_STATUSES = CHECKPOINT_RETRYABLE_STATUSES
#: Suffix of the file a download is written to until it is complete.
PARTIAL_SUFFIX = ".partial"
#: Folder of the output dir holding what each downloaded file and ``.partial`` belongs to.
RECORDS_DIR = ".ct-download"
#: Version of a record; a record of another version is ignored, so its file is fetched again.
RECORD_VERSION = 1
#: Connect / read timeouts for presigned-link GETs (seconds): reads are per block, not per file.
LINK_TIMEOUTS = LinkTimeouts(connect=30.0, read=120.0)

_DECIMAL = re.compile(r"[0-9]+")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")

#: ``on_bytes(filename, bytes_done, bytes_total)`` after each write; ``on_file(filename, done, count)``
#: when a file is finished.
BytesCallback = Callable[[str, int, int], None]
FileCallback = Callable[[str, int, int], None]


class _LinkExpired(Exception):
    """The presigned link was refused as expired; the caller re-exports once."""


class _Transient(Exception):
    """A failure another attempt on the same link may fix."""


class _Short(Exception):
    """The body ended before the announced size; the next attempt continues from where it stopped."""

    def __init__(self, got: int) -> None:
        super().__init__(f"stopped at {got} bytes")
        self.got = got


def _retried(error: BaseException) -> bool:
    return isinstance(error, _Transient | _Short)


def _short(error: BaseException) -> bool:
    return isinstance(error, _Short)


@dataclass(frozen=True)
class FileIdentity:
    """Which bytes a downloaded file should hold: a file of a checkpoint of a job, its size and ETag.

    ``etag`` is the one the export announced for the file (None where the server gives none).
    """

    job_id: str | None
    checkpoint_id: str | None
    filename: str
    size_bytes: int
    etag: str | None = None

    def fields(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def described_by(self, entry: Any) -> TypeGuard[Mapping[str, Any]]:
        """True when a record entry was written for exactly this identity."""
        return isinstance(entry, Mapping) and all(entry.get(k) == v for k, v in self.fields().items())


@dataclass
class _FileSpec:
    filename: str
    url: str
    size: int
    dest: Path
    identity: FileIdentity


class _Records:
    """One JSON record per file, ``<output_dir>/.ct-download/<filename>.json``.

    ``{"version": 1, "complete": entry | null, "partial": entry | null}``: ``complete`` describes the
    bytes under the file's own name, ``partial`` those in ``<filename>.partial``. An entry is a
    `FileIdentity` plus ``served_etag`` (the ETag the link answered with), ``inode`` and, for a
    finished file, ``mtime_ns``: a file replaced by any other means no longer matches its entry.
    A record is rewritten whole (temporary file, rename); an unreadable one counts as no record.
    """

    def __init__(self, output_dir: Path) -> None:
        self.root = output_dir / RECORDS_DIR

    def _path(self, filename: str) -> Path:
        return self.root / f"{filename}.json"

    def read(self, filename: str) -> dict[str, Any]:
        try:
            data = json.loads(self._path(filename).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
            return {"complete": None, "partial": None}
        return {"complete": data.get("complete"), "partial": data.get("partial")}

    def write(self, filename: str, record: Mapping[str, Any]) -> None:
        path = self._path(filename)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Not fsynced even for durable downloads (those fsync the files): after a power cut a record
        # may lag its file, and a finished file then no longer has the modification time its entry
        # names, so it is fetched again rather than trusted.
        fs.atomic_write(
            path, json.dumps({"version": RECORD_VERSION, **record}, sort_keys=True), durable=False
        )


def _strong_etag(value: Any) -> str | None:
    """A strong entity tag (``"..."``), or None: a weak one (``W/"..."``) cannot vouch for bytes."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if len(value) >= 2 and value.startswith('"') and value.endswith('"') else None


def parse_size_bytes(value: Any, filename: str) -> int:
    """An export's ``size_bytes``: a non-negative integer or a string of decimal digits."""
    if isinstance(value, bool):
        raise CheckpointDownloadError(f"export gave {filename!r} an invalid size_bytes: {value!r}")
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return int(value)
    raise CheckpointDownloadError(f"export gave {filename!r} an invalid size_bytes: {value!r}")


def _unsafe_name(name: str) -> bool:
    return (
        not name
        or "\\" in name
        or "\x00" in name
        or PurePosixPath(name).is_absolute()
        or any(part in ("", ".", "..") for part in name.split("/"))
    )


def safe_destination(output_dir: Path, filename: Any) -> Path:
    """Where ``filename`` goes under ``output_dir``; refuses any name that could land elsewhere.

    The name is checked as given and as it reads percent-decoded, again and again (``%252e`` is
    ``%2e`` is ``.``): a name that decodes to a traversal is one wherever it is later used in a URL.
    """
    if not isinstance(filename, str):
        raise CheckpointDownloadError(f"refusing unsafe checkpoint file name {filename!r}")
    decoded = filename
    while True:
        if _unsafe_name(decoded):
            raise CheckpointDownloadError(f"refusing unsafe checkpoint file name {filename!r}")
        # A decoding that changes anything makes the text shorter, so this ends.
        once_more = unquote(decoded)
        if once_more == decoded:
            break
        decoded = once_more
    if filename.split("/", 1)[0].lower() == RECORDS_DIR:
        raise CheckpointDownloadError(
            f"refusing checkpoint file name {filename!r}: {RECORDS_DIR} holds ct's download records"
        )
    pure = PurePosixPath(filename)
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


class CheckpointDownloader:
    """Downloads the files of one checkpoint export into a folder (one instance per download).

    ``job_id`` and ``checkpoint_id`` name what is downloaded in the records the folder keeps (the
    checkpoint id defaults to the one the export answer names).
    """

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
        retry_policy: RetryPolicy = CHECKPOINT_LINKS,
        job_id: str | None = None,
        checkpoint_id: str | None = None,
    ) -> None:
        self._export = export
        self.output_dir = Path(output_dir)
        self.job_id = job_id
        self.checkpoint_id = checkpoint_id
        self._records = _Records(self.output_dir)
        # The record of the file being fetched, and the strong ETag its .partial bytes were served with.
        self._record: dict[str, Any] = {"complete": None, "partial": None}
        self._served: str | None = None
        self.include = list(include)
        self._on_bytes = on_bytes
        self._on_file = on_file
        self._sleep = sleep
        self._retry_policy = retry_policy
        self._own_links = links is None
        self._durable = durable
        self._links_client = links or LinkClient(verify, LINK_TIMEOUTS)
        self._reexported = False
        self._links: dict[str, str] = {}
        # Set when the file being fetched threw its earlier .partial away and started from byte 0:
        # such a file was not resumed, whatever was on disk before.
        self._restarted = False

    def close(self) -> None:
        if self._own_links:
            self._links_client.close()

    # --- export ---------------------------------------------------------------------------------

    def _specs(self, answer: Mapping[str, Any]) -> list[_FileSpec]:
        files = answer.get("files")
        if not isinstance(files, list):
            raise CheckpointDownloadError("checkpoint export answer has no files list")
        specs: list[_FileSpec] = []
        named = answer.get("checkpoint_id")
        checkpoint_id = self.checkpoint_id or (str(named) if named is not None else None)
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
            size = parse_size_bytes(entry.get("size_bytes"), name)
            etag = entry.get("etag") if isinstance(entry.get("etag"), str) else None
            identity = FileIdentity(self.job_id, checkpoint_id, name, size, etag)
            specs.append(_FileSpec(name, url, size, dest, identity))
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

    def _save_partial_entry(self, spec: _FileSpec, partial: Path) -> None:
        """Record that ``partial`` holds bytes of ``spec``'s file, served with ETag ``self._served``."""
        self._record["partial"] = {
            **spec.identity.fields(),
            "served_etag": self._served,
            "inode": partial.stat().st_ino,
        }
        self._records.write(spec.filename, self._record)

    def _note_served(self, spec: _FileSpec, partial: Path, etag: str | None) -> None:
        """The bytes in ``partial`` from now on are the version of the file with ETag ``etag``."""
        if etag != self._served:
            self._served = etag
            self._save_partial_entry(spec, partial)

    def _start_over(self, spec: _FileSpec, partial: Path) -> None:
        """Empty ``partial`` (keeping the file its record names) for a fetch from byte 0."""
        with open(partial, "wb"):
            pass
        self._restarted = True
        self._note_served(spec, partial, None)

    def _attempt(self, spec: _FileSpec, url: str, partial: Path) -> None:
        """One GET: continue ``partial`` from its current size; raise _LinkExpired / _Transient."""
        offset = partial.stat().st_size if partial.exists() else 0
        if offset > spec.size:
            # Longer than the file can be: nothing in it can be trusted.
            self._start_over(spec, partial)
            offset = 0
        if offset == spec.size and spec.size > 0:
            return
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        if offset and self._served:
            # The tail only if the object is still the one the kept bytes came from; else all of it.
            headers["If-Range"] = self._served
        try:
            with self._links_client.get(url, headers) as response:
                status = response.status_code
                if status in EXPIRED_STATUSES:
                    raise _LinkExpired(status)
                if status in TRANSIENT_STATUSES:
                    raise _Transient(f"HTTP {status}")
                served = _strong_etag(response.headers.get("etag"))
                exported = _strong_etag(spec.identity.etag)
                if status in (200, 206) and served and exported and served != exported:
                    raise CheckpointDownloadError(
                        f"the link for {spec.filename!r} serves ETag {served}, not the {exported} the "
                        f"export announced: another version of the file; nothing of it was kept"
                    )
                if status == 416:
                    # Nothing past our offset: either the partial is complete or it is from another
                    # version of the file. The size check below decides; restart when it is short.
                    if offset != spec.size:
                        self._start_over(spec, partial)
                        raise _Transient("range not satisfiable; restarting the file")
                    return
                if status == 200:
                    # The whole file, whatever range was asked for: it replaces the partial one.
                    mode, start = "wb", 0
                    self._restarted = self._restarted or offset > 0
                    self._note_served(spec, partial, served)
                elif status == 206:
                    match = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", ""))
                    if match is None or int(match.group(1)) != offset:
                        # A range we did not ask for: start over rather than splice wrong bytes.
                        self._start_over(spec, partial)
                        raise _Transient("server answered an unexpected range; restarting the file")
                    if served and self._served and served != self._served:
                        # The tail of another version of the file (a server that ignored If-Range).
                        self._start_over(spec, partial)
                        raise _Transient("the file changed on the server; restarting it")
                    if served and not self._served:
                        self._note_served(spec, partial, served)
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
        except LinkTransportError as error:
            if not error.retryable:
                raise CheckpointDownloadError(f"downloading {spec.filename!r} failed: {error}") from error
            raise _Transient(str(error)) from error

    def _complete_partial(self, spec: _FileSpec, partial: Path) -> None:
        """One attempt at a whole partial file: GETs (re-exporting an expired link, which is not a
        retry) until the body ends, then the size check. Raises _Transient / _Short to be retried."""
        while True:
            try:
                self._attempt(spec, self._links[spec.filename], partial)
                break
            except _LinkExpired:
                self._refresh(spec.filename)
        got = partial.stat().st_size if partial.exists() else 0
        if spec.size == 0 and not partial.exists():
            partial.touch()
        if got > spec.size:
            partial.unlink()
            raise CheckpointDownloadError(
                f"{spec.filename!r} came back larger than the {spec.size} bytes the export announced"
            )
        if got != spec.size:
            raise _Short(got)

    def _adopt_partial(self, spec: _FileSpec, partial: Path) -> None:
        """Keep ``partial`` only when its record says it holds this very file; then record it as ours."""
        entry = self._record.get("partial")
        if partial.exists() or partial.is_symlink():
            ours = spec.identity.described_by(entry) and entry.get("inode") == partial.lstat().st_ino
            if not ours:
                logger.warning(
                    "%s holds bytes of another download (or of one nothing recorded); starting %s over",
                    partial.name,
                    spec.filename,
                )
                partial.unlink()
        if not partial.exists():
            entry = None
            partial.touch()
        self._served = _strong_etag(entry.get("served_etag")) if isinstance(entry, Mapping) else None
        self._save_partial_entry(spec, partial)

    def _present(self, spec: _FileSpec) -> bool:
        """The file is already under its name: the same size, and the record of these very bytes."""
        entry = self._record.get("complete")
        try:
            stat = spec.dest.stat()
        except OSError:
            return False
        return (
            spec.dest.is_file()
            and stat.st_size == spec.size
            and spec.identity.described_by(entry)
            and entry.get("inode") == stat.st_ino
            and entry.get("mtime_ns") == stat.st_mtime_ns
        )

    def _fetch(self, spec: _FileSpec) -> bool:
        """Download one file into place; True when an earlier partial file was continued."""
        partial = _partial_of(spec.dest)
        spec.dest.parent.mkdir(parents=True, exist_ok=True)
        self._adopt_partial(spec, partial)
        resumed = 0 < partial.stat().st_size <= spec.size
        self._restarted = False

        def notice(number: int, delay: float, error: BaseException) -> None:
            if not _short(error):
                logger.warning("retrying %s in %.1fs: %s", spec.filename, delay, error)

        try:
            run_with_retries(
                lambda: self._complete_partial(spec, partial),
                predicate=_retried,
                policy=self._retry_policy,
                sleep=self._sleep,
                describe=f"GET {spec.filename}",
                at_once=_short,
                on_retry=notice,
            )
        except _Short as error:
            raise CheckpointDownloadError(
                f"{spec.filename!r} stopped at {error.got} of {spec.size} bytes; "
                f"run the command again to continue"
            ) from None
        except _Transient as error:
            raise CheckpointDownloadError(
                f"downloading {spec.filename!r} kept failing ({error}); "
                f"run the command again to continue from {partial.name}"
            ) from None
        if self._record.get("complete") is not None:
            # The name is about to hold other bytes: forget what it held before the rename.
            self._record["complete"] = None
            self._records.write(spec.filename, self._record)
        fs.atomic_replace(partial, spec.dest, durable=self._durable)
        stat = spec.dest.stat()
        complete = {**spec.identity.fields(), "served_etag": self._served, "inode": stat.st_ino}
        self._record = {"complete": {**complete, "mtime_ns": stat.st_mtime_ns}, "partial": None}
        self._records.write(spec.filename, self._record)
        return resumed and not self._restarted

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
            self._record = self._records.read(spec.filename)
            if self._present(spec):
                # This very file of this checkpoint, finished by an earlier run: kept, not re-fetched.
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
    """Download a checkpoint's files into ``output_dir``; the summary dict `ct download-checkpoint` prints.

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
        job_id=job_id,
        checkpoint_id=checkpoint_id,
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
