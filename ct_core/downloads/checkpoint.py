"""Checkpoint download: export links, resumable streaming to disk, atomic promotion.

See docs/checkpoint-download.md; the export is operationId exportCheckpoint.


The flow is list -> export -> one streamed GET per file, several files at once where the checkpoint
has several (each on its own thread and connection; a file's state lives in `_OneFile`; how many at
once is `default_workers` unless the caller says). Each file is written to ``<name>.partial`` beside
its destination; an existing partial file is continued with a ``Range`` request, and a server that
answers 200 instead of 206 restarts the file from byte 0. The size the export announced is checked
before the partial file is renamed into place, so a destination name only ever holds a complete
file.

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
ct_core.constants), each attempt continuing the partial file where the last one stopped. A file
that still fails does not stop the others; an exception from a callback (or Ctrl-C) stops them all
at their next block, and a read blocked on a socket is ended by shutting that socket down.

The bytes go from each socket read straight to the file with ``os.write``: no buffer of ours holds
any, and nothing else touches them on the way (there is no content hash to check; the size and the
ETag are the checks). That is as little work per byte as a plain socket read into a file, which is
the anchor bench/downloads.py measures the download against. Two things make it cheaper still than
that anchor: reads of up to 4 MiB rather than its 1 MiB, and, from a server on this machine, reads
that wait for a mebibyte rather than take every few KiB (link_client.BLOCK_BYTES and
LOOPBACK_READ_AT_LEAST; the server is spared most wake-ups, and the download runs faster).

Presigned links carry their own credentials in the query, so the files are fetched by a separate
client (link_client.py) that never sends the service's auth headers. The generated client is not
used here: it reads whole bodies into memory, and a checkpoint can be many gigabytes.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import ipaddress
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from queue import Empty, SimpleQueue
from typing import Any, TypeGuard
from urllib.parse import unquote, urlsplit

from ct_core import fs
from ct_core.constants import (
    CHECKPOINT_DOWNLOAD_WORKERS,
    CHECKPOINT_LINK_EXPIRED_STATUSES,
    CHECKPOINT_LOOPBACK_CORES_PER_WORKER,
    CHECKPOINT_RETRYABLE_STATUSES,
)
from ct_core.downloads.link_client import BLOCK_BYTES, LinkClient, LinkTimeouts
from ct_core.errors import CheckpointDownloadError, LinkTransportError, NotFoundError, ValidationError
from ct_core.http.retry import CHECKPOINT_LINKS, RetryPolicy, run_with_retries

__all__ = ["CheckpointDownloadError", "CheckpointDownloader", "default_workers", "download_checkpoint"]

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

#: ``on_bytes(filename, bytes_done, bytes_total)`` after each write (and once, with the whole size,
#: when a kept ``.partial`` already holds all of the file); ``on_file(filename, done, count)``
#: when a file is finished (``done`` counts the files finished so far). Called one at a time, from
#: whichever thread fetches the file.
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


def _loopback(url: str) -> bool:
    """The link's host is this machine itself: ``localhost`` or a loopback address (no lookup)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_workers(urls: Sequence[str], cpu_count: int | None = None) -> int:
    """How many files a download fetches at once when its caller does not say (before the cap at
    the number of files to fetch).

    Links to another host: `CHECKPOINT_DOWNLOAD_WORKERS`. A stream from an object store is held back
    by round trips and per-connection limits, which parallel streams hide, and it costs the client
    little CPU. Links to this machine itself (every one a loopback address, as `ct local serve`
    exports): one worker per `CHECKPOINT_LOOPBACK_CORES_PER_WORKER` cores, at least one and at
    most `CHECKPOINT_DOWNLOAD_WORKERS`. There the server runs on the client's own cores and only
    the CPU limits a stream: one at full speed keeps about two cores busy (the client reading the
    socket and writing the file, `ct local serve` reading the file and sending it), so more streams
    than that split the same cores. Measured on 2 cores (bench/downloads.py): four files at once
    from `ct local serve` were about 15 % slower than one after another; from a server that sends
    with sendfile (cheap for the server) they were 20-50 % faster, but a URL does not say which
    kind of server answers it, so the rule keeps the count that loses to one worker on neither.
    ``cpu_count`` defaults to ``os.cpu_count()``.
    """
    if not urls or not all(_loopback(url) for url in urls):
        return CHECKPOINT_DOWNLOAD_WORKERS
    cores = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    return max(1, min(CHECKPOINT_DOWNLOAD_WORKERS, cores // CHECKPOINT_LOOPBACK_CORES_PER_WORKER))


class _Halted(Exception):
    """Another file of the download failed: this one stops where it is, its partial file kept."""


def _retried(error: BaseException) -> bool:
    return isinstance(error, _Transient | _Short)


def _short(error: BaseException) -> bool:
    return isinstance(error, _Short)


def _write_all(fd: int, block: memoryview) -> None:
    """Write the whole block (``os.write`` may take less than it is given)."""
    written = os.write(fd, block)
    while written < len(block):
        written += os.write(fd, block[written:])


class _OneFile:
    """One file of a download: its record, its ``.partial``, and the GETs that fill it.

    Everything that belongs to one file lives here, so several files can be fetched by several
    threads at once; what the files share (the links, the re-export, the progress callbacks, the
    stop signal) stays with the `CheckpointDownloader`.
    """

    def __init__(self, owner: CheckpointDownloader, spec: _FileSpec) -> None:
        self.owner = owner
        self.spec = spec
        self.partial = _partial_of(spec.dest)
        # The file's record, and the strong ETag its .partial bytes were served with.
        self.record: dict[str, Any] = {"complete": None, "partial": None}
        self.served: str | None = None
        # Set when this file threw its earlier .partial away and started from byte 0: such a file
        # was not resumed, whatever was on disk before.
        self.restarted = False

    # --- records ------------------------------------------------------------------------------

    def _save_partial_entry(self) -> None:
        """Record that the partial file holds bytes of this file, served with ETag ``self.served``."""
        spec = self.spec
        self.record["partial"] = {
            **spec.identity.fields(),
            "served_etag": self.served,
            "inode": self.partial.stat().st_ino,
        }
        self.owner._records.write(spec.filename, self.record)

    def _note_served(self, etag: str | None) -> None:
        """The bytes in the partial file from now on are the version of the file with ETag ``etag``."""
        if etag != self.served:
            self.served = etag
            self._save_partial_entry()

    def _start_over(self) -> None:
        """Empty the partial file (keeping the file its record names) for a fetch from byte 0."""
        with open(self.partial, "wb"):
            pass
        self.restarted = True
        self._note_served(None)

    def present(self) -> bool:
        """The file is already under its name: the same size, and the record of these very bytes."""
        spec = self.spec
        self.record = self.owner._records.read(spec.filename)
        entry = self.record.get("complete")
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

    def _adopt_partial(self) -> None:
        """Keep the partial file only when its record says it holds this very file; then record it."""
        spec, partial = self.spec, self.partial
        entry = self.record.get("partial")
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
        self.served = _strong_etag(entry.get("served_etag")) if isinstance(entry, Mapping) else None
        self._save_partial_entry()

    # --- GETs ---------------------------------------------------------------------------------

    def _attempt(self, url: str) -> None:
        """One GET: continue the partial file from its current size; raise _LinkExpired / _Transient."""
        spec, partial, owner = self.spec, self.partial, self.owner
        offset = partial.stat().st_size if partial.exists() else 0
        if offset > spec.size:
            # Longer than the file can be: nothing in it can be trusted.
            self._start_over()
            offset = 0
        if offset == spec.size and spec.size > 0:
            # The kept bytes are the whole file (a stop came after its last read): nothing to GET,
            # and the progress callback still hears that the file is complete.
            self._report_whole()
            return
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        if offset and self.served:
            # The tail only if the object is still the one the kept bytes came from; else all of it.
            headers["If-Range"] = self.served
        try:
            with owner._client().get(url, headers) as response:
                owner._watch(response)
                try:
                    if owner._halted():
                        raise _Halted
                    self._receive(response, offset)
                finally:
                    owner._unwatch(response)
        except LinkTransportError as error:
            if owner._halted():
                raise _Halted from error
            if not error.retryable:
                raise CheckpointDownloadError(f"downloading {spec.filename!r} failed: {error}") from error
            raise _Transient(str(error)) from error
        if owner._halted():
            # The body may have been cut by the stop itself: not a short file, a stopped one.
            raise _Halted

    def _receive(self, response: Any, offset: int) -> None:
        """Check one answer and append its body to the partial file (or replace the file with it)."""
        spec, partial, owner = self.spec, self.partial, self.owner
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
            # version of the file. The size check decides; restart when it is short.
            if offset != spec.size:
                self._start_over()
                raise _Transient("range not satisfiable; restarting the file")
            self._report_whole()
            return
        if status == 200:
            # The whole file, whatever range was asked for: it replaces the partial one.
            flags, start = os.O_TRUNC, 0
            self.restarted = self.restarted or offset > 0
            self._note_served(served)
        elif status == 206:
            match = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", ""))
            if match is None or int(match.group(1)) != offset:
                # A range we did not ask for: start over rather than splice wrong bytes.
                self._start_over()
                raise _Transient("server answered an unexpected range; restarting the file")
            if served and self.served and served != self.served:
                # The tail of another version of the file (a server that ignored If-Range).
                self._start_over()
                raise _Transient("the file changed on the server; restarting it")
            if served and not self.served:
                self._note_served(served)
            flags, start = os.O_APPEND, offset
        else:
            raise CheckpointDownloadError(f"downloading {spec.filename!r} failed with HTTP {status}")
        done, size, name = start, spec.size, spec.filename
        halted, receive = owner._stop.is_set, response.readinto1
        report = owner._report_bytes if owner._on_bytes is not None else None
        buffer = owner._block()
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | flags | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            # Each socket read lands in one buffer, reused, and goes straight to the file: nothing
            # waits in a buffer of ours when a connection drops or the process is killed.
            while got := receive(buffer):
                _write_all(fd, buffer[:got])
                done += got
                if done > size:
                    break
                if halted():
                    raise _Halted
                if report is not None:
                    report(name, done, size)
        finally:
            os.close(fd)

    def _report_whole(self) -> None:
        if self.owner._on_bytes is not None:
            self.owner._report_bytes(self.spec.filename, self.spec.size, self.spec.size)

    def _complete_partial(self) -> None:
        """One attempt at a whole partial file: GETs (re-exporting an expired link, which is not a
        retry) until the body ends, then the size check. Raises _Transient / _Short to be retried."""
        spec, partial = self.spec, self.partial
        while True:
            url = self.owner._link(spec.filename)
            try:
                self._attempt(url)
                break
            except _LinkExpired:
                self.owner._refresh(spec.filename, url)
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

    def fetch(self) -> bool:
        """Download this file into place; True when an earlier partial file was continued."""
        spec, partial = self.spec, self.partial
        spec.dest.parent.mkdir(parents=True, exist_ok=True)
        self._adopt_partial()
        resumed = 0 < partial.stat().st_size <= spec.size
        self.restarted = False

        def notice(number: int, delay: float, error: BaseException) -> None:
            if not _short(error):
                logger.warning("retrying %s in %.1fs: %s", spec.filename, delay, error)

        try:
            run_with_retries(
                self._complete_partial,
                predicate=_retried,
                policy=self.owner._retry_policy,
                sleep=self.owner._wait,
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
        records = self.owner._records
        if self.record.get("complete") is not None:
            # The name is about to hold other bytes: forget what it held before the rename.
            self.record["complete"] = None
            records.write(spec.filename, self.record)
        fs.atomic_replace(partial, spec.dest, durable=self.owner._durable)
        stat = spec.dest.stat()
        complete = {**spec.identity.fields(), "served_etag": self.served, "inode": stat.st_ino}
        self.record = {"complete": {**complete, "mtime_ns": stat.st_mtime_ns}, "partial": None}
        records.write(spec.filename, self.record)
        return resumed and not self.restarted

    def entry(self, *, resumed: bool, skipped: bool) -> dict[str, Any]:
        spec = self.spec
        return {
            "filename": spec.filename,
            "size_bytes": spec.size,
            "saved_path": str(spec.dest),
            "resumed": resumed,
            "already_present": skipped,
        }


class CheckpointDownloader:
    """Downloads the files of one checkpoint export into a folder (one instance per download).

    ``job_id`` and ``checkpoint_id`` name what is downloaded in the records the folder keeps (the
    checkpoint id defaults to the one the export answer names). ``workers`` files are fetched at
    once (default: `default_workers` of the export's links; never more than there are files), each
    with its own partial file, Range resume and checks. The callbacks are never called by two
    threads at once. When one file fails, the others stop at their next block, keeping their
    partial files for the next run, files already finished stay in place, and the first failure is
    raised once no thread of the download is writing any more.
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
        sleep: Callable[[float], None] | None = None,
        links: LinkClient | None = None,
        durable: bool = False,
        retry_policy: RetryPolicy = CHECKPOINT_LINKS,
        job_id: str | None = None,
        checkpoint_id: str | None = None,
        workers: int | None = None,
    ) -> None:
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValidationError(f"workers must be a whole number of at least 1, got {workers!r}")
        self._export = export
        self.output_dir = Path(output_dir)
        self.job_id = job_id
        self.checkpoint_id = checkpoint_id
        self._records = _Records(self.output_dir)
        self.include = list(include)
        self._on_bytes = on_bytes
        self._on_file = on_file
        # None: wait out a retry's pause on the stop signal, so a stopped download does not linger.
        self._sleep = sleep
        self._retry_policy = retry_policy
        self._own_links = links is None
        self._durable = durable
        self._verify = verify
        self._links_client: LinkClient | None = links
        self._workers = workers
        self._reexported = False
        self._links: dict[str, str] = {}
        # Guards the links and the re-export; the report lock keeps the callbacks one at a time.
        self._lock = threading.Lock()
        self._report_lock = threading.Lock()
        self._finished = self._count = 0
        # Set when a file failed: every other file stops at its next block (or pause).
        self._stop = threading.Event()
        self._responses: set[Any] = set()
        # One read buffer per thread, kept for every file that thread fetches: a fresh 4 MiB buffer
        # per file would be zeroed and mapped anew each time.
        self._buffers = threading.local()

    def close(self) -> None:
        if self._own_links and self._links_client is not None:
            self._links_client.close()
            self._links_client = None

    def _client(self) -> LinkClient:
        # Made by run() before any file is fetched, with a connection per worker.
        if self._links_client is None:
            raise RuntimeError("CheckpointDownloader.run() makes the link client")
        return self._links_client

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
        _refuse_collisions(specs)
        return specs

    def _link(self, name: str) -> str:
        with self._lock:
            return self._links[name]

    def _refresh(self, name: str, stale: str) -> str:
        """Re-export once per download after the link ``stale`` was refused as expired; the link for
        ``name`` to try next. A link another file's re-export already replaced is simply tried anew."""
        with self._lock:
            if self._links.get(name) != stale:
                return self._links[name]
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

    # --- what the files share -----------------------------------------------------------------------

    def _report_bytes(self, name: str, done: int, total: int) -> None:
        if self._on_bytes is not None:
            with self._report_lock:
                self._on_bytes(name, done, total)

    def _report_file(self, name: str) -> None:
        with self._report_lock:
            self._finished += 1
            if self._on_file is not None:
                self._on_file(name, self._finished, self._count)

    def _block(self) -> memoryview:
        """The calling thread's read buffer (BLOCK_BYTES), made on its first file."""
        block: memoryview | None = getattr(self._buffers, "block", None)
        if block is None:
            block = self._buffers.block = memoryview(bytearray(BLOCK_BYTES))
        return block

    def _halted(self) -> bool:
        return self._stop.is_set()

    def _halt(self) -> None:
        """Stop every file: set the signal, and end the reads that are waiting on a socket."""
        self._stop.set()
        with self._lock:
            responses = list(self._responses)
        for response in responses:
            response.abort()

    def _watch(self, response: Any) -> None:
        """Note an open response, so that `_halt` can end its read (the caller checks the signal
        right after this: a stop that came first is then seen, one that comes later aborts it)."""
        with self._lock:
            self._responses.add(response)

    def _unwatch(self, response: Any) -> None:
        with self._lock:
            self._responses.discard(response)

    def _wait(self, seconds: float) -> None:
        """The pause before a retry; ends early (raising _Halted) when the download is stopped."""
        if self._sleep is None:
            if self._stop.wait(seconds):
                raise _Halted
            return
        self._sleep(seconds)
        if self._stop.is_set():
            raise _Halted

    # --- whole download ----------------------------------------------------------------------------

    def _one(self, task: _OneFile) -> dict[str, Any]:
        if task.present():
            # This very file of this checkpoint, finished by an earlier run: kept, not re-fetched.
            result = task.entry(resumed=False, skipped=True)
        else:
            result = task.entry(resumed=task.fetch(), skipped=False)
        self._report_file(task.spec.filename)
        return result

    def run(self) -> list[dict[str, Any]]:
        answer = self._export()
        specs = self._specs(answer)
        self._links = {spec.filename: spec.url for spec in specs}
        if _expired(answer.get("expires_at")):
            # Known to be stale before the first byte: spend the one re-export now.
            self._reexported = True
            self._links.update({s.filename: s.url for s in self._specs(self._export())})
        self.output_dir.mkdir(parents=True, exist_ok=True)
        tasks = [_OneFile(self, spec) for spec in specs]
        self._count, self._finished = len(tasks), 0
        chosen = self._workers or default_workers([spec.url for spec in specs])
        workers = max(1, min(chosen, len(tasks)))
        if self._links_client is None:
            self._links_client = LinkClient(self._verify, LINK_TIMEOUTS, connections=workers)
        return self._run_all(tasks, workers)

    def _run_all(self, tasks: list[_OneFile], workers: int) -> list[dict[str, Any]]:
        """Fetch every file, ``workers`` at a time, taken in the export's order; the results keep it.

        A file that fails its own way (`CheckpointDownloadError`: a link that keeps failing, a
        wrong size or version) does not hold the others up: they go on, and the failures are
        raised together at the end. Anything else (an exception from a callback, Ctrl-C) stops
        every file at its next block and is raised as it is. With one worker the files are
        fetched by the calling thread itself.
        """
        results: list[dict[str, Any] | None] = [None] * len(tasks)
        queue: SimpleQueue[int] = SimpleQueue()
        for index in range(len(tasks)):
            queue.put(index)
        failed: list[CheckpointDownloadError] = []
        fatal: list[BaseException] = []

        def work() -> None:
            while not self._stop.is_set():
                try:
                    index = queue.get_nowait()
                except Empty:
                    return
                try:
                    results[index] = self._one(tasks[index])
                except _Halted:
                    return
                except CheckpointDownloadError as error:
                    with self._lock:
                        failed.append(error)
                except BaseException as error:
                    with self._lock:
                        fatal.append(error)
                    self._halt()
                    return

        if workers == 1:
            work()
        else:
            self._in_threads(work, workers)
        if fatal:
            raise fatal[0]
        if len(failed) == 1:
            raise failed[0]
        if failed:
            raise CheckpointDownloadError(
                f"{len(failed)} of {len(tasks)} files failed: " + "; ".join(str(e) for e in failed)
            ) from failed[0]
        return [result for result in results if result is not None]

    def _in_threads(self, work: Callable[[], None], workers: int) -> None:
        # Daemon threads: a process that exits (after Ctrl-C, say) does not wait for a stalled socket.
        threads = [
            threading.Thread(target=work, name=f"ct-checkpoint-download-{n}", daemon=True)
            for n in range(workers)
        ]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                thread.join()
        except BaseException:
            # Interrupted while waiting (Ctrl-C): stop the files and let them close their partial
            # files before the error goes on, so nothing writes into the folder after the call.
            self._halt()
            for thread in threads:
                thread.join()
            raise


def _refuse_collisions(specs: Sequence[_FileSpec]) -> None:
    """Two files of one download must never write the same path: a name listed twice, or a file
    named like another's partial file (``a`` and ``a.partial``), is refused before any GET."""
    taken: dict[Path, str] = {}
    for spec in specs:
        for path, role in ((spec.dest, "file"), (_partial_of(spec.dest), "partial file")):
            other = taken.get(path)
            if other is not None:
                raise CheckpointDownloadError(
                    f"checkpoint export lists {spec.filename!r} where {other} is written; "
                    f"two files of one checkpoint cannot share a path"
                )
            taken[path] = f"the {role} of {spec.filename!r}"


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
    workers: int | None = None,
) -> dict[str, Any]:
    """Download a checkpoint's files into ``output_dir``; the summary dict `ct download-checkpoint` prints.

    ``client`` is a `CortexTrainingClient` (anything with list_checkpoints / export_checkpoint).
    ``durable=True`` fsyncs each file before it takes its final name. ``workers`` files are fetched
    at once (default `default_workers`, never more than there are files).
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
        workers=workers,
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
