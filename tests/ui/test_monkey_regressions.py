"""Focused regression tests for bugs the UI monkey (tests/ui/test_monkey.py) found."""

from __future__ import annotations

import json
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Collapsible

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import make_app
from paragents.ui.widgets.tool_call import ToolCallBlock, ToolEntry
from tests.ui.conftest import SIZE, wait_until


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


async def test_quit_while_a_turn_runs_exits_cleanly(make_runtime: Any, replay: ReplayServer) -> None:
    """ctrl+q while a turn waits on an ask and another streams used to crash on exit: quitting
    cancels the turns, and their last events (the partial reply, the cancelled call) were routed to
    panels that could no longer mount anything (MountError: Transcript is not mounted)."""
    args = json.dumps({"path": "a.txt", "content": "x"})
    ask = ScriptedResponse.from_message(
        "hello", tool_calls=[{"id": "c1", "name": "write_file", "arguments": args}]
    )
    hanging = ScriptedResponse.from_message("partial words then nothing", chunk_size=8, done=False)
    hanging.reads, hanging.hang = hanging.reads[:2], True
    replay.add(ask, session="s1")
    replay.add(hanging, session="s2")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the second panel")
        first, second = app.panels.values()
        app.focus_panel(first.session_id)
        await pilot.press(*"go", "enter", "alt+2", *"go", "enter")
        await wait_until(pilot, lambda: first.approval_bar is not None, "the ask")
        await wait_until(pilot, lambda: "partial" in second.transcript.streamed_text, "the stream")
        await pilot.press("ctrl+q")
    assert app.return_code == 0 and app._exception is None
    assert app._runtime_closed
