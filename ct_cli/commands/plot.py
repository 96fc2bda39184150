"""`ct plot JOB_ID [--output FILE.png]`: loss, learning rate and CPU/GPU utilisation of a job as one image.

The numbers come from the job's downloaded metrics (gpu.jsonl and training.jsonl), fetched
with resume into ``--data-dir`` (a temporary folder by default). matplotlib is imported only here and
drawn with its file-only Agg backend, so the command works without a display.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output


@dataclass
class Series:
    """What the figure shows, read from the JSON-lines files."""

    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr_steps: list[int] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    cpu: dict[str, list[tuple[datetime, float]]] = field(default_factory=dict)
    gpu: dict[str, list[tuple[datetime, float]]] = field(default_factory=dict)


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a torn last line of a file still being written
        if isinstance(row, dict):
            yield row


def _when(row: dict[str, Any]) -> datetime | None:
    stamp = row.get("sample_ts")
    if not isinstance(stamp, str):
        return None
    # Python parses at most microseconds: cut nanosecond fractions down first.
    head, _, frac = stamp.rstrip("Z").partition(".")
    try:
        return datetime.fromisoformat(f"{head}.{(frac + '000000')[:6]}+00:00")
    except ValueError:
        return None


def read_series(training_files: Iterable[Path], metric_files: Iterable[Path]) -> Series:
    """Per step: the mean of its calls' avg_loss, and last_lr; per sample: CPU and GPU utilisation."""
    series = Series()
    for path in training_files:
        pending: list[float] = []
        for row in _rows(path):
            if row.get("kind") != "training":
                continue
            metrics = row.get("metrics") or {}
            if row.get("op") == "fwd_bwd" and isinstance(metrics.get("avg_loss"), int | float):
                pending.append(float(metrics["avg_loss"]))
            elif row.get("op") == "step" and isinstance(row.get("step"), int):
                # Whether a step's loss is the sum or mean of its calls depends on the loss scaling;
                # the mean is the one that stays comparable when the call count changes.
                if pending:
                    series.steps.append(row["step"])
                    series.loss.append(sum(pending) / len(pending))
                if isinstance(metrics.get("last_lr"), int | float):
                    series.lr_steps.append(row["step"])
                    series.lr.append(float(metrics["last_lr"]))
                pending = []
    for path in metric_files:
        for row in _rows(path):
            when = _when(row)
            sub = str(row.get("sub_job_id", ""))
            if when is None:
                continue
            kind = row.get("kind", "gpu")
            if kind == "system" and isinstance(row.get("cpu_util_pct"), int | float):
                series.cpu.setdefault(sub, []).append((when, float(row["cpu_util_pct"])))
            elif kind == "gpu" and isinstance(row.get("gpu_util_pct"), int | float):
                label = f"{sub} gpu{row.get('global_gpu_index', '?')}"
                series.gpu.setdefault(label, []).append((when, float(row["gpu_util_pct"])))
    return series


def build_figure(series: Series, title: str) -> Any:
    """The figure: loss and learning rate over steps on top, utilisation over time below."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, (loss_axes, util_axes) = plt.subplots(2, 1, figsize=(10, 8))
    figure.suptitle(title)
    loss_axes.set_xlabel("step")
    loss_axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    loss_axes.set_ylabel("loss (mean avg_loss of the step's calls)")
    if series.steps:
        loss_axes.plot(series.steps, series.loss, marker="o", color="tab:blue", label="loss")
    else:
        loss_axes.text(0.5, 0.5, "no training rows yet", ha="center", transform=loss_axes.transAxes)
    if series.lr:
        lr_axes = loss_axes.twinx()
        lr_axes.set_ylabel("learning rate")
        lr_axes.plot(series.lr_steps, series.lr, color="tab:orange", linestyle="--", label="learning rate")
    util_axes.set_ylabel("utilisation (%)")
    util_axes.set_xlabel("time (UTC)")
    for label, points in sorted(series.cpu.items()):
        util_axes.plot([p[0] for p in points], [p[1] for p in points], label=f"{label} cpu")
    for label, points in sorted(series.gpu.items()):
        util_axes.plot([p[0] for p in points], [p[1] for p in points], label=label)
    if series.cpu or series.gpu:
        util_axes.legend(loc="upper right", fontsize="small")
    else:
        util_axes.text(0.5, 0.5, "no utilisation samples yet", ha="center", transform=util_axes.transAxes)
    # Slant the time labels of the bottom panel only: the figure-wide autofmt_xdate would also hide
    # the top panel's step axis, as if both panels shared one x axis.
    util_axes.tick_params(axis="x", labelrotation=30)
    figure.tight_layout()
    return figure


def draw(series: Series, target: Path, title: str) -> None:
    import matplotlib.pyplot as plt

    figure = build_figure(series, title)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(target, dpi=100)
    finally:
        plt.close(figure)


def plot(
    job_id: Annotated[str, Parameter(help="The job to plot.")],
    /,
    *,
    output_file: Annotated[
        Path | None, Parameter(name="--output", help="PNG file to write (default: ./<JOB_ID>.png).")
    ] = None,
    data_dir: Annotated[
        Path | None,
        Parameter(
            help="Keep the downloaded metrics here (and reuse them next time) instead of a temp folder."
        ),
    ] = None,
) -> None:
    """Plot loss and learning rate per step, and CPU/GPU utilisation over time, as a PNG.

    Prints {"job_id", "output", "steps", "utilisation_samples"}.
    """
    client = context.client()
    target = (output_file or Path(f"{job_id}.png")).expanduser()
    with tempfile.TemporaryDirectory(prefix="ct-plot-") as scratch:
        folder = (data_dir or Path(scratch)).expanduser()
        metrics = client.download_metrics(job_id, folder, resume=True, stale_after_seconds=None)
        training = client.download_training_metrics(job_id, folder, resume=True, stale_after_seconds=None)
        series = read_series(
            [Path(e["saved_path"]) for e in training if e.get("saved_path")],
            [Path(e["saved_path"]) for e in metrics if e.get("saved_path")],
        )
        draw(series, target, f"ct job {job_id}")
    samples = sum(len(p) for p in series.cpu.values()) + sum(len(p) for p in series.gpu.values())
    output.emit(
        {
            "job_id": job_id,
            "output": str(target.resolve()),
            "steps": len(series.steps),
            "utilisation_samples": samples,
        }
    )
