"""Helpers for the conflict and pause tests: a conflict held between two sessions, scripted usage."""

from __future__ import annotations

import asyncio
import json

from paragents import events as ev
from paragents.llm.replay import ScriptedResponse
from tests.conflicts.conftest import gated
from tests.serve.conftest import Served, reply, write_call

BIG = {"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 10000}
"""Usage of each scripted request: 10k tokens (a 12k session cap pauses before the second)."""


def listing(path: str, call_id: str) -> ScriptedResponse:
    args = json.dumps({"path": path})
    return ScriptedResponse.from_message(
        tool_calls=[{"id": call_id, "name": "list_dir", "arguments": args}], usage=BIG
    )


async def held_conflict(s: Served, path: str = "notes.txt") -> tuple[str, str, asyncio.Event]:
    """Session a writes ``path`` and keeps its turn open (its reservation held until ``gate`` is set);
    session b's write of ``path`` is held: return (b's id, the conflict id, gate)."""
    rt = s.runtime
    a = await rt.lifecycle.new_session("a")
    b = await rt.lifecycle.new_session("b")
    gate = asyncio.Event()
    s.replay.add(reply(tool_calls=[write_call(path, "A\n")]), session="a")
    s.replay.add(gated(reply("ok"), gate), session="a")
    s.replay.add(reply(tool_calls=[write_call(path, "B\n", id="call_b")]), session="b")
    s.replay.add(reply("done"), session="b")
    allow = _allow_asks(s)
    rt.submit(a.id, "write A")
    await s.sink.wait_for(
        lambda: any(isinstance(e, ev.ToolCallFinished) and e.session_id == a.id for e in s.sink.events)
    )
    rt.submit(b.id, "write B")
    await s.sink.wait_for(lambda: bool(b.open_conflicts))
    allow.cancel()
    return b.id, b.open_conflicts[0].conflict_id, gate


def _allow_asks(s: Served) -> asyncio.Task[None]:
    """Allow each write ask as it comes (the test is about the conflict, not the ask)."""

    async def allow() -> None:
        while True:
            for view in s.runtime.sessions.values():
                for req in list(view.pending.values()):
                    if not req.reply.done():
                        req.reply.set_result(ev.PermissionAnswer("allow_once"))
            s.sink.changed.clear()
            await s.sink.changed.wait()

    return asyncio.ensure_future(allow())
