"""Focused regression tests for bugs the UI monkey (tests/ui/test_monkey.py) found."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Collapsible

from paragents.ui.widgets.tool_call import ToolCallBlock, ToolEntry


class _OneTool(App[None]):
    def __init__(self, entry: ToolEntry) -> None:
        super().__init__()
        self.entry = entry

    def compose(self) -> ComposeResult:
        yield ToolCallBlock(self.entry)


async def test_tool_result_title_with_markup_like_output_is_plain_text() -> None:
    """A finished call whose output starts with "[/]" (run_command printing brackets) used to crash
    the app: the result's fold title was parsed as markup (MarkupError: auto closing tag)."""
    entry = ToolEntry("1", "run_command", "command=printf", "running")
    app = _OneTool(entry)
    async with app.run_test() as pilot:
        block = app.query_one(ToolCallBlock)
        entry.status, entry.output = "ok", "[/] [bold]x[/bold] exit code 0"
        block.refresh_entry()
        await pilot.pause()
        title = app.query_one(Collapsible).query_one("CollapsibleTitle")
        assert "result: [/] [bold]x[/bold]" in str(title.render())
