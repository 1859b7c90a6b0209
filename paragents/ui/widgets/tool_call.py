"""One tool call in a transcript: name, argument summary, state, and a collapsible result or diff."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Static

from paragents.ui.text import clean, safe_text, shorten

MAX_OUTPUT_CHARS = 8000
"""Characters of a tool result shown in the UI (the rest is summarised as '… N more chars')."""

STATUS_STYLES: dict[str, tuple[str, str]] = {
    "pending": ("○", "dim"),
    "asking": ("?", "bold yellow"),
    "running": ("●", "cyan"),
    "ok": ("✓", "green"),
    "error": ("✗", "bold red"),
    "denied": ("⊘", "magenta"),
    "cancelled": ("■", "dim"),
    "skipped": ("■", "dim"),
    "interrupted": ("↯", "yellow"),
}
"""Symbol and Rich style per tool call status (pending/asking come from the UI, others from the core)."""


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
    from paragents.models import parse_arguments

    try:
        args = parse_arguments(raw)
    except ValueError:
        return shorten(raw, limit)
    parts = [f"{k}={shorten(str(v), 40)}" for k, v in args.items()]
    return shorten(" ".join(parts), limit)


class ToolCallBlock(Vertical):
    """Shows a :class:`ToolEntry`; call :meth:`refresh_entry` after changing the entry."""

    DEFAULT_CSS = """
    ToolCallBlock { height: auto; margin: 0 0 1 0; padding: 0 1; border-left: outer $secondary; }
    ToolCallBlock > .tool-header { height: auto; }
    ToolCallBlock Collapsible { padding: 0; margin: 0; border: none; }
    ToolCallBlock Collapsible Contents { padding: 0 0 0 2; }
    ToolCallBlock .tool-result { height: auto; max-height: 30; overflow-y: auto; }
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
        symbol, style = STATUS_STYLES.get(self.entry.status, ("?", ""))
        text = Text(overflow="ellipsis", no_wrap=True)
        text.append(f"{symbol} ", style=style)
        text.append(clean(self.entry.name), style="bold")
        text.append("  ")
        text.append(clean(self.entry.summary), style="dim")
        text.append(f"  [{self.entry.status}]", style=style)
        return text

    def _result(self) -> Collapsible:
        entry = self.entry
        if entry.diff:
            body: Any = Syntax(clean(entry.diff), "diff", word_wrap=True, theme="ansi_dark")
            title = "diff"
        else:
            output = entry.output
            extra = len(output) - MAX_OUTPUT_CHARS
            body = safe_text(output[:MAX_OUTPUT_CHARS] if extra > 0 else output)
            if extra > 0:
                body.append(f"\n… {extra} more chars", style="dim italic")
            first = shorten(output, 60) or "(empty)"
            title = f"result: {first}"
        # The title is plain Content: a tool's output such as "[/]" is never read as markup.
        return Collapsible(Static(body, classes="tool-result"), title=Content(title), collapsed=True)  # type: ignore[arg-type]

    def refresh_entry(self) -> None:
        """Re-render the header, and mount the result once the call has finished (no-op before mount)."""
        if not self.is_mounted:
            return
        self.query_one(".tool-header", Static).update(self._header_text())
        self.set_class(False, f"-{self._shown_status}")
        self.set_class(True, f"-{self.entry.status}")
        finished = self.entry.status not in ("pending", "asking", "running")
        if finished and not self.query(Collapsible):
            self.mount(self._result())
        self._shown_status = self.entry.status


if __name__ == "__main__":

    class _Demo(App[None]):
        def compose(self) -> ComposeResult:
            yield ToolCallBlock(ToolEntry("1", "read_file", "path=README.md", "running"))
            yield ToolCallBlock(ToolEntry("2", "run_command", "command=pytest -q", "ok", "3 passed\n"))
            diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-print('a')\n+print('b')\n"
            yield ToolCallBlock(ToolEntry("3", "edit_file", "path=x.py", "ok", "edited", diff))
            yield ToolCallBlock(ToolEntry("4", "write_file", "path=/etc/x", "denied", "denied by rule"))
            yield ToolCallBlock(ToolEntry("5", "run_command", "command=false", "error", "exit 1"))

    _Demo().run()
