"""The model deployments screen: every deployment of the schema, its status, reason and base URL.

Read-only, like the rest of `ct tui`: it lists (`client.list_model_deployments`, from the
ct-model-deployment plugin) and never creates or drops one. The list refreshes every
`REFRESH_S` seconds while the screen is on top; the panel under it shows the highlighted
deployment's details. Keys: `r` refresh, `b` / `Esc` back to the picker, `q` quit.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Footer, Header, Static

from ct_cli.tui import draw, records
from ct_cli.tui.screens.listing import ListingScreen

REFRESH_S = 20.0


class DeploymentsScreen(ListingScreen):
    """Model deployments: `deployment │ status │ reason │ model │ gpus │ created │ base_url`."""

    TITLE = "Model deployments"
    DEFAULT_CSS = """
    DeploymentsScreen #deployments { height: 1fr; }
    DeploymentsScreen #deployment-note { height: auto; padding: 0 1; }
    DeploymentsScreen #deployment-detail { height: auto; padding: 0 1; border-top: solid $panel; }
    """
    refresh_s = REFRESH_S
    keys_hint = "r refresh · b back"

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="deployment-note")
        yield DataTable(id="deployments", cursor_type="row", zebra_stripes=True)
        yield Static(id="deployment-detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#deployments", DataTable)
        table.add_columns(*records.DEPLOYMENT_COLUMNS)
        self.start_refreshing()

    def read(self) -> tuple[list[dict[str, Any]] | None, str | None]:
        try:
            found = self.client.list_model_deployments()
        except ImportError as exc:
            return None, f"model deployments are not available: {exc}"
        except Exception as exc:  # shown as one line; the screen stays usable
            return None, f"list_model_deployments failed: {type(exc).__name__}: {exc}"
        return list(found or []), None

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
