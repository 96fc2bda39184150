"""`plot_run`: one PNG of a run's curves, for `ct runs plot` and for scripts.

The figure stacks, over the optimizer step: train and validation loss (with the best validation
point marked), the learning rate, the epoch, and the per-label validation accuracy when the run
has labels. When the run stopped early, a vertical line marks the step on every panel. The
title names the run and its status.

matplotlib is imported inside `plot_run` and drawn on its file-only Agg canvas (no pyplot, so no
global figure state and no display), which keeps `ct --help` and the SDK free of it. The PNG is
written through `ct_core.fs.atomic_write`: a reader sees the old file or the whole new one.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ct_core.errors import ValidationError
from ct_core.fs import atomic_write

#: The series drawn on the loss panel, with their legend labels and colours.
LOSS_SERIES = (("train_loss", "train loss", "tab:blue"), ("val_loss", "validation loss", "tab:orange"))
#: The prefix of the per-label validation accuracy series (`val_accuracy/<label field>`).
ACCURACY_PREFIX = "val_accuracy/"
#: Size of the picture in inches and its resolution; 10 x 9.6 at 100 dpi is 1000 x 960 pixels.
FIGURE_WIDTH, PANEL_HEIGHT, DPI = 10.0, 2.4, 100


def _points(series: Mapping[str, Any], name: str) -> tuple[list[float], list[float]]:
    """Steps and values of one series; points that are not `[step, number]` are left out."""
    steps: list[float] = []
    values: list[float] = []
    for point in series.get(name) or ():
        if not isinstance(point, Sequence) or isinstance(point, str) or len(point) != 2:
            continue
        step, value = point
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (step, value))
        if numbers and math.isfinite(step) and math.isfinite(value):
            steps.append(float(step))
            values.append(float(value))
    return steps, values


def _title(run: Mapping[str, Any]) -> str:
    parts = [f"run {run.get('run_id') or '?'}", str(run.get("status") or "unknown status")]
    if run.get("model_config_tier"):
        parts.append(f"tier {run['model_config_tier']}")
    step, total = run.get("step"), run.get("total_steps")
    if isinstance(step, int) and isinstance(total, int):
        parts.append(f"step {step} of {total}")
    return " | ".join(parts)


def _early_stop(run: Mapping[str, Any]) -> tuple[float, str] | None:
    stop = run.get("early_stop")
    if not isinstance(stop, Mapping):
        return None
    step = stop.get("step")
    if not isinstance(step, int | float) or isinstance(step, bool):
        return None
    reason = stop.get("reason")
    label = f"early stop at step {step:g}" + (f" ({reason})" if reason else "")
    return float(step), label


def check_output(output: str | Path) -> Path:
    """The output path, refused unless it names a .png file."""
    target = Path(output).expanduser()
    if target.suffix.lower() != ".png":
        raise ValidationError(f"the plot is a PNG image: {target} must end in .png")
    if target.is_dir():
        raise ValidationError(f"{target} is a folder; name the .png file to write")
    return target


def plot_run(metrics: Mapping[str, Any], run: Mapping[str, Any], output: str | Path) -> Path:
    """Draw the run's loss, learning rate and epoch curves into the PNG file `output`; return it.

    `metrics` is a getRunMetrics answer (`{"series": {name: [[step, value], ...]}}`), all of it,
    and `run` the getRun answer (for the title, the best step and the early stop).
    """
    target = check_output(output)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    given = metrics.get("series")
    series: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    accuracy = sorted(name for name in series if str(name).startswith(ACCURACY_PREFIX))
    panels = 4 if accuracy else 3
    figure = Figure(figsize=(FIGURE_WIDTH, PANEL_HEIGHT * panels), dpi=DPI)
    FigureCanvasAgg(figure)
    axes = figure.subplots(panels, 1, sharex=True)
    loss_axes, lr_axes, epoch_axes = axes[0], axes[1], axes[2]
    figure.suptitle(_title(run))

    drawn = False
    for name, label, colour in LOSS_SERIES:
        steps, values = _points(series, name)
        if steps:
            style = {"marker": "o", "markersize": 3} if name == "val_loss" else {}
            loss_axes.plot(steps, values, label=label, color=colour, **style)
            drawn = True
    best_step, best_loss = run.get("best_step"), run.get("best_val_loss")
    if isinstance(best_step, int | float) and isinstance(best_loss, int | float):
        loss_axes.plot([best_step], [best_loss], marker="*", markersize=12, color="tab:red", linestyle="")
        loss_axes.annotate(
            f"best {best_loss:.4g}", (best_step, best_loss), textcoords="offset points", xytext=(6, 6)
        )
    loss_axes.set_ylabel("loss")
    if drawn:
        loss_axes.legend(loc="upper right", fontsize="small")

    for panel, name, label, colour in (
        (lr_axes, "lr", "learning rate", "tab:green"),
        (epoch_axes, "epoch", "epoch", "tab:purple"),
    ):
        steps, values = _points(series, name)
        if steps:
            panel.plot(steps, values, color=colour)
        panel.set_ylabel(label)
    if accuracy:
        accuracy_axes = axes[3]
        for name in accuracy:
            steps, values = _points(series, name)
            if steps:
                accuracy_axes.plot(
                    steps, values, marker="o", markersize=3, label=name.removeprefix(ACCURACY_PREFIX)
                )
        accuracy_axes.set_ylabel("validation accuracy")
        accuracy_axes.legend(loc="lower right", fontsize="small")

    if not any(_points(series, name)[0] for name in series):
        loss_axes.text(0.5, 0.5, "no metrics yet", ha="center", va="center", transform=loss_axes.transAxes)
    stop = _early_stop(run)
    if stop is not None:
        step, label = stop
        for index, panel in enumerate(axes):
            panel.axvline(
                step, color="tab:red", linestyle="--", linewidth=1, label=label if index == 0 else None
            )
        loss_axes.legend(loc="upper right", fontsize="small")
    axes[-1].set_xlabel("step")
    figure.tight_layout()

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, buffer.getvalue())
    return target
