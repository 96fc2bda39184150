"""The Training tab of a job's screen: what its fwd_bwd and step calls returned, over steps.

The rows come from `download_training_metrics` (resuming into the app's private folder, read up
to each manifest's committed length). Three charts over steps sit on top: the loss (the mean of
each step's calls), the learning rate and the gradient norm. Below them a table shows one line
per step, or, after `t`, one line per call. While the tab is on screen the rows are downloaded
again every `REFRESH_S` seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from ct_cli.tui import charts, draw, metrics
from ct_cli.tui.screens.tab import DownloadingTab

if TYPE_CHECKING:
    from ct_cli.tui.screens.views import JobView

REFRESH_S = 15.0
#: Height of each chart in cells (plot rows, then the axis and its labels).
CHART_HEIGHT = 9
#: Charts go side by side from this width on, else one under the other.
SIDE_BY_SIDE_WIDTH = 120
#: The table keeps the newest rows only.
TABLE_ROWS = 2000
STEP_COLUMNS = ("step", "calls", "loss", "grad_norm", "lr", "time")
CALL_COLUMNS = ("time", "op", "step", "call", "loss", "grad_norm", "lr", "metrics", "request_id")
#: (series key, title, log scale)
CHARTS = (
    ("loss", "loss (mean of the step's calls)", False),
    ("lr", "learning rate", False),
    ("grad_norm", "grad-norm", False),
)


class TrainingPane(DownloadingTab, Vertical):
    """Charts and the per-step / per-call table of one training sub-job."""

    DEFAULT_CSS = """
    TrainingPane { height: 1fr; padding: 0 1; }
    TrainingPane > #training-head { height: auto; }
    TrainingPane > #training-charts { height: auto; }
    TrainingPane > #training-table { height: 1fr; }
    """

    def __init__(self, owner: JobView) -> None:
        super().__init__(id="training")
        self.init_tab(owner)
        self.refresh_s = REFRESH_S
        self.data: dict[str, metrics.Training] = {}
        self.per_call = False
        self._table_key: tuple[Any, ...] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="training-head")
        yield Static(id="training-charts")
        yield DataTable(id="training-table", zebra_stripes=True, cursor_type="row")

    # --- loading ------------------------------------------------------------------------------

    def start_download(self) -> None:
        tui = self.owner.tui
        self.run_download(
            "download_training_metrics",
            metrics.download_training,
            "training",
            self.owner.training_source(),
            lambda sub, data: tui.post(self._received, sub, data),
        )

    def _received(self, sub_job_id: str, data: metrics.Training) -> None:
        self.data[sub_job_id] = data
        self.redraw()

    def toggle_calls(self) -> None:
        self.per_call = not self.per_call
        self.redraw()

    # --- what is shown ------------------------------------------------------------------------

    def shown_sub_job(self) -> str | None:
        """The sub-job the tab shows: the log screen's source when it has rows, else the first."""
        preferred = self.owner.training_source()
        if preferred in self.data:
            return preferred
        ordered = [sub for sub, _ in self.owner.sources if sub in self.data]
        return ordered[0] if ordered else next(iter(sorted(self.data)), None)

    def head(self) -> Text:
        sub = self.shown_sub_job()
        text = Text()
        if sub is not None:
            label = dict(self.owner.sources).get(sub) or sub
            data = self.data[sub]
            steps = [s for s in data.steps() if s.done]
            text.append(label, style=draw.TITLE_STYLE)
            text.append(f"  {sub}", style=draw.MUTED_STYLE)
            text.append(f"  ·  {len(steps)} step(s), {len(data.calls)} row(s)")
            if data.ignored:
                text.append(f"  ·  {data.ignored} ignored", style=draw.MUTED_STYLE)
        table = "per call" if self.per_call else "per step"
        text.append(f"  ·  table: {table} (t switches)", style=draw.MUTED_STYLE)
        if self.fetching:
            text.append("  ·  downloading…", style=draw.MUTED_STYLE)
        if self.updated:
            text.append(f"  ·  updated {self.updated}", style=draw.MUTED_STYLE)
        lines = [text]
        if self.error:
            lines.append(draw.plain(self.error, "bold"))
        elif sub is None:
            waiting = self.fetching or self.downloads == 0
            lines.append(
                draw.plain(
                    "downloading training metrics…"
                    if waiting
                    else "No training metrics were saved for this job yet (only training sub-jobs have "
                    "them, and a job can opt out with training_config.save_training_metrics=false).",
                    draw.MUTED_STYLE,
                )
            )
        lines.extend(draw.plain(f"note: {note}", draw.MUTED_STYLE) for note in self.notes)
        return draw.join(lines)

    def chart_lines(self, width: int) -> list[Text]:
        sub = self.shown_sub_job()
        if sub is None:
            return []
        series = self.data[sub].series()
        blocks: list[list[Text]] = []
        side = width >= SIDE_BY_SIDE_WIDTH
        chart_width = (width - 4) // 3 if side else width
        for index, (key, title, log) in enumerate(CHARTS):
            points = series[key]
            heading = Text(title, style=draw.TITLE_STYLE)
            if points:
                heading.append(f"  last {metrics.metric_text(points[-1][1])}", style=draw.MUTED_STYLE)
            block = [heading]
            if points:
                chart = charts.LineChart(chart_width, CHART_HEIGHT, [points], x_label="step", y_log=log)
                style = draw.SERIES_STYLES[index % len(draw.SERIES_STYLES)]
                block.extend(draw.line_chart_text(chart, (style,)))
            else:
                block.append(draw.plain("(no values yet)", draw.MUTED_STYLE))
            blocks.append(block)
        if side:
            return draw.side_by_side(blocks, [chart_width] * len(blocks))
        return [line for block in blocks for line in [*block, Text()]]

    def table_rows(self) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
        """The table's columns and rows, newest first."""
        sub = self.shown_sub_job()
        if sub is None:
            return (CALL_COLUMNS if self.per_call else STEP_COLUMNS), []
        data = self.data[sub]
        text = metrics.metric_text
        if not self.per_call:
            rows: list[tuple[str, ...]] = [
                (
                    str(s.step) if s.done else f"{s.step} (running)",
                    str(s.calls),
                    text(s.loss),
                    text(s.grad_norm),
                    text(s.lr),
                    metrics.clock(s.at),
                )
                for s in data.steps()
            ]
            return STEP_COLUMNS, rows[::-1][:TABLE_ROWS]
        calls: list[tuple[str, ...]] = []
        for c in data.resolved_calls():
            calls.append(
                (
                    metrics.clock(c.at),
                    c.op,
                    str(c.step) if c.step is not None else metrics.MISSING,
                    str(c.call) if c.call is not None else metrics.MISSING,
                    text(metrics.first_metric(c.metrics, metrics.LOSS_KEYS)),
                    text(metrics.first_metric(c.metrics, metrics.GRAD_NORM_KEYS)),
                    text(metrics.first_metric(c.metrics, metrics.LR_KEYS)),
                    str(len(c.metrics)),
                    c.request_id,
                )
            )
        return CALL_COLUMNS, calls[::-1][:TABLE_ROWS]

    def _draw(self) -> None:
        self._draw_pending = False
        if not self.is_mounted:
            return
        width = max(self.content_size.width, 20)
        self.query_one("#training-head", Static).update(self.head())
        self.query_one("#training-charts", Static).update(draw.join(self.chart_lines(width)))
        columns, rows = self.table_rows()
        key = (columns, tuple(rows[:1]), len(rows))
        if key == self._table_key:
            return
        self._table_key = key
        table = self.query_one("#training-table", DataTable)
        table.clear(columns=True)
        table.add_columns(*columns)
        table.add_rows(rows)
