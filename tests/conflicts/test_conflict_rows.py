"""A held call's conflict decision is a row of the store: answered through another connection to the
database (the path ``paragents approve`` takes), the held session goes on; a second answer is refused."""

from __future__ import annotations

import asyncio

from paragents import events as ev
from paragents.store import Store
from tests.conflicts.conftest import ConflictEnv, gated, reply, tool


async def test_a_conflict_answered_from_another_connection_skips_the_call(cenv: ConflictEnv) -> None:
    notes = cenv.project / "notes.txt"
    notes.write_text("x\n")
    rt = await cenv.runtime()
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    gate_a = asyncio.Event()
    cenv.server.add(
        [
            reply(tool_calls=[tool("write_file", {"path": "notes.txt", "content": "A\n"})]),
            gated(reply("ok"), gate_a),
        ],
        session="a",
    )
    cenv.server.add(
        [reply(tool_calls=[tool("write_file", {"path": "notes.txt", "content": "B\n"})]), reply("ok")],
        session="b",
    )
    rt.submit(a.id, "write A")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "write B")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ConflictDetected, b.id)))
    (held,) = cenv.sink.of(ev.ConflictDetected, b.id)
    (row,) = await rt.approvals.pending_approvals()
    assert (row.id, row.kind, row.choices) == (held.conflict_id, "conflict", held.choices)
    other = await Store.open(cenv.db)  # another connection: only the poll of the row can see it
    try:
        assert (await other.approvals.answer(held.conflict_id, "skip", "cli (pid 1)")).accepted
        await rt.wait_idle(b.id)
        second = await other.approvals.answer(held.conflict_id, "run_anyway", "phone")
    finally:
        await other.close()
    assert second.status == "already_answered" and "skip by cli (pid 1)" in second.message
    assert notes.read_text() == "A\n"
    assert [f.status for f in cenv.sink.of(ev.ToolCallFinished, b.id)] == ["skipped"]
    assert held.reply.done() and held.reply.result() == "skip"  # the client's bar went away
    (resolved,) = cenv.sink.of(ev.ConflictResolved, b.id)
    assert (resolved.answer, resolved.by) == ("skip", "cli (pid 1)")
    gate_a.set()
    await rt.wait_idle()
    await rt.shutdown()
