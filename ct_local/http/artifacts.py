"""Experiment-run artifacts of the local server: produced per sub-job, served for LIST/GET.

The service stages what a sub-job leaves behind under its experiment run; ct_local keeps the same
tree on disk, ``<state_dir>/artifacts/<experiment>/versions/<run>/`` (a name longer than a file
name may be gets a bounded folder, :func:`folder_name`):

- ``_stdout/<sub_job_id>/console.YYYYMMDD-HHMMSS.<uuid>.gz``: the console lines written since the
  previous upload, one gzip member per chunk;
- ``_metrics/<sub_job_id>/gpu.YYYYMMDD-HHMMSS.<uuid>.gz``: system rows (real host CPU and memory
  readings, record_version 3) and GPU rows where a CUDA device exists;
- ``_metrics/<sub_job_id>/training.YYYYMMDD-HHMMSS.<uuid>.gz``: one training row per fwd_bwd and step;
- ``_logs/<sub_job_id>/execution.jsonl``: the console as structured JSON lines, replaced whole.

`ArtifactUploader` is a background thread that does the periodic uploads every
``artifact_upload_interval_s``; `record_training_call` is called by the training plane when a
request finishes. `list_artifacts` and `get_artifact` (the operations listLocalArtifacts and
getLocalArtifact) serve the tree outside the REST prefix, the way the SDK's local artifact store
reads it: ``GET /_artifacts/<experiment>/<run>?prefix=<root>/`` answers a listing
shaped like Snowflake's LIST (name, size, md5, last_modified) and
``GET /_artifacts/<experiment>/<run>/<path>`` the object itself. Both answer only a caller who may
see the job that owns the run; anyone else gets the 404 of a run that does not exist.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import re
import secrets
import threading
import time
import uuid
from datetime import UTC, datetime
from email.utils import formatdate
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from ct_core.fs import atomic_write
from ct_local.http import errors
from ct_local.http.context import caller_identity, owner_filter, server_state
from ct_local.state import ServerState
from ct_local.storage import console_logs
from ct_local.storage.training_rows import sample_ts

log = logging.getLogger(__name__)

#: Where the artifact tree lives under the state dir.
ARTIFACTS_DIR = "artifacts"
#: Statuses whose sub-jobs produce output (uploads continue once more after a job leaves them).
ACTIVE_STATUSES = frozenset({"running", "cancelling"})
#: Record versions of the GPU and system rows (training rows: ct_local.storage.training_rows).
GPU_RECORD_VERSION = 2
SYSTEM_RECORD_VERSION = 3
#: Names in a run may only use these characters per segment (no traversal, no backslash).
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.:@=+-]+")


#: A name of at most this many bytes is its own folder name: the file-name limit of the usual file
#: systems (ext4, XFS, APFS, NTFS), so folders of runs staged before the limit was kept still match.
MAX_FOLDER_NAME_BYTES = 255
#: A longer name keeps this many of its first characters, readable, then "~" and a hash of the whole
#: name (32 hex digits): 233 bytes in all, under the limit with room to spare.
FOLDER_NAME_KEPT_CHARS = 200
FOLDER_NAME_HASH_CHARS = 32


def folder_name(name: str) -> str:
    """The folder of an experiment or run name: the name itself when it fits a file name, else its
    start plus a hash of the whole name. "~" never appears in a name (see ``_SAFE_NAME``), so a
    shortened folder never meets the folder of another name kept whole."""
    if len(name.encode()) <= MAX_FOLDER_NAME_BYTES:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:FOLDER_NAME_HASH_CHARS]
    return f"{name[:FOLDER_NAME_KEPT_CHARS]}~{digest}"


def run_root(state_dir: Path, experiment: str, run: str) -> Path:
    """The folder holding ``snow://experiment/<experiment>/versions/<run>/``, for a name of any
    length the server accepts (a long name gets a bounded folder, see :func:`folder_name`)."""
    for part in (experiment, run):
        if not _SAFE_NAME.fullmatch(part) or part in (".", ".."):
            raise ValueError(f"invalid experiment or run name {part[:200]!r}")
    return state_dir / ARTIFACTS_DIR / folder_name(experiment) / "versions" / folder_name(run)


def _time_ordered_uuid() -> str:
    """A UUID whose leading bits are the time in ms (UUIDv7 layout), so same-second chunks keep order."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | (0x7 << 76) | (rand & ((1 << 76) - 1))
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuid.UUID(int=value))


def chunk_name(kind: str, now: float | None = None) -> str:
    """``<kind>.YYYYMMDD-HHMMSS.<uuid>.gz``: the UTC time the chunk starts, then a unique id."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    return f"{kind}.{moment.strftime('%Y%m%d-%H%M%S')}.{_time_ordered_uuid()}.gz"


def write_object(root: Path, rel: str, data: bytes) -> Path:
    """Stage one object atomically (a reader never sees half of it; the temporary name is hidden)."""
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data, durable=False)
    return target


# --- host readings -----------------------------------------------------------------------------


class HostSampler:
    """Real host CPU utilisation (from /proc/stat deltas) and memory (from /proc/meminfo)."""

    def __init__(self) -> None:
        self._last: tuple[int, int] | None = self._cpu_times()

    @staticmethod
    def _cpu_times() -> tuple[int, int] | None:
        try:
            fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        except (OSError, IndexError):
            return None
        values = [int(v) for v in fields]
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        return sum(values), idle

    def cpu_util_pct(self) -> float | None:
        now = self._cpu_times()
        last, self._last = self._last, now
        if now is None or last is None or now[0] <= last[0]:
            return None
        busy = (now[0] - last[0]) - (now[1] - last[1])
        return round(100.0 * busy / (now[0] - last[0]), 2)

    @staticmethod
    def memory() -> tuple[int | None, int | None]:
        try:
            info = dict(
                (line.split(":")[0], int(line.split()[1]) * 1024)
                for line in Path("/proc/meminfo").read_text().splitlines()
                if line.split()[1:2] and line.split()[1].isdigit()
            )
        except OSError:
            return None, None
        total = info.get("MemTotal")
        available = info.get("MemAvailable")
        return (total - available if total is not None and available is not None else None), total


def _gpu_rows(sub_job_id: str, ts: str, seq: int, seq_epoch: str, interval: float) -> list[dict[str, Any]]:
    """GPU rows only where torch already sees a CUDA device (never imported just for this)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return []
    rows = []
    for index in range(torch.cuda.device_count()):
        free, total = torch.cuda.mem_get_info(index)
        props = torch.cuda.get_device_properties(index)
        try:
            util: float | None = float(torch.cuda.utilization(index))
        except Exception:  # the NVML reading is optional; null means unmeasured
            util = None
        rows.append(
            {
                "record_version": GPU_RECORD_VERSION,
                "sub_job_id": sub_job_id,
                "sample_ts": ts,
                "worker_num": 0,
                "local_gpu_index": index,
                "global_gpu_index": index,
                "gpu_uuid": str(getattr(props, "uuid", f"GPU-{index}")),
                "gpu_util_pct": util,
                "fb_used_bytes": int(total - free),
                "fb_free_bytes": int(free),
                "power_watts": None,
                "gpu_temp_c": None,
                "seq": seq,
                "seq_epoch": seq_epoch,
                "sample_interval_s": interval,
            }
        )
    return rows


# --- training rows ---------------------------------------------------------------------------


def staging_path(state_dir: Path, job_id: str, sub_job_id: str) -> Path:
    return state_dir / "jobs" / job_id / "training-rows" / (sub_job_id.replace(":", "_") + ".jsonl")


def saves_training_metrics(sub_job: dict[str, Any]) -> bool:
    """A training sub-job uploads its rows unless training_config.save_training_metrics is false."""
    config = sub_job.get("training_config")
    return not (isinstance(config, dict) and config.get("save_training_metrics") is False)


def record_training_call(state: ServerState, row: Any, result: dict[str, Any]) -> None:
    """Called when a training request finishes: stage its training row for the next upload.

    Never raises: losing a metrics row must not fail the request that produced it.
    """
    try:
        if str(row.sub_job_id).split(":")[-2:-1] != ["training"]:
            return
        record = state.training_rows.row(str(row.sub_job_id), str(row.kind), str(row.request_id), result)
        if record is None:
            return
        path = staging_path(state.settings.state_dir, row.job_id, row.sub_job_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps(record, separators=(",", ":")) + "\n")
    except Exception:
        log.exception("could not stage a training metrics row")


# --- the uploader ------------------------------------------------------------------------------


class ArtifactUploader:
    """Every interval, turns each active sub-job's new output into staged chunks of its run."""

    def __init__(self, state: ServerState, interval_s: float) -> None:
        self.state = state
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._host = HostSampler()
        self._seq: dict[str, int] = {}
        # Jobs uploaded during the last pass: one more pass after they stop catches their last lines.
        self._active: set[str] = set()
        # Jobs whose upload failed, with the failure last logged: each failure is logged once.
        self._failing: dict[str, str] = {}

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ct-artifacts", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.upload_once()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.upload_once()
            except Exception:
                log.exception("artifact upload pass failed")

    def upload_once(self) -> None:
        store = self.state.store
        active = {job.job_id: job for job in store.jobs_with_status(ACTIVE_STATUSES)}
        finishing = [store.get_job(job_id) for job_id in self._active - set(active)]
        for job in [*active.values(), *(j for j in finishing if j is not None)]:
            self._upload_job(job, running=job.job_id in active)
        self._active = set(active)
        self._failing = {job_id: why for job_id, why in self._failing.items() if job_id in active}

    def _upload_job(self, job: Any, *, running: bool) -> None:
        """One job's uploads. A failure stays with its job: it is logged once (until the job's
        upload works again or fails differently) and the pass goes on with the other jobs."""
        try:
            for sub in job.sub_jobs:
                self._upload_sub_job(
                    job, str(sub["sub_job_id"]), sample=running, training_rows=saves_training_metrics(sub)
                )
        except Exception as exc:
            # The message is cut short: it may quote a name of any length.
            why = f"{type(exc).__name__}: {str(exc)[:200]}"
            if self._failing.get(job.job_id) != why:
                self._failing[job.job_id] = why
                log.warning("artifact upload of job %s failed, other jobs go on: %s", job.job_id, why)
        else:
            self._failing.pop(job.job_id, None)

    def _offsets_path(self, job_id: str) -> Path:
        return self.state.settings.state_dir / "jobs" / job_id / "artifact-offsets.json"

    def _upload_sub_job(self, job: Any, sub_job_id: str, *, sample: bool, training_rows: bool = True) -> None:
        state_dir: Path = self.state.settings.state_dir
        root = run_root(state_dir, job.experiment_name, job.experiment_run_name)
        offsets_file = self._offsets_path(job.job_id)
        try:
            offsets = json.loads(offsets_file.read_text())
        except (OSError, ValueError):
            offsets = {}
        changed = False
        console = console_logs.log_path(state_dir, job.job_id, sub_job_id)
        changed |= self._ship_new_bytes(
            console, offsets, f"console:{sub_job_id}", root, f"_stdout/{sub_job_id}", "console", raw=True
        )
        if changed:
            self._write_execution_log(console, root, sub_job_id)
        training = staging_path(state_dir, job.job_id, sub_job_id)
        if not training_rows:
            # The sub-job opted out: the rows staged for this sub-job are dropped, never uploaded.
            training.unlink(missing_ok=True)
        changed |= self._ship_new_bytes(
            training, offsets, f"training:{sub_job_id}", root, f"_metrics/{sub_job_id}", "training", raw=False
        )
        if sample:
            self._sample(root, sub_job_id)
        if changed:
            offsets_file.parent.mkdir(parents=True, exist_ok=True)
            write_object(offsets_file.parent, offsets_file.name, json.dumps(offsets).encode())

    @staticmethod
    def _ship_new_bytes(
        source: Path, offsets: dict[str, int], key: str, root: Path, folder: str, kind: str, *, raw: bool
    ) -> bool:
        if not source.is_file():
            return False
        start = int(offsets.get(key, 0))
        with source.open("rb") as handle:
            handle.seek(start)
            data = handle.read()
        # Only whole lines: a line being written now goes out with the next chunk.
        end = data.rfind(b"\n") + 1
        if end <= 0:
            return False
        payload = data[:end]
        if raw:
            # The console file stores "<timestamp> <text>"; the persisted console keeps the text.
            payload = b"".join(
                (line.split(b" ", 1)[1] if b" " in line else line) + b"\n" for line in payload.splitlines()
            )
        write_object(root, f"{folder}/{chunk_name(kind)}", gzip.compress(payload, mtime=0))
        offsets[key] = start + end
        return True

    @staticmethod
    def _write_execution_log(console: Path, root: Path, sub_job_id: str) -> None:
        lines = []
        for raw in console.read_text(encoding="utf-8", errors="replace").splitlines():
            stamp, _, text = raw.partition(" ")
            level, _, message = text.partition(" ")
            lines.append(
                json.dumps(
                    {"ts": stamp, "level": level, "sub_job_id": sub_job_id, "message": message},
                    separators=(",", ":"),
                )
            )
        write_object(root, f"_logs/{sub_job_id}/execution.jsonl", ("\n".join(lines) + "\n").encode())

    def _sample(self, root: Path, sub_job_id: str) -> None:
        seq = self._seq.get(sub_job_id, 0)
        ts = sample_ts()
        epoch = self.state.training_rows.seq_epoch
        used, total = self._host.memory()
        rows: list[dict[str, Any]] = [
            {
                "kind": "system",
                "record_version": SYSTEM_RECORD_VERSION,
                "sub_job_id": sub_job_id,
                "sample_ts": ts,
                "worker_num": 0,
                "seq": seq,
                "seq_epoch": epoch,
                "sample_interval_s": self.interval_s,
                "cpu_util_pct": self._host.cpu_util_pct(),
                "cpu_count": os.cpu_count(),
                "mem_used_bytes": used,
                "mem_total_bytes": total,
            },
            *_gpu_rows(sub_job_id, ts, seq, epoch, self.interval_s),
        ]
        self._seq[sub_job_id] = seq + 1
        body = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()
        write_object(root, f"_metrics/{sub_job_id}/{chunk_name('gpu')}", gzip.compress(body, mtime=0))


# --- routes ------------------------------------------------------------------------------------


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run_not_found(experiment: str, run: str) -> errors.ServiceError:
    # The code of a missing job, and a message naming only what the caller sent: a run of another
    # role and a run that does not exist answer exactly alike.
    return errors.ServiceError(
        404, f"Experiment run {experiment}/versions/{run} not found", errors.CODE_JOB_NOT_FOUND
    )


def _check_run_owner(request: Request, experiment: str, run: str) -> None:
    """404 unless a job the caller may see owns the run (the job routes' visibility rule)."""
    state = server_state(request)
    owner = owner_filter(request, caller_identity(request))
    hidden = {h.upper() for h in state.settings.hidden_schemas}
    rows = state.store.read(
        "SELECT owner_role, database_name, schema_name FROM jobs "
        "WHERE experiment_name = ? AND experiment_run_name = ?",
        (experiment, run),
    )
    visible = any(
        (owner is None or row["owner_role"] == owner)
        and f"{row['database_name']}.{row['schema_name']}".upper() not in hidden
        for row in rows
    )
    if not visible:
        raise _run_not_found(experiment, run)


def _root_of(request: Request) -> Path:
    experiment, run = request.path_params["experiment_name"], request.path_params["run_name"]
    # Same token rule and same owner rule as the job the run belongs to.
    _check_run_owner(request, experiment, run)
    try:
        return run_root(server_state(request).settings.state_dir, experiment, run)
    except ValueError as exc:
        raise errors.ServiceError(400, str(exc), 400) from None


def _safe_rel(rel: str) -> bool:
    parts = rel.split("/")
    return (
        bool(rel)
        and "\\" not in rel
        and not rel.startswith("/")
        and all(p not in ("", ".", "..") for p in parts)
    )


async def list_artifacts(request: Request) -> Response:
    """LIST: every object below ``prefix`` (a run-relative folder), Snowflake-shaped rows."""
    root = _root_of(request)
    prefix = request.query_params.get("prefix", "").strip("/")
    if prefix and not _safe_rel(prefix):
        raise errors.ServiceError(400, f"invalid artifact prefix {prefix!r}", 400)
    base = root / prefix if prefix else root
    run = request.path_params["run_name"]
    rows = []
    if base.is_dir():
        for path in sorted(base.rglob("*")):
            if not path.is_file() or path.name.startswith("."):
                continue
            rel = path.relative_to(root).as_posix()
            stat = path.stat()
            rows.append(
                {
                    "name": f"/versions/{run}/{rel}",
                    "size": stat.st_size,
                    "md5": _md5(path),
                    "last_modified": formatdate(stat.st_mtime, usegmt=True),
                }
            )
    return JSONResponse({"files": rows})


async def get_artifact(request: Request) -> Response:
    """GET: one object of the run, by its run-relative path."""
    root = _root_of(request)
    rel = request.path_params["artifact_path"]
    target = root / rel
    if not _safe_rel(rel) or not target.is_file():
        raise errors.ServiceError(404, f"artifact {rel!r} does not exist", 404)
    return FileResponse(target)
