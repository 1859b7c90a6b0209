"""Restored tool rows: each kept row goes to the announcement of its call it belongs to."""

from __future__ import annotations

from typing import Any

from paragents.sessions.tool_rows import DISPLAY_KEY, with_tool_rows
from paragents.store.tool_rows import KeptRow


def announce(*ids: str) -> dict[str, Any]:
    calls = [{"id": i, "type": "function", "function": {"name": "kind", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": "", "tool_calls": calls}


def test_rows_go_to_their_own_announcement_when_a_server_reuses_call_ids() -> None:
    shown = [
        {"role": "user", "content": "go"},
        announce("call_0"),
        {"role": "tool", "tool_call_id": "call_0", "content": "1"},
        announce("call_0", "b"),
        {"role": "tool", "tool_call_id": "call_0", "content": "2"},
    ]
    ids = [1, 2, 3, 4, 5]
    rows = [
        KeptRow("call_0", 2, "asking first", None),
        KeptRow("call_0", 2, "the agent's title: Read file", None),  # the last row of a call wins
        KeptRow("call_0", 4, "second", True),
        KeptRow("b", 5, "b's row", False),
        KeptRow("gone", 9, "no announcement", None),
    ]
    out = with_tool_rows(shown, ids, rows)
    assert out[1][DISPLAY_KEY] == {"call_0": ("the agent's title: Read file", None)}
    assert out[3][DISPLAY_KEY] == {"call_0": ("second", True), "b": ("b's row", False)}
    assert DISPLAY_KEY not in out[0] and out[2] is shown[2]
    assert DISPLAY_KEY not in shown[1]  # the stored messages are not changed


def test_an_agents_rows_go_to_the_announcement_stored_after_them() -> None:
    """An external agent's turn is stored when it ends: its rows were written before the message
    announcing their call, and an agent reuses ids across turns (the fake agent's ``call-0``)."""
    shown = [
        {"role": "user", "content": "one"},
        announce("call-0"),
        {"role": "tool", "tool_call_id": "call-0", "content": "1"},
        {"role": "user", "content": "two"},
        announce("call-0"),
        {"role": "tool", "tool_call_id": "call-0", "content": "2"},
    ]
    rows = [
        KeptRow("call-0", 0, "Run first", None, later=True),  # written before message 2 was stored
        KeptRow("call-0", 3, "Run second", None, later=True),  # turn two: after turn one's messages
    ]
    out = with_tool_rows(shown, [1, 2, 3, 4, 5, 6], rows)
    assert out[1][DISPLAY_KEY] == {"call-0": ("Run first", None)}
    assert out[4][DISPLAY_KEY] == {"call-0": ("Run second", None)}
