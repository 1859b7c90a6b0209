"""Read-only modal screens: /help (commands and keys), /show-config (effective config with sources)
and /permissions (effective rules, when the runtime's policy exposes ``rules_table()``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from paragents.ui.commands import help_rows
from paragents.ui.text import clean

KEY_ROWS: tuple[tuple[str, str], ...] = (
    ("ctrl+n", "New session"),
    ("ctrl+w", "Close the focused session"),
    ("alt+right / f6", "Focus the next session"),
    ("alt+left / shift+f6", "Focus the previous session"),
    ("pageup / pagedown", "Scroll the focused session's transcript"),
    ("end", "Back to the bottom of the transcript, following new output (when scrolled up)"),
    ("alt+1 … alt+9", "Focus session by number (tmux/xterm's ESC + digit works too)"),
    ("alt+z", "Zoom: show the focused session alone; alt+z again shows them all"),
    ("escape", "Cancel the focused session's running turn"),
    ("shift+tab", "Cycle the focused session's permission mode (default → acceptEdits → plan)"),
    ("ctrl+p", "Command palette (every slash command is there)"),
    ("ctrl+q", "Quit (open sessions come back next time)"),
    ("f2", "Inbox: every pending approval and conflict, oldest first"),
    ("f3", "Overview: one row per session, like top"),
    ("enter", "Send the prompt (queued when the session is busy)"),
    ("ctrl+j / shift+enter / \\ enter", "New line in the prompt (shift+enter where the terminal reports it)"),
    ("up / down", "On the prompt's first / last line: the session's earlier prompts"),
    ("ctrl+z / ctrl+y", "Undo / redo in the prompt (a paste is one step; also ctrl+shift+z)"),
    ("→ / end / tab", "Accept the suggested slash command"),
    ("ctrl+g", "Go to the focused session's approval/conflict bar (again: next bar, then the prompt)"),
    ("y s a n d", "Approval bar, after ctrl+g or a click: allow once / session / always…, deny, note…"),
    ("w r s e", "Conflict bar, after ctrl+g or a click: wait / run anyway / skip / re-read first"),
    ("ctrl+q", "Quit"),
)
"""Key bindings shown by /help (kept in sync with ParagentsApp.BINDINGS)."""


class TableScreen(ModalScreen[None]):
    """A modal with a title and a table of text rows; Esc or q closes it."""

    DEFAULT_CSS = """
    TableScreen { align: center middle; }
    TableScreen > Vertical { width: 90%; height: 85%; border: thick $accent; background: $surface; }
    TableScreen .title { height: auto; padding: 0 1; text-style: bold; }
    TableScreen .note { height: auto; padding: 0 1; color: $text-muted; }
    TableScreen DataTable { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "Close")]

    def __init__(
        self,
        title: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[str]],
        *,
        note: str = "",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.columns = list(columns)
        self.rows = [list(r) for r in rows]
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, classes="title", markup=False)
            if self.note:
                yield Static(self.note, classes="note", markup=False)
            yield DataTable(zebra_stripes=True, cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*self.columns)
        for row in self.rows:
            table.add_row(*(Text(clean(str(cell))) for cell in row))
        table.focus()

    async def action_dismiss(self, result: None = None) -> None:
        """Close the screen."""
        self.dismiss(None)


def help_screen() -> TableScreen:
    """Return the /help screen: every slash command, then every key."""
    rows = [*help_rows(), ("", ""), *KEY_ROWS]
    return TableScreen("Help: commands and keys", ("command / key", "what it does"), rows)


def config_screen(rows: Sequence[tuple[str, str, str]]) -> TableScreen:
    """Return the /show-config screen for ``Runtime.config_rows()`` rows (values already redacted)."""
    return TableScreen(
        "Effective configuration", ("field", "value", "source"), rows, note="Secrets are redacted."
    )


def permissions_screen(policy: object) -> TableScreen:
    """Return the /permissions screen from ``policy.rules_table()`` (rows of strings) when available."""
    table = getattr(policy, "rules_table", None)
    if callable(table):
        try:
            rows = [tuple(str(c) for c in row) for row in table()]
        except Exception as exc:  # the policy's own error text is the most useful thing to show
            return TableScreen("Permission rules", ("",), [], note=f"Could not list the rules: {exc}")
        width = max((len(r) for r in rows), default=1)
        columns = (
            ("behavior", "rule", "source", "", "")[:width]
            if width <= 3
            else tuple(f"col{i}" for i in range(width))
        )
        return TableScreen("Permission rules", columns, rows)
    return TableScreen(
        "Permission rules",
        ("",),
        [],
        note="Listing the effective rules is not available yet (the policy has no rules_table()).",
    )


if __name__ == "__main__":

    class _Demo(App[None]):
        def on_mount(self) -> None:
            self.push_screen(help_screen())

    _Demo().run()
