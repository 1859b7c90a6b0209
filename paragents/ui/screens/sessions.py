"""The /sessions screen: every persisted session of the project; Enter reopens the selected one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from paragents.models import SessionState, Usage
from paragents.store.records.sessions import SessionRecord
from paragents.ui.core.text import clean

if TYPE_CHECKING:
    from paragents.store.records.sessions import SessionRecord


class SessionsScreen(ModalScreen[str | None]):
    """Lists ``records`` (store ``SessionRecord``s); dismisses with the chosen session id or None."""

    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    SessionsScreen > Vertical { width: 90%; height: 85%; border: thick $accent; background: $surface; }
    SessionsScreen .title { height: auto; padding: 0 1; text-style: bold; }
    SessionsScreen DataTable { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("enter", "open", "Reopen", show=True),
    ]

    def __init__(self, records: Sequence[SessionRecord], open_ids: set[str]) -> None:
        super().__init__()
        self.records = list(records)
        self.open_ids = open_ids

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Sessions of this project (Enter reopens, Esc closes)", classes="title")
            yield DataTable(zebra_stripes=True, cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("name", "model", "mode", "state", "tokens", "workdir", "open")
        for rec in self.records:
            table.add_row(
                Text(clean(rec.name)),
                Text(clean(rec.model)),
                Text(clean(str(rec.mode))),
                Text(clean(str(rec.state.value))),
                str(rec.usage.total_tokens),
                Text(clean(str(rec.workdir))),
                "yes" if rec.id in self.open_ids else "",
                key=rec.id,
            )
        if not self.records:
            table.add_row("(no sessions yet)", "", "", "", "", "", "")
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value and self.records:
            self.dismiss(event.row_key.value)

    def action_open(self) -> None:
        """Reopen the highlighted session."""
        table = self.query_one(DataTable)
        if self.records and 0 <= table.cursor_row < len(self.records):
            self.dismiss(self.records[table.cursor_row].id)

    def action_close(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


class Demo(App[None]):
    """The /sessions list: three stored sessions, the first one open."""

    def on_mount(self) -> None:
        from pathlib import Path

        where = Path("/work/project")
        records = [
            SessionRecord(
                *(f"id{i}", f"s{i}", where, where, "qwen2.5-coder", "default", SessionState.IDLE, i == 0, i),
                *(f"c{i}", None, 0.0, 0.0, Usage(0, 0, 100 * i), 0, ()),
            )
            for i in range(3)
        ]
        self.push_screen(SessionsScreen(records, {"id0"}), lambda sid: self.notify(f"reopen {sid}"))


if __name__ == "__main__":
    Demo().run()
