"""What the Resources and Training tabs show, computed from downloaded metrics files.

The rows come from the SDK's downloads (`download_metrics` writes `<sub_job_id>/gpu.jsonl` with
GPU and system rows, `download_training_metrics` writes `<sub_job_id>/training.jsonl`). A file is
read only up to the byte length its manifest (`.<name>.manifest.json` beside it) says is
committed: bytes past it may belong to a download still writing. Nothing here imports Textual.

Resources: a view (`5m`, `15m`, `1h`, `6h`, `all`) is a window ending at the newest sample. It is
cut into at most `MAX_BUCKETS` buckets; a sample stands for the `sample_interval_s` seconds
before its time, so it counts in every bucket that span overlaps, weighted by the overlap. A
window average is weighted the same way, so a GPU sampled twice as often does not count twice.

Training: each step's row with the fwd_bwd calls that counted toward it (a call whose step was
not known yet belongs to the step row that follows it), and every call on its own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

#: The Resources views: name and span in seconds (None: the whole history).
VIEWS: tuple[tuple[str, float | None], ...] = (
    ("5m", 300.0),
    ("15m", 900.0),
    ("1h", 3600.0),
    ("6h", 21600.0),
    ("all", None),
)
#: The view a job's Resources tab opens on (it holds the preview's ten minutes).
DEFAULT_VIEW = "15m"
#: A chart never has more buckets than this, however wide the terminal.
MAX_BUCKETS = 240
#: The preview asks for the newest ten minutes of samples first ...
PREVIEW_S = 600.0
#: ... and never draws more than the newest half hour of what it got before the full history.
PREVIEW_MAX_S = 1800.0
#: Row schema versions the tab reads; other versions are counted as ignored.
GPU_RECORD_VERSION = 2
SYSTEM_RECORD_VERSION = 3
TRAINING_RECORD_VERSION = 2
#: A sample without a usable interval stands for this many seconds.
DEFAULT_INTERVAL_S = 1.0
GIB = float(1 << 30)
#: Metric names, first found wins, for the three training charts.
LOSS_KEYS = ("avg_loss", "loss")
LR_KEYS = ("last_lr", "lr", "learning_rate")
GRAD_NORM_KEYS = ("grad_norm",)
MISSING = "—"


# --- reading committed bytes ------------------------------------------------------------------


def manifest_path(path: Path) -> Path:
    """The manifest the SDK keeps beside a rebuilt file."""
    return path.with_name(f".{path.name}.manifest.json")


def committed_bytes(path: Path) -> int:
    """How many bytes of `path` its manifest says are committed (0 without a readable manifest)."""
    try:
        manifest = json.loads(manifest_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    size = manifest.get("bytes") if isinstance(manifest, dict) else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else 0


def committed_lines(path: Path) -> list[bytes]:
    """The whole lines among the committed bytes of `path`."""
    limit = committed_bytes(path)
    if limit <= 0:
        return []
    try:
        with path.open("rb") as handle:
            data = handle.read(limit)
    except OSError:
        return []
    end = data.rfind(b"\n") + 1
    return data[:end].splitlines() if end else []


def file_lines(path: Path) -> list[bytes]:
    """Every whole line of a file that is complete as it is (the preview's file)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    end = data.rfind(b"\n") + 1
    return data[:end].splitlines() if end else []


def parse_time(raw: Any) -> float | None:
    """An RFC 3339 time (nanoseconds allowed, `Z` or an offset) as epoch seconds."""
    if not isinstance(raw, str) or not raw:
        return None
    text = raw.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()


def _number(raw: Any) -> float | None:
    """A finite number as float; None for null, text, booleans, NaN and infinities."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    value = float(raw)
    return value if math.isfinite(value) else None


def _json_objects(lines: Iterable[bytes | str]) -> Iterable[dict[str, Any] | None]:
    for line in lines:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            yield None
            continue
        yield value if isinstance(value, dict) else None


# --- GPU and system rows ----------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One gauge reading: when, the seconds it stands for, and the value (None: unmeasured)."""

    at: float
    interval: float
    value: float | None


@dataclass
class GpuSeries:
    """One GPU of one sub-job (`global_gpu_index` is unique only inside its sub-job)."""

    index: int
    uuid: str | None = None
    util: list[Sample] = field(default_factory=list)
    fb_used: float | None = None
    fb_total: float | None = None
    newest: float = -math.inf


@dataclass
class WorkerSeries:
    """The host of one worker of one sub-job, from its system rows."""

    worker: int
    cpu: list[Sample] = field(default_factory=list)
    cpu_count: int | None = None
    mem_used: float | None = None
    mem_total: float | None = None
    newest: float = -math.inf


@dataclass
class Resources:
    """The GPU and system rows of one sub-job, grouped by GPU and by worker."""

    gpus: dict[int, GpuSeries] = field(default_factory=dict)
    workers: dict[int, WorkerSeries] = field(default_factory=dict)
    #: Rows that were not valid JSON objects, lacked a readable time, or were of another version.
    ignored: int = 0
    rows: int = 0

    @property
    def newest(self) -> float | None:
        times = [g.newest for g in self.gpus.values()] + [w.newest for w in self.workers.values()]
        times = [t for t in times if math.isfinite(t)]
        return max(times) if times else None

    @property
    def oldest(self) -> float | None:
        starts = [s.at - s.interval for g in self.gpus.values() for s in g.util[:1]]
        starts += [s.at - s.interval for w in self.workers.values() for s in w.cpu[:1]]
        return min(starts) if starts else None

    def clip(self, keep_s: float) -> Resources:
        """The same rows, only those of the newest `keep_s` seconds."""
        newest = self.newest
        if newest is None:
            return self
        cutoff = newest - keep_s
        clipped = Resources(ignored=self.ignored, rows=self.rows)
        for index, gpu in self.gpus.items():
            kept = [s for s in gpu.util if s.at >= cutoff]
            clipped.gpus[index] = GpuSeries(index, gpu.uuid, kept, gpu.fb_used, gpu.fb_total, gpu.newest)
        for number, worker in self.workers.items():
            kept = [s for s in worker.cpu if s.at >= cutoff]
            clipped.workers[number] = WorkerSeries(
                number, kept, worker.cpu_count, worker.mem_used, worker.mem_total, worker.newest
            )
        return clipped


def _interval(row: dict[str, Any]) -> float:
    value = _number(row.get("sample_interval_s"))
    return value if value is not None and value > 0 else DEFAULT_INTERVAL_S


def _index(raw: Any) -> int | None:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else None


def read_resources(lines: Iterable[bytes | str]) -> Resources:
    """Group GPU rows (no kind, or `gpu`; version 2) and system rows (`system`; version 3).

    Other kinds are skipped without counting (a later format may add some); rows that are not
    objects, have no readable time or index, or carry another version are counted as ignored.
    """
    found = Resources()
    for row in _json_objects(lines):
        found.rows += 1
        if row is None:
            found.ignored += 1
            continue
        kind = row.get("kind", "gpu")
        if kind not in ("gpu", "system"):
            continue
        at = parse_time(row.get("sample_ts"))
        if kind == "gpu":
            index = _index(row.get("global_gpu_index"))
            if row.get("record_version") != GPU_RECORD_VERSION or at is None or index is None:
                found.ignored += 1
                continue
            gpu = found.gpus.setdefault(index, GpuSeries(index))
            gpu.util.append(Sample(at, _interval(row), _number(row.get("gpu_util_pct"))))
            if at >= gpu.newest:
                gpu.newest = at
                gpu.uuid = str(row["gpu_uuid"]) if row.get("gpu_uuid") else gpu.uuid
                used, free = _number(row.get("fb_used_bytes")), _number(row.get("fb_free_bytes"))
                gpu.fb_used = used
                gpu.fb_total = used + free if used is not None and free is not None else None
        else:
            number = _index(row.get("worker_num"))
            if row.get("record_version") != SYSTEM_RECORD_VERSION or at is None or number is None:
                found.ignored += 1
                continue
            worker = found.workers.setdefault(number, WorkerSeries(number))
            worker.cpu.append(Sample(at, _interval(row), _number(row.get("cpu_util_pct"))))
            if at >= worker.newest:
                worker.newest = at
                count = _number(row.get("cpu_count"))
                worker.cpu_count = int(count) if count is not None else None
                worker.mem_used = _number(row.get("mem_used_bytes"))
                worker.mem_total = _number(row.get("mem_total_bytes"))
    for gpu in found.gpus.values():
        gpu.util.sort(key=lambda s: s.at)
    for worker in found.workers.values():
        worker.cpu.sort(key=lambda s: s.at)
    return found


def view_span(view: str) -> float | None:
    for name, span in VIEWS:
        if name == view:
            return span
    raise ValueError(f"unknown view {view!r}; use one of {', '.join(name for name, _ in VIEWS)}")


def next_view(view: str, step: int = 1) -> str:
    names = [name for name, _ in VIEWS]
    return names[(names.index(view) + step) % len(names)] if view in names else DEFAULT_VIEW


def window(data: Resources, view: str) -> tuple[float, float] | None:
    """(start, end) of a view, anchored on the newest sample; None when there is none."""
    end = data.newest
    if end is None:
        return None
    span = view_span(view)
    if span is None:
        oldest = data.oldest
        start = oldest if oldest is not None and oldest < end else end - DEFAULT_INTERVAL_S
        return start, end
    return end - span, end


def buckets(samples: Sequence[Sample], start: float, end: float, count: int) -> list[float | None]:
    """`count` bucket values over [start, end]: each the overlap-weighted mean of the samples
    whose span (`interval` seconds up to their time) overlaps it; None where none does."""
    count = max(1, min(count, MAX_BUCKETS))
    width = (end - start) / count if end > start else 0.0
    sums = [0.0] * count
    weights = [0.0] * count
    for sample in samples:
        if sample.value is None:
            continue
        low, high = max(sample.at - sample.interval, start), min(sample.at, end)
        if width <= 0:
            if start <= sample.at <= end:
                sums[-1] += sample.value
                weights[-1] += 1.0
            continue
        if high <= low:
            continue
        first = min(int((low - start) / width), count - 1)
        last = min(math.ceil((high - start) / width) - 1, count - 1)
        for slot in range(first, max(last, first) + 1):
            bucket_low = start + slot * width
            overlap = min(high, bucket_low + width) - max(low, bucket_low)
            if overlap > 0:
                sums[slot] += sample.value * overlap
                weights[slot] += overlap
    return [sums[i] / weights[i] if weights[i] > 0 else None for i in range(count)]


def window_average(samples: Sequence[Sample], start: float, end: float) -> float | None:
    """The overlap-weighted mean of the samples over [start, end]."""
    total = weight = 0.0
    for sample in samples:
        if sample.value is None:
            continue
        low, high = max(sample.at - sample.interval, start), min(sample.at, end)
        overlap = high - low
        if overlap > 0:
            total += sample.value * overlap
            weight += overlap
    return total / weight if weight > 0 else None


def current(samples: Sequence[Sample]) -> float | None:
    """The newest reading's value (None when the newest reading is unmeasured)."""
    return samples[-1].value if samples else None


def percent(value: float | None) -> str:
    return MISSING if value is None else f"{value:.0f}%"


def gib_pair(used: float | None, total: float | None) -> str:
    """`used/total GiB` with one decimal; a missing value is shown as an em dash."""
    left = MISSING if used is None else f"{used / GIB:.1f}"
    right = MISSING if total is None else f"{total / GIB:.1f}"
    return f"{left}/{right} GiB"


@dataclass(frozen=True)
class GpuLine:
    """One GPU's row on the Resources tab."""

    index: int
    current: float | None
    average: float | None
    fb: str

    def text(self) -> str:
        now, average = percent(self.current), percent(self.average)
        return f"GPU {self.index:<3} util {now:>4} now  {average:>4} avg  FB {self.fb}"


def gpu_lines(data: Resources, view: str) -> list[GpuLine]:
    span = window(data, view)
    lines = []
    for index in sorted(data.gpus):
        gpu = data.gpus[index]
        average = window_average(gpu.util, *span) if span else None
        lines.append(GpuLine(index, current(gpu.util), average, gib_pair(gpu.fb_used, gpu.fb_total)))
    return lines


def system_lines(data: Resources, view: str) -> list[str]:
    span = window(data, view)
    lines = []
    for number in sorted(data.workers):
        worker = data.workers[number]
        average = window_average(worker.cpu, *span) if span else None
        cpus = f" of {worker.cpu_count} CPUs" if worker.cpu_count else ""
        lines.append(
            f"worker {number:<3} CPU {percent(current(worker.cpu)):>4} now  {percent(average):>4} avg{cpus}"
            f"  mem {gib_pair(worker.mem_used, worker.mem_total)}"
        )
    return lines


def all_gpu_samples(data: Resources) -> list[Sample]:
    return [sample for gpu in data.gpus.values() for sample in gpu.util]


def all_cpu_samples(data: Resources) -> list[Sample]:
    return [sample for worker in data.workers.values() for sample in worker.cpu]


# --- training rows ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One training row: a fwd_bwd call or a step, with the step it counts toward once known."""

    at: float | None
    op: str
    step: int | None
    call: int | None
    request_id: str
    metrics: dict[str, float]


@dataclass(frozen=True)
class StepLine:
    """One step: its calls' mean loss, and the step's own grad-norm and learning rate."""

    step: int
    calls: int
    loss: float | None
    grad_norm: float | None
    lr: float | None
    at: float | None
    done: bool


def first_metric(metrics: dict[str, float], keys: Sequence[str]) -> float | None:
    for key in keys:
        if key in metrics:
            return metrics[key]
    return None


@dataclass
class Training:
    """The training rows of one sub-job, in file order (the order they were made in)."""

    calls: list[Call] = field(default_factory=list)
    ignored: int = 0

    def steps(self) -> list[StepLine]:
        """One line per step; the calls after the newest step row make a last, unfinished line."""
        lines: list[StepLine] = []
        pending: list[Call] = []
        for row in self.calls:
            if row.op == "fwd_bwd":
                pending.append(row)
                continue
            if row.op != "step" or row.step is None:
                continue
            own = [c for c in pending if c.step in (None, row.step)]
            pending = [c for c in pending if c.step not in (None, row.step)]
            lines.append(self._line(row.step, own, row, done=True))
        if pending:
            known = [c.step for c in pending if c.step is not None]
            step = max(known) if known else (lines[-1].step + 1 if lines else 0)
            lines.append(self._line(step, pending, None, done=False))
        return lines

    @staticmethod
    def _line(step: int, calls: list[Call], row: Call | None, *, done: bool) -> StepLine:
        losses = [v for c in calls if (v := first_metric(c.metrics, LOSS_KEYS)) is not None]
        metrics = row.metrics if row is not None else {}
        when = row.at if row is not None else (calls[-1].at if calls else None)
        return StepLine(
            step=step,
            calls=len(calls),
            loss=sum(losses) / len(losses) if losses else None,
            grad_norm=first_metric(metrics, GRAD_NORM_KEYS),
            lr=first_metric(metrics, LR_KEYS),
            at=when,
            done=done,
        )

    def resolved_calls(self) -> list[Call]:
        """Every row, a fwd_bwd call without a step given the step of the step row that follows it."""
        resolved: list[Call] = []
        waiting: list[int] = []
        for row in self.calls:
            if row.op == "fwd_bwd" and row.step is None:
                waiting.append(len(resolved))
            elif row.op == "step" and row.step is not None:
                for position in waiting:
                    old = resolved[position]
                    resolved[position] = Call(old.at, old.op, row.step, old.call, old.request_id, old.metrics)
                waiting = []
            resolved.append(row)
        return resolved

    def series(self) -> dict[str, list[tuple[float, float]]]:
        """The chart series over steps: loss (mean of each step's calls), lr and grad_norm."""
        lines = self.steps()
        return {
            "loss": [(float(s.step), s.loss) for s in lines if s.loss is not None],
            "lr": [(float(s.step), s.lr) for s in lines if s.lr is not None],
            "grad_norm": [(float(s.step), s.grad_norm) for s in lines if s.grad_norm is not None],
        }


def read_training(lines: Iterable[bytes | str]) -> Training:
    """Training rows (`training`, version 2); other kinds skipped, broken rows counted as ignored."""
    found = Training()
    for row in _json_objects(lines):
        if row is None:
            found.ignored += 1
            continue
        if row.get("kind") != "training":
            continue
        op = row.get("op")
        if row.get("record_version") != TRAINING_RECORD_VERSION or op not in ("fwd_bwd", "step"):
            found.ignored += 1
            continue
        raw = row.get("metrics")
        metrics = {
            str(name): number
            for name, value in (raw.items() if isinstance(raw, dict) else ())
            if (number := _number(value)) is not None
        }
        found.calls.append(
            Call(
                at=parse_time(row.get("sample_ts")),
                op=str(op),
                step=_index(row.get("step")),
                call=_index(row.get("call")),
                request_id=str(row.get("request_id") or ""),
                metrics=metrics,
            )
        )
    return found


def metric_text(value: float | None) -> str:
    if value is None:
        return MISSING
    magnitude = abs(value)
    if value != 0 and (magnitude < 1e-3 or magnitude >= 1e6):
        return f"{value:.3e}"
    return f"{value:.4f}".rstrip("0").rstrip(".") if not value.is_integer() else str(int(value))


def clock(at: float | None) -> str:
    """A row's local time of day."""
    return datetime.fromtimestamp(at).astimezone().strftime("%H:%M:%S") if at is not None else MISSING


# --- downloads ----------------------------------------------------------------------------------

#: ``on_data(sub_job_id, data, complete)``: rows of one sub-job; `complete` is False for the preview.
#: What a callback returns is ignored (a screen's hand-over to the UI thread says whether it could).
ResourcesCallback = Callable[[str, Resources, bool], object]
TrainingCallback = Callable[[str, Training], object]


def download_resources(
    client: Any,
    job_id: str,
    folder: Path,
    *,
    first: str | None,
    sub_job_ids: Sequence[str] | None,
    on_data: ResourcesCallback,
) -> list[dict[str, Any]]:
    """Download (resuming) the job's GPU and system rows into `folder`, handing rows over as they come.

    `first` is written first, and its newest ten minutes arrive through the preview before the
    rest of its history; each committed file is read up to its manifest's length. Returns the
    download's entries (their warnings are the tab's notes).
    """

    def preview(sub_job_id: str, path: str, *_: Any) -> None:
        # The file is removed once this returns: read it now.
        data = read_resources(file_lines(Path(path)))
        on_data(sub_job_id, data.clip(PREVIEW_MAX_S), False)

    def committed(entry: dict[str, Any]) -> None:
        saved = entry.get("saved_path")
        if saved:
            on_data(str(entry.get("sub_job_id")), read_resources(committed_lines(Path(saved))), True)

    options: dict[str, Any] = {"resume": True, "sub_job_ids": sub_job_ids, "on_commit": committed}
    if first:
        options.update(priority=[first], preview_seconds=PREVIEW_S, on_preview=preview)
    return list(client.download_metrics(job_id, folder, **options) or [])


def download_training(
    client: Any,
    job_id: str,
    folder: Path,
    *,
    first: str | None,
    sub_job_ids: Sequence[str] | None,
    on_data: TrainingCallback,
) -> list[dict[str, Any]]:
    """Download (resuming) the training rows of the job's training sub-jobs into `folder`."""

    def committed(entry: dict[str, Any]) -> None:
        saved = entry.get("saved_path")
        if saved:
            on_data(str(entry.get("sub_job_id")), read_training(committed_lines(Path(saved))))

    options: dict[str, Any] = {"resume": True, "sub_job_ids": sub_job_ids, "on_commit": committed}
    if first:
        options["priority"] = [first]
    return list(client.download_training_metrics(job_id, folder, **options) or [])


def notes_of(entries: Iterable[dict[str, Any]]) -> list[str]:
    """The download's warnings, each once, in order."""
    seen: dict[str, None] = {}
    for entry in entries:
        for warning in entry.get("warnings") or []:
            seen.setdefault(str(warning), None)
    return list(seen)
