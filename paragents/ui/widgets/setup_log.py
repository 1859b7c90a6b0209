"""A new lane's setup output, streamed into the panel the lane was asked from while the setup runs
(Textual's ``Log``: plain text, never markup). It goes away when the lane is ready; when the setup
fails it stays, saying so (the lane was removed; the output is also kept in a log file)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Log, Static


class SetupLog(Vertical):
    """The setup output of lane ``lane``."""

    DEFAULT_CSS = """
    SetupLog { height: auto; max-height: 12; border-top: solid $accent; padding: 0 1; }
    SetupLog > .setup-heading { height: 1; color: $text-muted; }
    SetupLog > Log { height: auto; max-height: 10; }
    SetupLog.-failed { border-top: solid $error; }
    """

    def __init__(self, lane: str) -> None:
        super().__init__(classes="setup-log")
        self.lane = lane
        self.lines: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static(Text(f"setting up lane {self.lane} …"), classes="setup-heading")
        yield Log(max_lines=2000, auto_scroll=True)

    def write(self, line: str) -> None:
        """Add one output line."""
        self.lines.append(line)
        self.query_one(Log).write_line(line)

    def failed(self, reason: str) -> None:
        """Say that the setup failed (the log stays)."""
        self.add_class("-failed")
        self.query_one(".setup-heading", Static).update(Text(f"lane {self.lane}: {reason}"))
