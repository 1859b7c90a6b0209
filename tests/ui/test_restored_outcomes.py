"""A restored transcript shows each tool result's stored outcome, not a success for every call."""

from __future__ import annotations

from typing import Any

from paragents.store import INTERRUPTED_RESULT
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.tool_call import ToolCallBlock, ToolEntry
from paragents.ui.widgets.transcript import Transcript
from tests.ui.conftest import SIZE
from tests.ui.panel_app import PanelApp, view

OUTCOMES = ("ok", "error", "denied", "cancelled", "interrupted")


def stored_history() -> list[dict[str, Any]]:
    calls = [
        {"id": f"c_{o}", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}
        for o in OUTCOMES
    ]
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "five calls"},
        {"role": "assistant", "content": "", "tool_calls": calls},
    ]
    for outcome in OUTCOMES:
        text = INTERRUPTED_RESULT if outcome == "interrupted" else f"{outcome} result"
        history.append({"role": "tool", "tool_call_id": f"c_{outcome}", "content": text, "outcome": outcome})
    return history


async def test_restored_tool_results_are_drawn_with_their_outcome() -> None:
    app = PanelApp(stored_history())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.query_one(Transcript)
        entries = {e.call_id: e for e in transcript.records if isinstance(e, ToolEntry)}
        assert {cid: e.status for cid, e in entries.items()} == {f"c_{o}": o for o in OUTCOMES}
        blocks = {b.entry.call_id: b for b in app.query(ToolCallBlock)}
        header = blocks["c_interrupted"].query_one(".tool-header").render()
        assert "[interrupted]" in str(header) and "[ok]" not in str(header)
        assert "[denied]" in str(blocks["c_denied"].query_one(".tool-header").render())


async def test_a_restored_transcript_says_how_past_turns_ended_in_place() -> None:
    history = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "fine"},
        {"role": "user", "content": "two"},
        {"role": "user", "content": "three"},
    ]
    notes = [(3, "Turn failed: [auth] 401 [b]bad key[/b]", "error"), (4, "Turn cancelled.", "warning")]
    app = PanelApp(history)
    panel_view = view(messages=history)
    panel_view.history_notes = notes
    app.compose = lambda: iter([SessionPanel(panel_view, 1)])  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.query_one(Transcript)
        shown = [(type(e).__name__, getattr(e, "text", "")) for e in transcript.records]
        assert shown == [
            ("TextEntry", "one"),
            ("AssistantEntry", ""),
            ("TextEntry", "two"),
            ("TextEntry", "Turn failed: [auth] 401 [b]bad key[/b]"),
            ("TextEntry", "three"),
            ("TextEntry", "Turn cancelled."),
        ]
        assert "[b]bad key[/b]" in app.export_screenshot().replace("&#160;", " ")  # inert text
