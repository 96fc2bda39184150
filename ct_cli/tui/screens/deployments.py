"""The model deployments screen: every deployment of the schema, its status, reason and base URL.

Read-only, like the rest of `ct tui`: it lists (`client.list_model_deployments`, from the
ct-model-deployment plugin) and never creates or drops one. The list refreshes every
`REFRESH_S` seconds while the screen is on top; the panel under it shows the highlighted
deployment's details. Keys: `r` refresh, `b` / `Esc` back to the picker, `q` quit.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from ct_cli.tui import draw, records
from ct_cli.tui import format as fmt

REFRESH_S = 20.0


class DeploymentsScreen(Screen[None]):
    """Model deployments: `deployment │ status │ reason │ model │ gpus │ created │ base_url`."""

    TITLE = "Model deployments"
    DEFAULT_CSS = """
    DeploymentsScreen #deployments { height: 1fr; }
    DeploymentsScreen #deployment-note { height: auto; padding: 0 1; }
    DeploymentsScreen #deployment-detail { height: auto; padding: 0 1; border-top: solid $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b", "back", "Back"),
        Binding("escape", "back", "Back", show=False),
        Binding("r", "refresh", "Refresh"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client
        self.records: list[dict[str, Any]] = []
        self.error: str | None = None
        self.loaded = False
        self.refreshing = False
        self.last_refreshed: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="deployment-note")
        yield DataTable(id="deployments", cursor_type="row", zebra_stripes=True)
        yield Static(id="deployment-detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#deployments", DataTable)
        table.add_columns(*records.DEPLOYMENT_COLUMNS)
        self.set_interval(REFRESH_S, self._tick)
        self.action_refresh()

    def _tick(self) -> None:
        if self.app.screen is self and not self.refreshing:
            self.action_refresh()

    def _update_subtitle(self) -> None:
        state = "refreshing…" if self.refreshing else f"last refreshed {self.last_refreshed or '—'}"
        self.sub_title = f"read-only (r refresh · b back){fmt.SEPARATOR}{state}"

    def action_refresh(self) -> None:
        self.refreshing = True
        self._update_subtitle()
        self._fetch()

    @work(thread=True, exclusive=True, group="deployments")
    def _fetch(self) -> None:
        post = self.app.post  # type: ignore[attr-defined]
        try:
            found = self.client.list_model_deployments()
        except ImportError as exc:
            post(self._show, None, f"model deployments are not available: {exc}")
            return
        except Exception as exc:  # shown as one line; the screen stays usable
            post(self._show, None, f"list_model_deployments failed: {type(exc).__name__}: {exc}")
            return
        post(self._show, list(found or []), None)

    def _show(self, found: list[dict[str, Any]] | None, error: str | None) -> None:
        self.refreshing = False
        self.loaded = True
        self.error = error
        if found is not None:
            # Newest first, like the job picker.
            self.records = sorted(found, key=lambda r: str(r.get("created_at") or ""), reverse=True)
            self.last_refreshed = time.strftime("%H:%M:%S")
        self._update_subtitle()
        self._render_rows()

    def _render_rows(self) -> None:
        table = self.query_one("#deployments", DataTable)
        note = self.query_one("#deployment-note", Static)
        keep = self.highlighted_deployment()
        table.clear()
        if self.error is not None:
            note.update(Text(f"[error] {self.error}", style="bold"))
            self._show_detail()
            return
        if not self.records:
            note.update(Text("(no model deployments)", style="dim"))
            self._show_detail()
            return
        note.update("")
        for record in self.records:
            row = records.deployment_row(record)
            status = Text(row[1], style="green" if row[1] == "READY" else "")
            table.add_row(row[0], status, *row[2:], key=row[0])
        ids = [str(r.get("deployment")) for r in self.records]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
        self._show_detail()

    def highlighted_deployment(self) -> str | None:
        table = self.query_one("#deployments", DataTable)
        if not table.row_count:
            return None
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        except Exception:
            return None
        return str(key.value) if key is not None and key.value is not None else None

    def rows(self) -> list[tuple[str, ...]]:
        """The table's rows as text (what the screen shows)."""
        table = self.query_one("#deployments", DataTable)
        return [tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#deployment-detail", Static)
        wanted = self.highlighted_deployment()
        record = next((r for r in self.records if str(r.get("deployment")) == wanted), None)
        if record is None or self.error is not None:
            detail.update("")
            return
        detail.update(draw.join([draw.plain(line) for line in records.deployment_details(record)]))

    def action_back(self) -> None:
        if self.app.screen is self and len(self.app.screen_stack) > 1:
            self.app.pop_screen()
