"""The Resources tab of a job's screen: GPU and host utilisation over a chosen window.

The rows come from `download_metrics` (resuming into the app's private folder), read only up to
what each file's manifest says is committed. The first download hands over the selected
sub-job's newest ten minutes through the preview, so the tab draws them before the rest of the
history arrives. Views (`5m`, `15m`, `1h`, `6h`, `all`) switch with `v` / `V` without asking the
service again. While the tab is on screen the rows are downloaded again every `REFRESH_S` s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ct_cli.tui import charts, draw, metrics
from ct_cli.tui.screens.tab import DownloadingTab

if TYPE_CHECKING:
    from ct_cli.tui.screens.views import JobView

#: Seconds between downloads while the tab is shown (metrics chunks arrive about once a minute).
REFRESH_S = 30.0
#: Rows of bars of the utilisation charts.
GPU_CHART_ROWS = 6
CPU_CHART_ROWS = 4
#: Buckets of each GPU's one-line chart.
SPARK_BUCKETS = 30
GPU_STYLE = "green"
CPU_STYLE = "cyan"


class ResourcesPane(DownloadingTab, VerticalScroll):
    """GPU and system rows per sub-job: charts, per-GPU and per-worker lines, the view keys."""

    DEFAULT_CSS = """
    ResourcesPane { height: 1fr; padding: 0 1; }
    ResourcesPane > #resources-body { width: 100%; height: auto; }
    """

    def __init__(self, owner: JobView) -> None:
        super().__init__(id="resources")
        self.init_tab(owner)
        self.refresh_s = REFRESH_S
        self.view = metrics.DEFAULT_VIEW
        self.data: dict[str, metrics.Resources] = {}
        #: False while a sub-job's rows are only the preview's.
        self.complete: dict[str, bool] = {}
        #: (sub_job_id, "preview" | "full", seconds the rows span) in the order they arrived.
        self.arrivals: list[tuple[str, str, float]] = []

    def compose(self) -> ComposeResult:
        yield Static(id="resources-body")

    # --- loading ------------------------------------------------------------------------------

    def start_download(self) -> None:
        tui = self.owner.tui
        self.run_download(
            "download_metrics",
            metrics.download_resources,
            "resources",
            self.owner.first_source(),
            lambda sub, data, complete: tui.post(self._received, sub, data, complete),
        )

    def _received(self, sub_job_id: str, data: metrics.Resources, complete: bool) -> None:
        if not complete and self.complete.get(sub_job_id):
            return  # a preview never replaces a full history
        self.data[sub_job_id] = data
        self.complete[sub_job_id] = complete
        span = (data.newest or 0.0) - (data.oldest or 0.0)
        self.arrivals.append((sub_job_id, "full" if complete else "preview", span))
        self.redraw()

    def cycle_view(self, step: int) -> None:
        self.view = metrics.next_view(self.view, step)
        self.redraw()

    # --- drawing ------------------------------------------------------------------------------

    def _draw(self) -> None:
        self._draw_pending = False
        if not self.is_mounted:
            return
        width = max(self.scrollable_content_region.width, 20)
        self.query_one("#resources-body", Static).update(draw.join(self.lines(width)))

    def header(self) -> Text:
        text = Text("view ", style=draw.MUTED_STYLE)
        for name, _ in metrics.VIEWS:
            text.append(f" {name} ", style="reverse bold" if name == self.view else "")
        text.append("   v/V change view", style=draw.MUTED_STYLE)
        state = []
        if self.fetching:
            state.append("downloading…")
        if any(not done for done in self.complete.values()):
            state.append("newest minutes first; the rest of the history is on its way")
        if self.updated:
            state.append(f"updated {self.updated}")
        if state:
            text.append("  ·  " + "  ·  ".join(state), style=draw.MUTED_STYLE)
        return text

    def lines(self, width: int) -> list[Text]:
        """What the tab shows at `width` columns."""
        lines = [self.header(), Text()]
        if self.error:
            lines.append(draw.plain(self.error, "bold"))
        ordered = [sub for sub, _ in self.owner.sources if sub in self.data]
        ordered += sorted(sub for sub in self.data if sub not in ordered)
        if not ordered and not self.error:
            waiting = self.fetching or self.downloads == 0
            lines.append(
                draw.plain(
                    "downloading GPU and system metrics…"
                    if waiting
                    else "No GPU or system metrics were saved for this job yet.",
                    draw.MUTED_STYLE,
                )
            )
        for sub in ordered:
            lines.extend(self.sub_job_lines(sub, self.data[sub], width))
        for note in self.notes:
            lines.append(draw.plain(f"note: {note}", draw.MUTED_STYLE))
        return lines

    def sub_job_lines(self, sub_job_id: str, data: metrics.Resources, width: int) -> list[Text]:
        label = dict(self.owner.sources).get(sub_job_id) or sub_job_id
        title = Text(label, style=draw.TITLE_STYLE)
        title.append(f"  {sub_job_id}", style=draw.MUTED_STYLE)
        if not self.complete.get(sub_job_id, True):
            title.append("  (preview: newest minutes)", style="italic")
        lines = [title]
        span = metrics.window(data, self.view)
        count = max(min(width - charts.AXIS_WIDTH - 1, metrics.MAX_BUCKETS), 1)
        if data.gpus and span:
            lines.append(draw.plain(f"GPU utilisation, {len(data.gpus)} GPU(s) together", draw.MUTED_STYLE))
            values = metrics.buckets(metrics.all_gpu_samples(data), *span, count)
            chart = charts.block_chart(values, height=GPU_CHART_ROWS, start_s=span[0], end_s=span[1])
            lines.extend(draw.block_chart_text(chart, GPU_CHART_ROWS, GPU_STYLE))
            for gpu_line in metrics.gpu_lines(data, self.view):
                spark = charts.sparkline(
                    metrics.buckets(data.gpus[gpu_line.index].util, *span, SPARK_BUCKETS)
                )
                text = draw.plain(spark, GPU_STYLE)
                text.append("  " + gpu_line.text())
                lines.append(text)
        if data.workers and span:
            lines.append(draw.plain("host CPU utilisation", draw.MUTED_STYLE))
            values = metrics.buckets(metrics.all_cpu_samples(data), *span, count)
            chart = charts.block_chart(values, height=CPU_CHART_ROWS, start_s=span[0], end_s=span[1])
            lines.extend(draw.block_chart_text(chart, CPU_CHART_ROWS, CPU_STYLE))
            lines.extend(draw.plain(line) for line in metrics.system_lines(data, self.view))
        if not data.gpus and not data.workers:
            lines.append(draw.plain("(no GPU or system samples yet)", draw.MUTED_STYLE))
        if data.ignored:
            lines.append(
                draw.plain(
                    f"{data.ignored} row(s) ignored: not valid, or of another version", draw.MUTED_STYLE
                )
            )
        lines.append(Text())
        return lines
