"""One tool call in a transcript: name, argument summary, state, and a collapsible result or diff."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from paragents.models import parse_arguments
from paragents.terminal_text import show_controls
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.text import clean, plain, safe_text, shorten

MAX_OUTPUT_CHARS = 8000
"""Characters of a tool result shown in the UI (the rest is summarised as '… N more chars')."""

STATUS_STYLES: dict[str, str] = {
    "pending": "dim",
    "asking": "bold yellow",
    "running": "cyan",
    "ok": "green",
    "error": "bold red",
    "denied": "magenta",
    "cancelled": "dim",
    "skipped": "dim",
    "interrupted": "yellow",
}
"""Rich style per tool call status (pending/asking come from the UI, others from the core); the
status marks are in the glyph set (paragents.ui.core.glyphs)."""


@dataclass(eq=False)
class ToolEntry:
    """Transcript record of one tool call (kept even when its widget is unmounted).

    ``status``: pending | asking | running | ok | error | denied | cancelled | skipped | interrupted."""

    call_id: str
    name: str
    summary: str
    status: str = "pending"
    output: str = ""
    diff: str | None = None
    widget: Any = field(default=None, repr=False)


def summarize_arguments(raw: str, limit: int = 80) -> str:
    """Return a one-line summary of a tool call's raw JSON arguments ("path=a.py content=…")."""
    try:
        args = parse_arguments(raw)
    except ValueError:
        return shorten(show_controls(raw), limit)
    parts = [f"{k}={shorten(show_controls(str(v)), 40)}" for k, v in args.items()]  # ESC as "␛"
    return shorten(" ".join(parts), limit)


ENDS_USEFUL = ("error", "denied", "interrupted", "cancelled", "skipped")
"""Statuses whose result says what matters at its end (the last line of a traceback or a message)."""
TITLE_CHARS = 1000
"""Characters of a result in its one-line title (the row cuts it at the panel's width)."""


def result_line(output: str, status: str) -> str:
    """The collapsed result's one line: its lines joined, or for a failure of several lines its last
    (the useful end of an error) after "…"; as long as the panel is wide (the title row cuts it with an
    ellipsis)."""
    lines = [line.strip() for line in clean(output).split("\n") if line.strip()]
    if not lines:
        return ""
    if status in ENDS_USEFUL and len(lines) > 1:
        return shorten(f"… {lines[-1]}", TITLE_CHARS)
    return shorten(" ".join(lines), TITLE_CHARS)


def undrawable(source: str, exc: BaseException) -> Static:
    """Return ``source`` as plain text under a note saying it could not be drawn (``exc``): the
    fallback for a transcript entry whose widget failed to build."""
    text = Text(f"(could not be drawn as usual: {type(exc).__name__}; shown as plain text)\n", style="dim")
    text.append_text(safe_text(source))
    return Static(text, classes="tool-body undrawable")


class ToolCallBlock(Vertical):
    """Shows a :class:`ToolEntry`; call :meth:`refresh_entry` after changing the entry."""

    DEFAULT_CSS = """
    ToolCallBlock { height: auto; margin: 0 0 1 0; padding: 0 1; border-left: outer $secondary; }
    ToolCallBlock > .tool-header { height: auto; }
    ToolCallBlock Collapsible { padding: 0; margin: 0; border: none; }
    ToolCallBlock Collapsible Contents { padding: 0 0 0 2; }
    ToolCallBlock .tool-result { height: auto; max-height: 30; overflow-y: auto; }
    ToolCallBlock CollapsibleTitle { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, entry: ToolEntry) -> None:
        super().__init__(classes=f"-{entry.status}")
        self.entry = entry
        entry.widget = self
        self._shown_status = entry.status

    def compose(self) -> ComposeResult:
        yield Static(self._header_text(), classes="tool-header")
        if self.entry.status not in ("pending", "asking", "running"):
            yield self._result()

    def _header_text(self) -> Text:
        style = STATUS_STYLES.get(self.entry.status, "")
        symbol = glyphs().status.get(self.entry.status, "?")
        text = Text(overflow="ellipsis", no_wrap=True)
        text.append(f"{symbol} ", style=style)
        text.append(clean(self.entry.name), style="bold")
        text.append("  ")
        summary = self.entry.summary  # an ask's summary starts with the tool's name: shown once
        if summary.startswith(f"{self.entry.name} "):
            summary = summary[len(self.entry.name) + 1 :]
        text.append(clean(summary), style="dim")
        text.append(f"  [{self.entry.status}]", style=style)
        return text

    def _result(self) -> Widget:
        """The collapsed result (or diff); the output is never read as markup (its first characters
        are the title). Should building it fail anyway, the output is shown as plain text with a note."""
        try:
            return self._collapsible()
        except Exception as exc:  # a bug must not make the transcript (or its restore) undrawable
            return undrawable(self.entry.diff or self.entry.output, exc)

    def _collapsible(self) -> Collapsible:
        entry = self.entry
        if entry.diff:
            body: Any = Syntax(clean(entry.diff), "diff", word_wrap=True, theme="ansi_dark")
            title = plain("diff")
        else:
            output = entry.output
            extra = len(output) - MAX_OUTPUT_CHARS
            body = safe_text(output[:MAX_OUTPUT_CHARS] if extra > 0 else output)
            if extra > 0:
                body.append(f"\n{glyphs().ellipsis} {extra} more chars", style="dim italic")
            title = plain(f"result: {result_line(output, entry.status) or '(empty)'}")
        g = glyphs()
        return Collapsible(
            Static(body, classes="tool-result"),
            title=title,  # type: ignore[arg-type]  # Content: shown as is, never parsed as markup
            collapsed=True,
            collapsed_symbol=g.collapsed,
            expanded_symbol=g.expanded,
            classes="tool-body",
        )

    def refresh_entry(self) -> None:
        """Re-render the header, and mount the result once the call has finished (no-op before mount)."""
        if not self.is_mounted:
            return
        self.query_one(".tool-header", Static).update(self._header_text())
        self.set_class(False, f"-{self._shown_status}")
        self.set_class(True, f"-{self.entry.status}")
        finished = self.entry.status not in ("pending", "asking", "running")
        if finished and not self.query(".tool-body"):
            self.mount(self._result())
        self._shown_status = self.entry.status


class Demo(App[None]):
    """A tool call in each state: running, ok, ok with a diff, denied, error."""

    def compose(self) -> ComposeResult:
        yield ToolCallBlock(ToolEntry("1", "read_file", "path=README.md", "running"))
        yield ToolCallBlock(ToolEntry("2", "run_command", "command=pytest -q", "ok", "3 passed\n"))
        diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-print('a')\n+print('b')\n"
        yield ToolCallBlock(ToolEntry("3", "edit_file", "path=x.py", "ok", "edited", diff))
        yield ToolCallBlock(ToolEntry("4", "write_file", "path=/etc/x", "denied", "denied by rule"))
        yield ToolCallBlock(ToolEntry("5", "run_command", "command=false", "error", "exit 1"))


if __name__ == "__main__":
    Demo().run()
