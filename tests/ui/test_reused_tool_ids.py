"""A server that reuses tool-call ids across turns (``call_0`` every turn, as some OpenAI-compatible
servers do) must not make a later turn rewrite an earlier turn's tool row."""

from __future__ import annotations

from typing import Any

from paragents.models import ToolCall
from paragents.ui.widgets.tool_call import ToolEntry
from paragents.ui.widgets.transcript import Transcript
from tests.ui.conftest import SIZE
from tests.ui.panel_app import PanelApp


def turn(path: str, result: str) -> list[dict[str, Any]]:
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "read_file", "arguments": f'{{"path": "{path}"}}'},
    }
    return [
        {"role": "user", "content": f"read {path}"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": result, "outcome": "ok"},
    ]


async def test_restored_turns_with_the_same_call_id_keep_their_own_rows() -> None:
    app = PanelApp(turn("a.txt", "first result") + turn("b.txt", "second result"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rows = [e for e in app.query_one(Transcript).records if isinstance(e, ToolEntry)]
        assert [r.output for r in rows] == ["first result", "second result"]
        assert "a.txt" in rows[0].summary and "b.txt" in rows[1].summary


async def test_a_live_call_reusing_an_id_starts_a_new_row() -> None:
    app = PanelApp(turn("a.txt", "first result"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.query_one(Transcript)
        again = ToolCall(id="call_0", name="read_file", arguments='{"path": "b.txt"}')
        transcript.tool_status(again, "running", "b.txt")
        transcript.tool_finished(again, "ok", "second result", None)
        await pilot.pause()
        rows = [e for e in transcript.records if isinstance(e, ToolEntry)]
        assert [(r.status, r.output) for r in rows] == [("ok", "first result"), ("ok", "second result")]
        assert "a.txt" in rows[0].summary and "b.txt" in rows[1].summary
