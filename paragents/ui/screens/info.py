"""Read-only modal screens: /help (commands and keys), /show-config (effective config with sources)
and /permissions (effective rules, when the runtime's policy exposes ``rules_table()``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from paragents.sessions.mcp import COLUMNS
from paragents.ui.core.commands import help_rows
from paragents.ui.core.text import clean

KEY_ROWS: tuple[tuple[str, str], ...] = (
    ("ctrl+n", "New session"),
    ("ctrl+w", "Close the focused session"),
    ("alt+right / f6", "Focus the next session"),
    ("alt+left / shift+f6", "Focus the previous session"),
    ("pageup / pagedown", "Scroll the focused session's transcript"),
    ("end", "Back to the bottom of the transcript, following new output (when scrolled up)"),
    ("alt+1 ... alt+9", "Focus session by number (tmux/xterm's ESC + digit works too)"),
    ("alt+z", "Zoom: show the focused session alone; alt+z again shows them all"),
    ("escape", "Cancel the focused session's running turn"),
    ("shift+tab", "Cycle the focused session's permission mode (default -> acceptEdits -> plan)"),
    ("ctrl+p", "Command palette (every slash command is there)"),
    ("ctrl+q", "Quit (open sessions come back next time)"),
    ("f2", "Inbox: every pending approval and conflict, oldest first"),
    ("f3", "Overview: one row per session, like top"),
    ("enter", "Send the prompt (queued when the session is busy)"),
    ("ctrl+j / shift+enter / \\ enter", "New line in the prompt (shift+enter where the terminal reports it)"),
    ("up / down", "On the prompt's first / last line: the session's earlier prompts"),
    ("ctrl+z / ctrl+y", "Undo / redo in the prompt (a paste is one step; also ctrl+shift+z)"),
    ("right / end / tab", "Accept the suggested slash command"),
    ("ctrl+g", "Go to the focused session's approval/conflict bar (again: next bar, then the prompt)"),
    ("y s a n d", "Approval bar, after ctrl+g or a click: allow once / session / always…, deny, note…"),
    ("w r s e", "Conflict bar, after ctrl+g or a click: wait / run anyway / skip / re-read first"),
    ("ctrl+g, then y s n …", "In the inbox (f2): the selected item's bar takes the keys only after ctrl+g"),
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


RULE_COLUMNS = ("kind", "rule", "scope", "file")
"""Columns of /permissions: allow/ask/deny, the rule, its scope (managed, cli, local, project, user,
session) and the file it came from."""


def rule_cells(row: object) -> tuple[str, ...]:
    """Return the /permissions cells of one ``Policy.rules_table()`` row (a ``RuleRow``: kind, rule,
    scope, source_path; a plain sequence of cells is shown as it is)."""
    if hasattr(row, "rule") and hasattr(row, "kind"):
        source = getattr(row, "source_path", None)
        return (str(row.kind), str(row.rule), str(getattr(row, "scope", "")), str(source or "-"))
    if isinstance(row, str) or not isinstance(row, Iterable):
        return (str(row),)
    return tuple(str(cell) for cell in row)


def permissions_screen(policy: object) -> TableScreen:
    """Return the /permissions screen: every effective rule from ``policy.rules_table()`` in the
    order they are checked (deny, ask, allow), with where each came from."""
    table = getattr(policy, "rules_table", None)
    if not callable(table):
        note = "Listing the effective rules is not available (the policy has no rules_table())."
        return TableScreen("Permission rules", ("",), [], note=note)
    try:
        rows = [rule_cells(row) for row in table()]
    except Exception as exc:  # the policy's own error text is the most useful thing to show
        return TableScreen("Permission rules", ("",), [], note=f"Could not list the rules: {exc}")
    width = max((len(r) for r in rows), default=len(RULE_COLUMNS))
    columns = RULE_COLUMNS if width == len(RULE_COLUMNS) else tuple(f"col{i}" for i in range(width))
    mode = getattr(policy, "default_mode", None)
    note = "Checked in this order: the first kind with a matching rule decides."
    if mode is not None:
        note += f" Default mode: {getattr(mode, 'value', mode)}."
    if not rows:
        note += " No rules are set: every call gets the mode's default."
    return TableScreen("Permission rules", columns, rows, note=note)


def mcp_screen(report: object) -> TableScreen:
    """Return the /mcp screen for a ``Runtime.mcp_report()`` (paragents.sessions.mcp.McpReport)."""
    notes = list(getattr(report, "notes", []))
    note = "\n".join(notes) if notes else "/mcp restart NAME restarts a server. Secrets are never shown."
    return TableScreen("MCP servers", COLUMNS, list(getattr(report, "rows", [])), note=note)


class Demo(App[None]):
    """The /help screen (commands and keys)."""

    def on_mount(self) -> None:
        self.push_screen(help_screen())


if __name__ == "__main__":
    Demo().run()
