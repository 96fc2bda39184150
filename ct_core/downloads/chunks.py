"""Rebuilding a file from time-named gzip chunks (stdout and metrics; see docs/logs-and-metrics.md).

Persisted stdout, GPU/system metrics and training metrics are all staged the same way: gzip chunks
named ``<kind>.YYYYMMDD-HHMMSS.<id>.gz`` under ``_<folder>/<sub_job_id>/`` and
``checkpoints/_<folder>/<sub_job_id>/``. `rebuild` turns them into one file per sub-job:

- both roots are listed at once and merged by chunk name (the ``_<folder>/`` copy wins);
- chunks are fetched by up to ``max_workers`` threads, each GET into its own private temporary
  directory, with a bounded look-ahead (four waiting chunks per worker), and appended strictly in
  name order;
- the output is written to ``.<name>.partial`` (or extended in place on resume) and described by a
  manifest that is only ever written after the bytes it counts are fsynced;
- a chunk that does not gunzip is rolled back out of the file, fetched once more, and then skipped
  (or raised with ``strict``); a chunk that vanished after the listing is treated the same way;
- every LIST and GET runs under the artifact retry policy (`ct_core.http.retry.ARTIFACT_TRANSFERS`),
  interruptible by a cancel;
- with a preview, the first priority sub-job's newest chunks are fetched first and
  handed to ``on_preview`` as one file, then reused for the in-order rebuild (never fetched twice).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, cast

from ct_core import fs
from ct_core.constants import DEFAULT_TRANSFER_TIMEOUT_S
from ct_core.downloads.artifacts import ArtifactEntry, ArtifactMissing, ArtifactStore
from ct_core.errors import APIError, ChunkDamaged, DownloadCancelled, DownloadInProgress, NoChunksError
from ct_core.http.retry import ARTIFACT_TRANSFERS, RetryPolicy, artifact_retryable, run_with_retries

__all__ = ["ChunkDamaged", "ChunkDownload", "DownloadInProgress", "Retrier", "Stream"]

#: The logger download warnings (retries, skipped chunks, notices) go to, as users configure it.
logger = logging.getLogger("cortex_training")

#: Concurrent GETs by default, and how many fetched chunks may wait per worker (bounded memory).
DEFAULT_MAX_WORKERS = 16
LOOKAHEAD_PER_WORKER = 4
#: Manifests are checkpointed every 64 chunks or 5 s, but never before a tenth more chunks were added.
CHECKPOINT_EVERY_CHUNKS = 64
CHECKPOINT_EVERY_S = 5.0
#: Leftovers of a killed download are removed once unwritten for an hour.
STALE_TEMP_S = 3600.0
#: Manifest format version (a manifest of another version is ignored and the file rebuilt).
MANIFEST_VERSION = 1
#: A single sub-job id with only these characters is listed by its own folder (a narrower LIST).
_LISTABLE_ID = re.compile(r"[A-Za-z0-9_.:-]+")
#: After one root's listing failed, how long the other one is waited for (seconds).
LISTING_GRACE_S = 10.0
#: How long a sub-job's single root is remembered (seconds).
ROOT_MEMORY_S = 600.0
#: Width of the text progress bar, in cells.
BAR_CELLS = 20
#: Bytes read from a gzip member at a time while appending (memory stays bounded).
INFLATE_BLOCK = 1 << 20
TEMP_PREFIX = "ct-artifact-chunks-"
#: A chunk's name is the time it starts; its rows may run this much later (seconds).
CHUNK_NAME_SLACK_S = 120.0


@dataclass(frozen=True)
class Stream:
    """One kind of chunked artifact: its chunk prefix, folder, output file and progress label."""

    kind: str
    folder: str
    filename: str
    label: str

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(rf"^{re.escape(self.kind)}\.(\d{{8}}-\d{{6}})\.([^./\\]+)\.gz$")

    @property
    def roots(self) -> tuple[str, str]:
        return (f"_{self.folder}", f"checkpoints/_{self.folder}")


STDOUT = Stream("console", "stdout", "stdout.log", "stdout")
GPU_METRICS = Stream("gpu", "metrics", "gpu.jsonl", "metrics")
TRAINING_METRICS = Stream("training", "metrics", "training.jsonl", "training metrics")

ProgressCallback = Callable[[str], None]
ChunkCallback = Callable[[str, int, int, int], None]
#: ``on_preview(sub_job_id, path, chunk_count, first_artifact_uri, last_artifact_uri)``.
PreviewCallback = Callable[[str, str, int, str, str], None]


def chunk_start_time(path: str) -> datetime | None:
    """The UTC time in a chunk's name (``<kind>.YYYYMMDD-HHMMSS.<id>.gz``), None if it has none."""
    parts = path.rsplit("/", 1)[-1].split(".")
    if len(parts) < 4:
        return None
    with contextlib.suppress(ValueError):
        return datetime.strptime(parts[1], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    return None


def preview_indices(new_paths: Sequence[str], preview_seconds: float) -> list[int]:
    """Which of the chunks to fetch first for a preview: those from ``preview_seconds`` (plus the
    name slack) before the newest one. Empty when they would be most of what is new anyway, since
    the whole download then arrives about as soon as the preview would."""
    if not new_paths:
        return []
    newest = chunk_start_time(new_paths[-1])
    if newest is None:
        return []
    cutoff = newest - timedelta(seconds=preview_seconds + CHUNK_NAME_SLACK_S)
    picked = [
        index
        for index, path in enumerate(new_paths)
        if (start := chunk_start_time(path)) is not None and start >= cutoff
    ]
    return [] if len(picked) * 2 > len(new_paths) else picked


def open_private(path: Path, *, truncate: bool) -> BinaryIO:
    """Open ``path`` for reading and writing, readable by its owner only (mode 0600).

    A new file is created with that mode, so it is never readable by others, not even for a moment;
    one left by an older download with wider bits is narrowed, as every download's files are 0600.
    """
    flags = os.O_RDWR | os.O_CREAT | (os.O_TRUNC if truncate else 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags, 0o600)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(descriptor, 0o600)
        return os.fdopen(descriptor, "r+b")
    except BaseException:
        os.close(descriptor)
        raise


def sub_job_dir(output_dir: Path, sub_job_id: str) -> Path:
    """Where a sub-job's files go: ``:`` is not allowed in Windows paths, elsewhere the exact id."""
    return output_dir / (sub_job_id.replace(":", "_") if os.name == "nt" else sub_job_id)


def belongs_to_job(sub_job_id: str, job_id: str) -> bool:
    """A folder name is a sub-job of this job, and is safe to use as a directory."""
    if sub_job_id in (".", "..") or "\\" in sub_job_id or "/" in sub_job_id:
        return False
    return sub_job_id == job_id or sub_job_id.startswith(job_id + ":")


def _vanished(error: BaseException) -> bool:
    return isinstance(error, ArtifactMissing) or (isinstance(error, APIError) and error.status_code == 404)


class _Abandoned(TimeoutError):
    """An attempt ran past transfer_timeout_seconds; it keeps running but is ignored."""


def _with_timeout(action: Callable[[], Any], timeout: float | None) -> Any:
    """Run ``action`` with a wall-clock limit; an attempt past it is abandoned, not awaited."""
    if timeout is None:
        return action()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = action()
        except BaseException as error:  # handed to the caller below
            box["error"] = error

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise _Abandoned(f"attempt took longer than {timeout:g}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


class Retrier:
    """LIST/GET under the artifact retry policy, each attempt time-limited, interruptible by a cancel.

    The loop and the backoff are `ct_core.http.retry.run_with_retries`; this adds the per-attempt
    time limit and the cancel event, which both ends a backoff wait early and stops further attempts.
    """

    def __init__(
        self, cancelled: threading.Event, timeout: float | None, policy: RetryPolicy = ARTIFACT_TRANSFERS
    ) -> None:
        self.cancelled = cancelled
        self.timeout = timeout
        self.policy = policy
        # A session that had an attempt abandoned past the timeout is never kept for another download:
        # the abandoned attempt may still be using it.
        self.abandoned = False

    def run(self, what: str, action: Callable[[], Any]) -> Any:
        def attempt() -> Any:
            if self.cancelled.is_set():
                raise DownloadCancelled("download cancelled")
            try:
                return _with_timeout(action, self.timeout)
            except _Abandoned:
                self.abandoned = True
                raise

        def wait(seconds: float) -> None:
            if self.cancelled.wait(seconds):
                raise DownloadCancelled("download cancelled") from None

        def notice(number: int, delay: float, error: BaseException) -> None:
            logger.warning("retrying %s in %.1fs after: %s", what, delay, error)

        return run_with_retries(
            attempt,
            predicate=artifact_retryable,
            policy=self.policy,
            sleep=wait,
            describe=what,
            on_retry=notice,
        )


@dataclass
class Manifest:
    """What a file holds: sorted run-relative chunk paths, committed length, skipped paths."""

    names: list[str] = field(default_factory=list)
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Manifest | None:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(raw, dict) or raw.get("version") != MANIFEST_VERSION:
            return None
        names, size, skipped = raw.get("names"), raw.get("bytes"), raw.get("skipped", [])
        if (
            not isinstance(names, list)
            or not isinstance(size, int)
            or size < 0
            or not isinstance(skipped, list)
        ):
            return None
        return cls([str(n) for n in names], size, [str(s) for s in skipped])

    def write(self, path: Path) -> None:
        body: dict[str, Any] = {"version": MANIFEST_VERSION, "names": self.names, "bytes": self.bytes}
        if self.skipped:
            body["skipped"] = self.skipped
        # Durable: a manifest must never count bytes of an older file, even after a power cut.
        fs.atomic_write(path, json.dumps(body), durable=True)


def _remove_stale_temp_dirs() -> None:
    base = Path(tempfile.gettempdir())
    now = time.time()
    for folder in base.glob(TEMP_PREFIX + "*"):
        with contextlib.suppress(OSError):
            if now - folder.stat().st_mtime > STALE_TEMP_S:
                shutil.rmtree(folder, ignore_errors=True)


def progress_bar(done: int, total: int) -> str:
    filled = BAR_CELLS if total <= 0 else round(BAR_CELLS * done / total)
    return "[" + "#" * filled + "-" * (BAR_CELLS - filled) + "]"


class RootMemory:
    """Which single root a sub-job's chunks were last found under, for ROOT_MEMORY_S.

    Shared by a client and the clients for_job makes from it, so a later download that names that
    sub-job alone lists one root instead of two.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._items: dict[tuple[str, str], tuple[int, float]] = {}
        self._lock = threading.Lock()

    def get(self, kind: str, sub_job_id: str) -> int | None:
        with self._lock:
            found = self._items.get((kind, sub_job_id))
            if found is None or self._clock() - found[1] > ROOT_MEMORY_S:
                self._items.pop((kind, sub_job_id), None)
                return None
            return found[0]

    def learn(self, kind: str, sub_job_id: str, ranks: set[int]) -> None:
        with self._lock:
            if len(ranks) == 1:
                self._items[(kind, sub_job_id)] = (next(iter(ranks)), self._clock())
            else:
                self._items.pop((kind, sub_job_id), None)


@dataclass
class SubJobChunks:
    sub_job_id: str
    paths: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    roots: set[int] = field(default_factory=set)


def group_listing(
    stream: Stream, job_id: str, primary: Iterable[ArtifactEntry], secondary: Iterable[ArtifactEntry]
) -> dict[str, SubJobChunks]:
    """Chunks per sub-job, merged by name across the two roots; a name in both keeps the primary copy."""
    chosen: dict[str, dict[str, str]] = {}
    roots_seen: dict[str, set[int]] = {}
    for rank, entries in enumerate((primary, secondary)):
        root = stream.roots[rank] + "/"
        for entry in entries:
            rest = entry.path[len(root) :] if entry.path.startswith(root) else ""
            sub, _, name = rest.partition("/")
            if not name or "/" in name or not belongs_to_job(sub, job_id) or not stream.pattern.match(name):
                continue
            roots_seen.setdefault(sub, set()).add(rank)
            chosen.setdefault(sub, {}).setdefault(name, entry.path)
    grouped: dict[str, SubJobChunks] = {}
    for sub, by_name in chosen.items():
        group = SubJobChunks(sub, [by_name[n] for n in sorted(by_name)], roots=set(roots_seen[sub]))
        if len(roots_seen[sub]) > 1:
            group.warnings.append(
                f"{stream.label} chunks for {sub} were found under both {stream.roots[0]}/ and "
                f"{stream.roots[1]}/; they were merged by chunk name, keeping the {stream.roots[0]}/ copy"
            )
        grouped[sub] = group
    return grouped


@contextlib.contextmanager
def exclusive(output_dir: Path, stream: Stream) -> Iterator[None]:
    """Hold ``<output_dir>/.<filename>.lock`` for the download; the OS drops it if the process dies.

    The file is removed when the download ends, so a finished download leaves none behind. The lock
    is ct_core.fs's one lock helper, taken without waiting: a second download of the same folder
    fails at once with DownloadInProgress.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / f".{stream.filename}.lock"
    while True:
        with contextlib.ExitStack() as held:
            try:
                descriptor = held.enter_context(fs.exclusive_lock(path, blocking=False))
            except BlockingIOError:
                raise DownloadInProgress(
                    f"another {stream.label} download is writing into {output_dir}; wait for it to finish"
                ) from None
            # The download before us removes the file as it ends: a lock taken on the file it removed
            # guards nothing, so the lock counts only while the path still names the locked file.
            try:
                current = os.path.samestat(os.fstat(descriptor), os.stat(path))
            except FileNotFoundError:
                current = False
            if not current:
                continue
            try:
                yield
            finally:
                # Removed while still held: no other download can take the lock on this file afterwards.
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            return


def inflate_into(source: Path, sink: Any) -> None:
    """Append every gzip member of ``source`` to ``sink``; raise on a damaged or truncated one."""
    decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)
    seen = False
    with source.open("rb") as handle:
        for block in iter(lambda: handle.read(INFLATE_BLOCK), b""):
            data = block
            while data:
                if decoder.eof:
                    decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)
                seen = True
                sink.write(decoder.decompress(data, INFLATE_BLOCK))
                while decoder.unconsumed_tail:
                    sink.write(decoder.decompress(decoder.unconsumed_tail, INFLATE_BLOCK))
                data = decoder.unused_data if decoder.eof else b""
    if not seen or not decoder.eof:
        raise EOFError(f"{source.name} ends inside a gzip member")


class ChunkDownload:
    """One reconstruction of a stream for one job (use once)."""

    def __init__(
        self,
        store: ArtifactStore,
        job_id: str,
        output_dir: str | os.PathLike[str],
        stream: Stream,
        *,
        resume: bool = False,
        max_workers: int | None = None,
        progress: ProgressCallback | None = None,
        on_chunk: ChunkCallback | None = None,
        sub_job_ids: Sequence[str] | None = None,
        strict: bool = False,
        transfer_timeout_seconds: float | None = DEFAULT_TRANSFER_TIMEOUT_S,
        priority: Sequence[str] = (),
        on_commit: Callable[[dict[str, Any]], None] | None = None,
        missing_ok: bool = False,
        root_memory: RootMemory | None = None,
        preview_seconds: float | None = None,
        on_preview: PreviewCallback | None = None,
        retry_policy: RetryPolicy = ARTIFACT_TRANSFERS,
    ) -> None:
        workers = DEFAULT_MAX_WORKERS if max_workers is None else int(max_workers)
        if workers < 1:
            raise ValueError("max_workers must be >= 1")
        if (preview_seconds is None) != (on_preview is None):
            raise ValueError("preview_seconds and on_preview are given together")
        if preview_seconds is not None and not preview_seconds >= 0:
            raise ValueError(f"preview_seconds must be >= 0, got {preview_seconds!r}")
        self.store, self.job_id, self.stream = store, job_id, stream
        # Absolute, so every saved_path in the answer is (as a checkpoint download's are).
        self.output_dir = Path(output_dir).expanduser().resolve()
        self.resume, self.strict, self.missing_ok = resume, strict, missing_ok
        self.max_workers = workers
        self.progress, self.on_chunk, self.on_commit = progress, on_chunk, on_commit
        self.sub_job_ids = list(sub_job_ids) if sub_job_ids is not None else None
        self.priority = list(priority)
        self.cancelled = threading.Event()
        self.retrier = Retrier(self.cancelled, transfer_timeout_seconds, retry_policy)
        self.saved_any = False
        # A listing still running when the download gave up keeps its session from being kept.
        self.listing_left_running = False
        self.root_memory = root_memory
        self.preview_seconds, self.on_preview = preview_seconds, on_preview
        self._temp: Path | None = None

    # --- listing ---------------------------------------------------------------------------------

    def _list_roots(
        self, narrow: bool, only_rank: int | None = None
    ) -> tuple[list[ArtifactEntry], list[ArtifactEntry]]:
        only = self.sub_job_ids[0] if narrow and self.sub_job_ids else None
        folders = [f"{root}/{only}" if only else root for root in self.stream.roots]

        def listing(folder: str) -> list[ArtifactEntry]:
            return self.store.list(folder)

        if only_rank is not None:
            found = self.retrier.run(
                f"LIST {folders[only_rank]}/", functools.partial(listing, folders[only_rank])
            )
            return (found, []) if only_rank == 0 else ([], found)
        # The two roots are listed at the same time, each on its own cursor.
        pool = ThreadPoolExecutor(2, thread_name_prefix="ct-list")
        futures = [
            pool.submit(self.retrier.run, f"LIST {folder}/", functools.partial(listing, folder))
            for folder in folders
        ]
        pool.shutdown(wait=False)
        _, running = wait(futures, return_when=FIRST_EXCEPTION)
        if running:
            # One listing failed first: the other gets a bounded wait before the caller closes the
            # session; one still running after it finishes on a closed session, never a kept one.
            _, running = wait(futures, timeout=LISTING_GRACE_S)
            self.listing_left_running = bool(running)
        for future in futures:
            if future.done() and future.exception() is not None:
                raise cast(BaseException, future.exception())
        return futures[0].result(), futures[1].result()

    def _list_narrow(self, sub: str) -> dict[str, SubJobChunks]:
        """One sub-job: its remembered root alone when that root still holds its chunks."""
        known = self.root_memory.get(self.stream.kind, sub) if self.root_memory is not None else None
        if known is not None:
            grouped = group_listing(self.stream, self.job_id, *self._list_roots(True, only_rank=known))
            if sub in grouped:
                return grouped
        grouped = group_listing(self.stream, self.job_id, *self._list_roots(True))
        if self.root_memory is not None and sub in grouped:
            self.root_memory.learn(self.stream.kind, sub, grouped[sub].roots)
        return grouped

    def list_chunks(self) -> dict[str, SubJobChunks]:
        narrow = (
            self.sub_job_ids is not None
            and len(self.sub_job_ids) == 1
            and bool(_LISTABLE_ID.fullmatch(self.sub_job_ids[0]))
        )
        if narrow:
            assert self.sub_job_ids is not None
            grouped = self._list_narrow(self.sub_job_ids[0])
        else:
            grouped = group_listing(self.stream, self.job_id, *self._list_roots(False))
            if self.root_memory is not None:
                for sub, group in grouped.items():
                    self.root_memory.learn(self.stream.kind, sub, group.roots)
        if self.sub_job_ids is None:
            return grouped
        missing = [s for s in self.sub_job_ids if s not in grouped]
        if missing and not self.missing_ok:
            everything = (
                group_listing(self.stream, self.job_id, *self._list_roots(False)) if narrow else grouped
            )
            available = sorted(s for s in everything if s not in missing)
            raise NoChunksError(
                f"no {self.stream.label} chunks for {', '.join(missing)}"
                + (f"; sub-jobs with some: {', '.join(available)}" if available else ""),
                sub_job_ids=missing,
                available=available,
            )
        return {s: grouped[s] for s in self.sub_job_ids if s in grouped}

    # --- fetching --------------------------------------------------------------------------------

    def _fetch(self, path: str) -> Path:
        assert self._temp is not None

        # Every attempt gets a fresh private directory: an abandoned one can only write there.
        def attempt() -> Path:
            folder = Path(tempfile.mkdtemp(dir=self._temp))
            return self.store.get(path, folder, timeout=self.retrier.timeout)

        return self.retrier.run(f"GET {path}", attempt)

    # --- one sub-job -----------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    def _counts(self, sub: str, done: int, total: int, size: int) -> None:
        if self.on_chunk is not None:
            self.on_chunk(sub, done, total, size)

    def _choose_target(self, folder: Path, names: list[str]) -> tuple[Path, Path, Manifest]:
        name = self.stream.filename
        candidates = (
            (folder / name, folder / f".{name}.manifest.json"),
            (folder / f".{name}.partial", folder / f".{name}.partial.manifest.json"),
        )
        if self.resume:
            for target, manifest_path in candidates:
                manifest = Manifest.read(manifest_path)
                if (
                    manifest is not None
                    and names[: len(manifest.names)] == manifest.names
                    and target.is_file()
                    and target.stat().st_size >= manifest.bytes
                ):
                    return target, manifest_path, manifest
        target, manifest_path = candidates[1]
        return target, manifest_path, Manifest()

    def _entry(self, group: SubJobChunks, dest: Path, manifest: Manifest) -> dict[str, Any]:
        written = [n for n in manifest.names if n not in set(manifest.skipped)]
        uri = self.store.run_uri
        entry: dict[str, Any] = {
            "sub_job_id": group.sub_job_id,
            "filename": self.stream.filename,
            "saved_path": str(dest),
            "chunk_count": len(written),
            "first_artifact_uri": uri + written[0] if written else None,
            "last_artifact_uri": uri + written[-1] if written else None,
        }
        skipped = [uri + n for n in manifest.skipped]
        if skipped:
            entry["skipped_chunks"] = skipped
        if group.warnings:
            entry["warnings"] = list(group.warnings)
        return entry

    def _sub_job(self, group: SubJobChunks, pool: ThreadPoolExecutor) -> dict[str, Any]:
        sub, names = group.sub_job_id, group.paths
        folder = sub_job_dir(self.output_dir, sub)
        dest = folder / self.stream.filename
        dest_manifest = folder / f".{self.stream.filename}.manifest.json"
        target, manifest_path, manifest = self._choose_target(folder, names)
        new_paths = names[len(manifest.names) :]
        for warning in group.warnings:
            logger.warning("%s", warning)
        if not new_paths and target == dest:
            self._say(f"{self.stream.label}: no new chunks for {sub}\n")
            self._counts(sub, len(names), len(names), manifest.bytes)
            entry = self._entry(group, dest, manifest)
            if self.on_commit is not None:
                self.on_commit(entry)
            return entry
        total_new = len(new_paths)
        self._say(f"{self.stream.label}: {progress_bar(0, total_new)} 0/{total_new} {sub}")
        self._counts(sub, len(manifest.names), len(names), manifest.bytes)
        # The first progress line comes before anything in the output folder changes.
        folder.mkdir(parents=True, exist_ok=True)
        self._remove_stale_leftovers(folder)
        keep = target.exists() and bool(manifest.names)
        lookahead = self.max_workers * LOOKAHEAD_PER_WORKER
        pending: dict[int, Future[Path]] = {}
        preview: list[int] = []
        if self.preview_seconds is not None and self.priority and sub == self.priority[0]:
            preview = preview_indices(new_paths, self.preview_seconds)
        # The preview's chunks go out first; the in-order rebuild picks their futures up later.
        for index in preview:
            pending[index] = pool.submit(self._fetch, new_paths[index])
        next_submit = 0
        last_checkpoint, since_checkpoint = time.monotonic(), 0
        with open_private(target, truncate=not keep) as sink:
            sink.truncate(manifest.bytes)
            sink.seek(manifest.bytes)
            try:
                # The first in-order chunks start downloading while the preview is assembled.
                while next_submit < min(total_new, lookahead):
                    if next_submit not in pending:
                        pending[next_submit] = pool.submit(self._fetch, new_paths[next_submit])
                    next_submit += 1
                if preview:
                    self._show_preview(sub, [(new_paths[i], pending[i]) for i in preview])
                for index, path in enumerate(new_paths):
                    while next_submit < total_new and next_submit < index + lookahead:
                        if next_submit not in pending:
                            pending[next_submit] = pool.submit(self._fetch, new_paths[next_submit])
                        next_submit += 1
                    self._append(pending.pop(index), path, sink, manifest)
                    self.saved_any = True
                    since_checkpoint += 1
                    due = since_checkpoint >= CHECKPOINT_EVERY_CHUNKS or (
                        time.monotonic() - last_checkpoint >= CHECKPOINT_EVERY_S
                    )
                    if due and since_checkpoint * 10 >= len(manifest.names):
                        self._checkpoint(sink, manifest, manifest_path)
                        last_checkpoint, since_checkpoint = time.monotonic(), 0
                    done = index + 1
                    bar = progress_bar(done, total_new)
                    self._say(f"{self.stream.label}: {bar} {done}/{total_new} {sub}")
                    if len(manifest.names) < len(names):
                        self._counts(sub, len(manifest.names), len(names), manifest.bytes)
            except BaseException:
                self.cancelled.set()
                for future in pending.values():
                    future.cancel()
                if manifest.names:
                    self._checkpoint(sink, manifest, manifest_path)
                self._say("\n")
                raise
            self._checkpoint(sink, manifest, manifest_path)
        if target != dest:
            # The rebuilt file replaces the destination only now that every chunk is in it. Its bytes
            # were fsynced by the last checkpoint; the folder fsync covers the rename and the removal.
            fs.atomic_replace(target, dest, durable=False)
            manifest.write(dest_manifest)
            manifest_path.unlink(missing_ok=True)
            fs.fsync_dir(folder)
        self._say("\n")
        self._counts(sub, len(names), len(names), manifest.bytes)
        entry = self._entry(group, dest, manifest)
        if self.on_commit is not None:
            self.on_commit(entry)
        return entry

    def _show_preview(self, sub: str, fetched: list[tuple[str, Future[Path]]]) -> None:
        """The newest chunks' rows, in time order, in one file handed to ``on_preview``.

        The fetched chunk files stay where they are for the rebuild. A chunk that failed or does not
        gunzip is left out here (the rebuild deals with it); with none readable there is no preview.
        """
        assert self._temp is not None and self.on_preview is not None
        folder = Path(tempfile.mkdtemp(dir=self._temp, prefix="preview-"))
        try:
            path = folder / self.stream.filename
            shown: list[str] = []
            with path.open("wb") as sink:
                for name, future in fetched:
                    try:
                        local = future.result()
                    except Exception:
                        continue
                    offset = sink.tell()
                    try:
                        inflate_into(local, sink)
                    except (OSError, EOFError, zlib.error):
                        sink.seek(offset)
                        sink.truncate(offset)
                        continue
                    shown.append(name)
            if shown:
                uri = self.store.run_uri
                self.on_preview(sub, str(path), len(shown), uri + shown[0], uri + shown[-1])
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @staticmethod
    def _checkpoint(sink: Any, manifest: Manifest, manifest_path: Path) -> None:
        # Data first, manifest second: the recorded length never exceeds what is on disk.
        sink.flush()
        os.fsync(sink.fileno())
        manifest.write(manifest_path)

    def _append(self, future: Future[Path], path: str, sink: Any, manifest: Manifest) -> None:
        offset = sink.tell()
        problem: BaseException | None = None
        for attempt in range(2):
            try:
                local = future.result() if attempt == 0 else self._fetch(path)
            except BaseException as error:
                if not _vanished(error):
                    raise
                problem = error
                break
            try:
                inflate_into(local, sink)
                problem = None
                break
            except (OSError, EOFError, zlib.error) as error:
                # Roll the partial member back out of the file before anything else is written.
                sink.seek(offset)
                sink.truncate(offset)
                problem = error
            finally:
                shutil.rmtree(local.parent, ignore_errors=True)
        if problem is not None:
            uri = self.store.run_uri + path
            if self.strict:
                raise ChunkDamaged(
                    f"{self.stream.label} chunk {uri} could not be read: {problem}"
                ) from problem
            logger.warning("skipping %s chunk %s: %s", self.stream.label, uri, problem)
            manifest.skipped.append(path)
        manifest.names.append(path)
        manifest.bytes = sink.tell()

    def _remove_stale_leftovers(self, folder: Path) -> None:
        now = time.time()
        for leftover in folder.glob(f".{self.stream.filename}*.tmp"):
            with contextlib.suppress(OSError):
                if now - leftover.stat().st_mtime > STALE_TEMP_S:
                    leftover.unlink()

    # --- the whole download ----------------------------------------------------------------------

    def run(self, grouped: dict[str, SubJobChunks] | None = None) -> list[dict[str, Any]]:
        _remove_stale_temp_dirs()
        if grouped is None:
            grouped = self.list_chunks()
        if not grouped:
            self._say(f"{self.stream.label}: found 0 chunks\n")
            return []
        order = [s for s in self.priority if s in grouped]
        order += sorted(s for s in grouped if s not in order)
        with exclusive(self.output_dir, self.stream):
            return self._run_locked(grouped, order)

    def _run_locked(self, grouped: dict[str, SubJobChunks], order: list[str]) -> list[dict[str, Any]]:
        self._temp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
        pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="ct-get")
        results: list[dict[str, Any]] = []
        try:
            for sub in order:
                results.append(self._sub_job(grouped[sub], pool))
        except BaseException as error:
            self.cancelled.set()
            if self.saved_any:
                with contextlib.suppress(AttributeError):
                    error.download_progress_saved = True  # type: ignore[attr-defined]
            raise
        finally:
            # Fetches already running finish (into the private directory) before it is removed.
            pool.shutdown(wait=True, cancel_futures=True)
            shutil.rmtree(self._temp, ignore_errors=True)
        return results
