"""The runs screen: training runs of the runs service, with their metrics and structured logs.

The list on the left holds the schema's runs, newest first (`client.runs.list`). The panel on
the right shows the highlighted run: its facts (status, progress, best checkpoint, early stop),
the training and validation loss over steps as one chart, and its structured log entries.
Where the runs service says more, the facts say it too: the registered model (its status, chat
template and the checkpoint it came from), the format of the dataset's rows, and what a failed or
cancelled run can still do (resume, or register its best checkpoint). Metrics and logs are read
incrementally (`after_step`, `after`), so a poll only carries what is new; the selected run is
polled every `DETAIL_S` seconds while it is queued or running and the screen is on top.
Read-only: nothing here starts or cancels a run.

When this ct has no runs SDK, or the service answers that it has no runs routes, the screen says
`runs service not available` with the reason instead of failing.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Log, OptionList, Static
from textual.widgets.option_list import Option

from ct_cli.tui import charts, draw, records
from ct_cli.tui.screens.listing import ListingScreen

LIST_S = 10.0
DETAIL_S = 5.0
ROW_PREFIX = "run:"
CHART_HEIGHT = 10
#: (series name, label) drawn on the loss chart, in this order and colour.
LOSS_SERIES = (("train_loss", "train_loss"), ("val_loss", "val_loss"))
LOG_LINES = 5000
#: Pages of metrics, and of log entries, read per poll at most.
MAX_PAGES = 50
UNAVAILABLE = "runs service not available"


def runs_api(client: Any) -> tuple[Any, str | None]:
    """The client's runs methods, or None and why the runs service cannot be used."""
    try:
        api = client.runs
    except AttributeError:
        return None, f"{UNAVAILABLE}: this ct has no runs SDK (client.runs)"
    except ImportError as exc:
        return None, f"{UNAVAILABLE}: {exc}"
    return api, None


def unavailable_reason(exc: BaseException) -> str | None:
    """The 'not available' wording for a failure that means the service has no runs routes."""
    status = getattr(exc, "status_code", None)
    if status in (404, 405):
        return f"{UNAVAILABLE}: the service has no runs routes ({status})"
    return None


def _optional(read: Any, *args: Any) -> Any:
    """What `read(*args)` answers, or None when this client or service cannot say (an older SDK
    without the method, a route the service lacks, a record it no longer has)."""
    try:
        return read(*args)
    except Exception:
        return None


def read_state(client: Any, api: Any, run: Any) -> dict[str, Any]:
    """The state around a run that the run record does not hold: `model` (the registered model it
    names) and `format` (of its dataset's rows); each None when it cannot be read."""
    if not isinstance(run, dict):
        return {"model": None, "format": None}
    model_id = run.get("model_id")
    model = _optional(getattr(api, "get_model", None), model_id) if model_id else None
    dataset_id = run.get("dataset_id")
    datasets = _optional(getattr, client, "datasets")
    dataset = _optional(getattr(datasets, "get", None), dataset_id) if dataset_id else None
    found = dataset.get("format") if isinstance(dataset, dict) else None
    return {"model": model if isinstance(model, dict) else None, "format": found}


def state_lines(run: dict[str, Any], state: dict[str, Any]) -> list[str]:
    """The facts of the run's state beyond its progress: format, registered model, what it can do."""
    lines: list[str] = []
    run_id, status = run.get("run_id"), str(run.get("status") or "")
    if state.get("format"):
        lines.append(f"data format: {state['format']}")
    if run.get("model") and run.get("model") != run.get("model_name"):
        lines.append(f"continues from: {run.get('model')}")
    model = state.get("model")
    if isinstance(model, dict):
        template = model.get("chat_template") if isinstance(model.get("chat_template"), dict) else None
        said = f"template {template.get('name')}" if template else "no chat template (plain text)"
        lines.append(
            f"model {model.get('model_id')}  ·  {model.get('status')}  ·  {said}  ·  from checkpoint "
            f"{model.get('source_checkpoint_id') or model.get('checkpoint_id')} (step {model.get('step')}) "
            f"of the {model.get('run_status') or 'succeeded'} run"
        )
    checkpoints = [c for c in run.get("checkpoints") or [] if isinstance(c, dict)]
    if status in ("failed", "cancelled") and not run.get("model_id"):
        if checkpoints:
            lines.append(
                f"resumable: ct runs resume {run_id} (last checkpoint at step {checkpoints[-1].get('step')})"
            )
        if status == "cancelled" and run.get("best_checkpoint_id"):
            lines.append(
                f"registrable: ct runs register {run_id} (best checkpoint {run.get('best_checkpoint_id')})"
            )
    return lines


def _read_new(api: Any, run_id: str, after_step: int, after: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every metrics point after `after_step` and every log entry after `after`, page by page (a
    page that brings nothing new, or more than `MAX_PAGES` pages, ends the reading)."""
    merged: dict[str, list[tuple[float, float]]] = {}
    cursor = after_step
    for _ in range(MAX_PAGES):
        page = api.metrics(run_id, after_step=cursor)
        page = page if isinstance(page, dict) else {}
        merged = records.merge_series(merged, page)
        new_cursor = page.get("cursor")
        if not isinstance(new_cursor, int) or new_cursor <= cursor:
            break
        cursor = new_cursor
    entries: list[Any] = []
    seq = after
    for _ in range(MAX_PAGES):
        page = api.logs(run_id, structured=True, after=seq)
        page = page if isinstance(page, dict) else {"logs": page}
        entries.extend(page.get("logs") or [])
        new_seq = page.get("cursor")
        if not isinstance(new_seq, int) or new_seq <= seq:
            break
        seq = new_seq
    series = {"series": {name: [list(point) for point in points] for name, points in merged.items()}}
    return {**series, "cursor": cursor}, {"logs": entries, "cursor": seq}


class RunsScreen(ListingScreen):
    """Runs: `status │ run_id │ tier │ step │ best val_loss`, and the highlighted run's details."""

    TITLE = "Runs"
    DEFAULT_CSS = """
    RunsScreen #runs { width: 80; height: 1fr; border-right: solid $panel; }
    RunsScreen #run-detail { height: 1fr; padding: 0 1; }
    RunsScreen #run-facts { height: auto; }
    RunsScreen #run-chart { height: auto; }
    RunsScreen #run-logs { height: 1fr; }
    """
    refresh_s = LIST_S
    keys_hint = "↑/↓ select · r refresh · b back"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.selected: str | None = None
        self.run: dict[str, Any] | None = None
        self.series: dict[str, list[tuple[float, float]]] = {}
        self.metrics_cursor = -1
        self.logs: list[str] = []
        self.logs_cursor = 0
        self.detail_error: str | None = None
        self.state: dict[str, Any] = {}
        self._detail_busy = False
        self._draw_pending = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield OptionList(id="runs")
            with Vertical(id="run-detail"):
                yield Static(id="run-facts")
                yield Static(id="run-chart")
                yield Log(id="run-logs", max_lines=LOG_LINES, highlight=False)
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(DETAIL_S, self._tick_detail)
        self.start_refreshing()

    # --- the list ------------------------------------------------------------------------------

    def read(self) -> tuple[list[dict[str, Any]] | None, str | None]:
        api, why = runs_api(self.client)
        if api is None:
            return None, why
        try:
            answer = api.list()
        except Exception as exc:
            return None, unavailable_reason(exc) or f"runs.list failed: {type(exc).__name__}: {exc}"
        return records.runs_of(answer), None

    def _render_rows(self) -> None:
        rows = self.query_one("#runs", OptionList)
        keep = self.highlighted_run_id()
        rows.clear_options()
        if self.error is not None:
            style = "dim" if self.error.startswith(UNAVAILABLE) else "bold"
            rows.add_option(
                Option(
                    Text(f"[error] {self.error}" if style == "bold" else self.error, style=style),
                    disabled=True,
                )
            )
            return
        if not self.records:
            rows.add_option(Option(Text("(no runs)", style="dim"), disabled=True))
            return
        for run in self.records:
            status, rest = records.run_row(run)
            prompt = Text.assemble((status, records.run_status_style(run.get("status"))), rest)
            rows.add_option(Option(prompt, id=ROW_PREFIX + str(run.get("run_id"))))
        ids = [str(run.get("run_id")) for run in self.records]
        rows.highlighted = ids.index(keep) if keep in ids else 0
        self._select(ids[rows.highlighted or 0])

    def row_texts(self) -> list[str]:
        rows = self.query_one("#runs", OptionList)
        return [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count)]

    def highlighted_run_id(self) -> str | None:
        option = self.query_one("#runs", OptionList).highlighted_option
        if option is None or not option.id or not option.id.startswith(ROW_PREFIX):
            return None
        return option.id.removeprefix(ROW_PREFIX)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        option_id = event.option.id or ""
        if option_id.startswith(ROW_PREFIX):
            self._select(option_id.removeprefix(ROW_PREFIX))

    # --- the selected run ---------------------------------------------------------------------

    def _select(self, run_id: str) -> None:
        if run_id == self.selected:
            return
        self.selected = run_id
        self.run = next((r for r in self.records if str(r.get("run_id")) == run_id), None)
        self.series = {}
        self.metrics_cursor = -1
        self.logs = []
        self.logs_cursor = 0
        self.detail_error = None
        self.state = {}
        self.query_one("#run-logs", Log).clear()
        self.redraw()
        self._load_detail(run_id, -1, 0)

    def _tick_detail(self) -> None:
        if self.app.screen is not self or self.selected is None or self._detail_busy:
            return
        status = str((self.run or {}).get("status") or "").lower()
        if status in records.ACTIVE_RUN_STATUSES:
            self._load_detail(self.selected, self.metrics_cursor, self.logs_cursor)

    @work(thread=True, exclusive=True, group="run-detail")
    def _load_detail(self, run_id: str, after_step: int, after: int) -> None:
        api, _ = runs_api(self.client)
        if api is None:
            return
        self.post(self._busy, True)
        try:
            run = api.get(run_id)
            series, logs = _read_new(api, run_id, after_step, after)
            state = read_state(self.client, api, run)
        except Exception as exc:
            self.post(self._detail_failed, run_id, f"{type(exc).__name__}: {exc}")
            return
        finally:
            self.post(self._busy, False)
        self.post(self._detail_loaded, run_id, run, series, logs, state)

    def _busy(self, busy: bool) -> None:
        self._detail_busy = busy

    def _detail_failed(self, run_id: str, error: str) -> None:
        if run_id == self.selected:
            self.detail_error = f"[error] reading run {run_id} failed: {error}"
            self.redraw()

    def _detail_loaded(self, run_id: str, run: Any, series: Any, logs: Any, state: Any = None) -> None:
        if run_id != self.selected:
            return
        self.detail_error = None
        if isinstance(run, dict):
            self.run = run
        if isinstance(state, dict):
            self.state = state
        self.series = records.merge_series(self.series, series if isinstance(series, dict) else {})
        if isinstance(series, dict) and isinstance(series.get("cursor"), int):
            self.metrics_cursor = series["cursor"]
        entries = logs.get("logs") if isinstance(logs, dict) else logs
        lines = [records.log_line(entry) for entry in entries or [] if isinstance(entry, dict)]
        if isinstance(logs, dict) and isinstance(logs.get("cursor"), int):
            self.logs_cursor = logs["cursor"]
        if lines:
            self.logs.extend(lines)
            self.query_one("#run-logs", Log).write_lines(lines)
        self.redraw()

    # --- drawing ------------------------------------------------------------------------------

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Draw the detail again once the layout is settled (the chart needs the final width)."""
        if self.is_mounted and not self._draw_pending:
            self._draw_pending = True
            self.call_after_refresh(self._draw)

    def _draw(self) -> None:
        self._draw_pending = False
        if not self.is_mounted:
            return
        facts = self.query_one("#run-facts", Static)
        chart = self.query_one("#run-chart", Static)
        lines: list[Text] = []
        if self.run is not None:
            known = [*records.run_facts(self.run), *state_lines(self.run, self.state)]
            lines = [draw.plain(line) for line in known]
        if self.detail_error:
            lines.append(draw.plain(self.detail_error, "bold"))
        facts.update(draw.join(lines))
        width = max(self.query_one("#run-detail").scrollable_content_region.width, 20)
        chart.update(draw.join(self.chart_lines(width)))

    def chart_lines(self, width: int) -> list[Text]:
        if self.run is None:
            return []
        present = [(name, label) for name, label in LOSS_SERIES if self.series.get(name)]
        legend = Text("loss over steps  ", style=draw.TITLE_STYLE)
        if not present:
            return [legend, draw.plain("(no metrics yet)", draw.MUTED_STYLE), Text()]
        for index, (name, label) in enumerate(LOSS_SERIES):
            if self.series.get(name):
                legend.append(f"── {label} ", style=draw.SERIES_STYLES[index])
                legend.append(f"(last {records._number(self.series[name][-1][1])})  ", style=draw.MUTED_STYLE)
        data = [self.series.get(name, []) for name, _ in LOSS_SERIES]
        plotted = charts.LineChart(width, CHART_HEIGHT, data, x_label="step")
        return [legend, *draw.line_chart_text(plotted), Text()]

    def log_text(self) -> list[str]:
        return list(self.logs)
