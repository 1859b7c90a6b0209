"""Messages: full-JSON round trip, incomplete replies, and the repaired provider history."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paragents.models import AssembledReply, ToolCall, tool_message, user_message
from paragents.store import INTERRUPTED_RESULT, SessionRecord, Store, StoreError


def _call(call_id: str, name: str = "read_file", args: str = '{"path": "a.py"}') -> dict[str, Any]:
    return ToolCall(call_id, name, args).to_openai()


def _assistant(*call_ids: str, content: str = "") -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if call_ids:
        msg["tool_calls"] = [_call(c) for c in call_ids]
    return msg


async def test_round_trip_keeps_the_full_json(store: Store, session: SessionRecord) -> None:
    reply = AssembledReply(
        content="Voilà — 完成 🎉",
        reasoning="thinking about ünïcödé\nand newlines",
        tool_calls=[ToolCall("call_1", "edit_file", '{"path": "é.py", "old": "\\u00e9", "new": "x"}')],
    ).to_message()
    messages = [
        {"role": "system", "content": "you are helpful"},
        user_message("héllo 👋"),
        reply,
        {"role": "tool", "tool_call_id": "call_1", "content": "done", "name": "edit_file"},
        {"role": "assistant", "content": None, "refusal": None, "extra": {"nested": [1, 2.5, True, None]}},
    ]
    ids = [await store.messages.append(session.id, m, tokens=7) for m in messages]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    loaded = await store.messages.load(session.id)
    assert [m.message for m in loaded] == messages
    assert [m.id for m in loaded] == ids
    assert [m.role for m in loaded] == ["system", "user", "assistant", "tool", "assistant"]
    assert all(m.complete and m.tokens == 7 and m.conversation_id == session.conversation_id for m in loaded)
    assert loaded[2].message["reasoning_content"] == "thinking about ünïcödé\nand newlines"


async def test_unicode_is_stored_as_utf8_text(store: Store, session: SessionRecord, db_file: Path) -> None:
    await store.messages.append(session.id, user_message("日本語"))
    with sqlite3.connect(db_file) as conn:
        (text,) = conn.execute("SELECT message_json FROM messages").fetchone()
    assert "日本語" in text


async def test_turn_id_is_kept(store: Store, session: SessionRecord) -> None:
    turn = await store.turns.start(session.id, "do it")
    await store.messages.append(session.id, user_message("do it"), turn_id=turn)
    (stored,) = await store.messages.load(session.id)
    assert stored.turn_id == turn


@pytest.mark.parametrize(
    "bad", [{"content": "no role"}, {"role": ""}, "just text", {"role": "user", "x": {1, 2}}]
)
async def test_bad_messages_are_refused(store: Store, session: SessionRecord, bad: Any) -> None:
    with pytest.raises(StoreError, match="message"):
        await store.messages.append(session.id, bad)
    assert await store.messages.count(session.id) == 0


async def test_append_to_unknown_session_raises(store: Store) -> None:
    with pytest.raises(StoreError, match="no session"):
        await store.messages.append("missing", user_message("hi"))


async def test_incomplete_reply_is_excluded_from_history_but_kept(
    store: Store, session: SessionRecord
) -> None:
    await store.messages.append(session.id, user_message("q"))
    await store.messages.append(session.id, {"role": "assistant", "content": "half an ans"}, complete=False)
    await store.messages.append(session.id, user_message("again"))
    await store.messages.append(session.id, {"role": "assistant", "content": "full answer"})
    history = await store.messages.load_history(session.id)
    assert history == [
        user_message("q"),
        user_message("again"),
        {"role": "assistant", "content": "full answer"},
    ]
    loaded = await store.messages.load(session.id)
    assert [(m.message["content"], m.complete) for m in loaded] == [
        ("q", True),
        ("half an ans", False),
        ("again", True),
        ("full answer", True),
    ]


async def test_incomplete_reply_with_calls_drops_their_results(store: Store, session: SessionRecord) -> None:
    await store.messages.append(session.id, user_message("q"))
    await store.messages.append(session.id, _assistant("c1"), complete=False)
    await store.messages.append(session.id, tool_message("c1", "result of a call never made"))
    assert await store.messages.load_history(session.id) == [user_message("q")]


async def test_dangling_tool_call_is_repaired_and_persisted(store: Store, session: SessionRecord) -> None:
    await store.messages.append(session.id, user_message("q"))
    await store.messages.append(session.id, _assistant("c1", "c2", "c3"))
    await store.messages.append(session.id, tool_message("c2", "two"))
    history = await store.messages.load_history(session.id)
    assert history == [
        user_message("q"),
        _assistant("c1", "c2", "c3"),
        tool_message("c2", "two"),
        tool_message("c1", INTERRUPTED_RESULT),
        tool_message("c3", INTERRUPTED_RESULT),
    ]
    shown = [m.message for m in await store.messages.load(session.id)]
    assert shown == history
    assert await store.messages.load_history(session.id) == history
    assert await store.messages.count(session.id) == 5


async def test_repair_in_the_middle_sorts_right_after_the_call(store: Store, session: SessionRecord) -> None:
    await store.messages.append(session.id, user_message("q1"))
    await store.messages.append(session.id, _assistant("c1"))
    await store.messages.append(session.id, user_message("q2"))
    await store.messages.append(session.id, {"role": "assistant", "content": "answer"})
    expected = [
        user_message("q1"),
        _assistant("c1"),
        tool_message("c1", INTERRUPTED_RESULT),
        user_message("q2"),
        {"role": "assistant", "content": "answer"},
    ]
    assert await store.messages.load_history(session.id) == expected
    assert [m.message for m in await store.messages.load(session.id)] == expected
    await store.messages.append(session.id, user_message("q3"))
    assert [m.message for m in await store.messages.load(session.id)] == [*expected, user_message("q3")]


async def test_history_never_has_a_tool_result_before_its_call(store: Store, session: SessionRecord) -> None:
    await store.messages.append(session.id, user_message("q"))
    await store.messages.append(session.id, tool_message("c9", "early result"))
    await store.messages.append(session.id, tool_message("ghost", "no call at all"))
    await store.messages.append(session.id, _assistant("c9"))
    await store.messages.append(session.id, tool_message("c9", "real result"))
    await store.messages.append(session.id, tool_message("c9", "duplicate result"))
    history = await store.messages.load_history(session.id)
    assert history == [user_message("q"), _assistant("c9"), tool_message("c9", "real result")]
    seen: set[str] = set()
    for msg in history:
        if msg["role"] == "assistant":
            seen.update(c["id"] for c in msg.get("tool_calls", []))
        if msg["role"] == "tool":
            assert msg["tool_call_id"] in seen


async def test_history_of_unknown_session_is_empty(store: Store) -> None:
    assert await store.messages.load_history("missing") == []
    assert await store.messages.load("missing") == []


async def test_repair_is_not_persisted_while_another_live_process_runs_the_turn(
    store: Store, session: SessionRecord
) -> None:
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        turn = await store.turns.start(session.id, "q", pid=live.pid)
        await store.messages.append(session.id, user_message("q"), turn_id=turn)
        await store.messages.append(session.id, _assistant("c1"), turn_id=turn)
        history = await store.messages.load_history(session.id)
        assert history[-1] == tool_message("c1", INTERRUPTED_RESULT)
        assert await store.messages.count(session.id) == 2
    finally:
        live.communicate(b"")
    await store.turns.recover_interrupted(os.getpid())
    stored = await store.messages.load(session.id)
    assert [m.message for m in stored][-1] == tool_message("c1", INTERRUPTED_RESULT)
    assert await store.messages.count(session.id) == 3
