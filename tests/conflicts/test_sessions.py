"""Conflicts between real sessions: reservations, waiting, run anyway, skip, stale reads, resources."""

from __future__ import annotations

import asyncio
import time

from paragents import events as ev
from paragents.models import SessionState
from tests.conflicts.conftest import ConflictEnv, gated, reply, tool


def edit(path: str, old: str, new: str, id: str = "call_1") -> dict[str, str]:
    return tool("edit_file", {"path": path, "old_string": old, "new_string": new}, id)


async def test_second_writer_waits_then_runs_after_the_first_turn_ends(cenv: ConflictEnv) -> None:
    notes = cenv.project / "notes.txt"
    notes.write_text("one\n")
    rt = await cenv.runtime()
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    gate_a = asyncio.Event()
    cenv.server.add(
        [reply(tool_calls=[edit("notes.txt", "one\n", "one\nA\n")]), gated(reply("a done"), gate_a)],
        session="a",
    )
    cenv.server.add([reply(tool_calls=[edit("notes.txt", "A\n", "A\nB\n")]), reply("b done")], session="b")
    cenv.sink.conflict_answers["b"] = ["wait"]

    rt.submit(a.id, "add A")
    await cenv.sink.wait_for(lambda: any(e.status == "ok" for e in cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "add B")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ConflictDetected, b.id)))
    conflict = cenv.sink.of(ev.ConflictDetected, b.id)[0]
    assert (conflict.kind, conflict.holder, conflict.path) == ("reservation", "a", str(notes.resolve()))
    assert "notes.txt" in conflict.holder_reason and "wait" in conflict.choices
    await cenv.sink.wait_for(lambda: b.waiting_on == "a")
    assert b.state is SessionState.WAITING and notes.read_text() == "one\nA\n"
    assert not cenv.sink.of(ev.ToolCallStarted, b.id)

    gate_a.set()
    await rt.wait_idle()
    assert notes.read_text() == "one\nA\nB\n"
    assert b.last_result is not None and b.last_result.status == "completed"
    assert [e.answer for e in cenv.sink.of(ev.ConflictResolved, b.id)] == ["wait"]
    assert b.waiting_on is None and not b.conflicts
    recorded = await rt.store.list_events(b.id, "conflict")
    assert [r["data"]["phase"] for r in recorded] == ["detected", "answered", "resolved"]
    assert recorded[-1]["data"]["answer"] == "wait" and recorded[-1]["data"]["holder"] == "a"
    assert await rt.store.list_reservations() == []
    await rt.shutdown()


async def test_three_sessions_on_one_file_lose_no_change(cenv: ConflictEnv) -> None:
    """Nobody answers: each waiting call runs by itself once the holder's turn ends."""
    notes = cenv.project / "notes.txt"
    notes.write_text("0\n")
    rt = await cenv.runtime()
    views = [await cenv.session(rt, n) for n in ("a", "b", "c")]
    gates = {n: asyncio.Event() for n in ("a", "b", "c")}
    for name, prev in (("a", "0"), ("b", "a"), ("c", "b")):
        cenv.server.add(
            [
                reply(tool_calls=[edit("notes.txt", f"{prev}\n", f"{prev}\n{name}\n")]),
                gated(reply("ok"), gates[name]),
            ],
            session=name,
        )
    rt.submit(views[0].id, "go")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, views[0].id)))
    rt.submit(views[1].id, "go")
    rt.submit(views[2].id, "go")
    await cenv.sink.wait_for(lambda: all(cenv.sink.of(ev.ConflictDetected, v.id) for v in views[1:]))
    assert notes.read_text() == "0\na\n"
    gates["a"].set()
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, views[1].id)))
    assert notes.read_text() == "0\na\nb\n"
    await cenv.sink.wait_for(lambda: views[2].waiting_on == "b")  # c now waits on b, which took the file
    gates["b"].set()
    gates["c"].set()
    await rt.wait_idle()
    assert notes.read_text() == "0\na\nb\nc\n"
    assert {e.by for v in views[1:] for e in cenv.sink.of(ev.ConflictResolved, v.id)} <= {"auto"}
    await rt.shutdown()


async def test_run_anyway_runs_while_the_holder_still_holds(cenv: ConflictEnv) -> None:
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
    cenv.sink.conflict_answers["b"] = ["run_anyway"]
    rt.submit(a.id, "write A")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "write B")
    await rt.wait_idle(b.id)
    assert notes.read_text() == "B\n"
    assert [e.answer for e in cenv.sink.of(ev.ConflictResolved, b.id)] == ["run_anyway"]
    assert sorted(r.session_id for r in await rt.store.list_reservations()) == sorted(
        [a.id]
    )  # b's turn ended
    gate_a.set()
    await rt.wait_idle()
    await rt.shutdown()


async def test_skip_tells_the_model_why_and_leaves_the_file(cenv: ConflictEnv) -> None:
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
    cenv.sink.conflict_answers["b"] = ["skip"]
    rt.submit(a.id, "write A")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "write B")
    await rt.wait_idle(b.id)
    assert notes.read_text() == "A\n"
    finished = cenv.sink.of(ev.ToolCallFinished, b.id)
    assert [f.status for f in finished] == ["skipped"]
    sent = [r for r in cenv.server.requests if r.session == "b"][-1].body_json["messages"][-1]
    assert sent["role"] == "tool" and "skipped by the user" in sent["content"] and "'a'" in sent["content"]
    gate_a.set()
    await rt.wait_idle()
    await rt.shutdown()


async def test_stale_edit_after_another_session_changed_the_file(cenv: ConflictEnv) -> None:
    notes = cenv.project / "notes.txt"
    notes.write_text("alpha\nbeta\n")
    rt = await cenv.runtime()
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    gate_a = asyncio.Event()
    cenv.server.add(
        [
            reply(tool_calls=[tool("read_file", {"path": "notes.txt"})]),
            gated(reply(tool_calls=[edit("notes.txt", "beta\n", "BETA\n")]), gate_a),
            reply("will redo"),
        ],
        session="a",
    )
    cenv.server.add([reply(tool_calls=[edit("notes.txt", "alpha\n", "ALPHA\n")]), reply("ok")], session="b")
    cenv.sink.conflict_answers["a"] = ["reread"]
    rt.submit(a.id, "edit beta")
    await cenv.server.wait_for_requests(2)
    rt.submit(b.id, "edit alpha")
    await rt.wait_idle(b.id)
    assert not cenv.sink.of(ev.ConflictDetected, b.id)  # a only read the file: no reservation
    gate_a.set()
    await rt.wait_idle(a.id)
    conflict = cenv.sink.of(ev.ConflictDetected, a.id)[0]
    assert conflict.kind == "stale_read" and conflict.choices[0] == "reread"
    assert conflict.diff is not None and "-alpha" in conflict.diff and "+ALPHA" in conflict.diff
    # who changed it, and when: b's write, after a read the file
    assert conflict.holder == "b" and conflict.others == ()
    wrote = cenv.sink.of(ev.ToolCallFinished, b.id)[0]
    assert wrote.status == "ok" and conflict.since <= time.time()
    row = await rt.store.get_approval(conflict.conflict_id)
    assert row is not None and "changed by b" in row.reason
    assert notes.read_text() == "ALPHA\nbeta\n"  # a's stale edit did not run
    sent = [r for r in cenv.server.requests if r.session == "a"][-1].body_json["messages"][-1]
    assert "changed on disk" in sent["content"] and "ALPHA\nbeta" in sent["content"]
    assert "session 'b' wrote it" in sent["content"]
    await rt.shutdown()


async def test_stale_edit_run_anyway_after_the_user_edited_the_file(cenv: ConflictEnv) -> None:
    notes = cenv.project / "notes.txt"
    notes.write_text("alpha\nbeta\n")
    rt = await cenv.runtime()
    a = await cenv.session(rt, "a")
    gate = asyncio.Event()
    cenv.server.add(
        [
            reply(tool_calls=[tool("read_file", {"path": "notes.txt"})]),
            gated(reply(tool_calls=[edit("notes.txt", "beta\n", "BETA\n")]), gate),
            reply("done"),
        ],
        session="a",
    )
    cenv.sink.conflict_answers["a"] = ["run_anyway"]
    rt.submit(a.id, "edit")
    await cenv.server.wait_for_requests(2)
    notes.write_text("alpha\nbeta\ngamma\n")  # the user, in an editor
    gate.set()
    await rt.wait_idle(a.id)
    assert cenv.sink.of(ev.ConflictDetected, a.id)[0].diff is not None
    assert "+gamma" in (cenv.sink.of(ev.ConflictDetected, a.id)[0].diff or "")
    assert cenv.sink.of(ev.ConflictDetected, a.id)[0].holder == ""  # no session here changed it
    assert notes.read_text() == "alpha\nBETA\ngamma\n"
    await rt.shutdown()


async def test_own_write_then_edit_is_not_stale(cenv: ConflictEnv) -> None:
    rt = await cenv.runtime()
    a = await cenv.session(rt, "a")
    cenv.server.add(
        [
            reply(tool_calls=[tool("write_file", {"path": "n.txt", "content": "1\n"})]),
            reply(tool_calls=[edit("n.txt", "1\n", "2\n")]),
            reply("done"),
        ],
        session="a",
    )
    rt.submit(a.id, "go")
    await rt.wait_idle(a.id)
    assert (cenv.project / "n.txt").read_text() == "2\n"
    assert not cenv.sink.of(ev.ConflictDetected)
    await rt.shutdown()


async def test_different_files_and_reads_never_wait(cenv: ConflictEnv) -> None:
    (cenv.project / "shared.txt").write_text("s\n")
    rt = await cenv.runtime()
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    gates = {"a": asyncio.Event(), "b": asyncio.Event()}
    for name in ("a", "b"):
        cenv.server.add(
            [
                reply(tool_calls=[tool("write_file", {"path": f"{name}.txt", "content": name})]),
                reply(tool_calls=[tool("read_file", {"path": "shared.txt"})]),
                gated(reply("ok"), gates[name]),
            ],
            session=name,
        )
    rt.submit(a.id, "go")
    rt.submit(b.id, "go")
    await cenv.server.wait_for_requests(6)
    held = {r.session_id for r in await rt.store.list_reservations()}
    assert held == {a.id, b.id}  # both hold their own file at the same time
    gates["a"].set()
    gates["b"].set()
    await rt.wait_idle()
    assert not cenv.sink.of(ev.ConflictDetected)
    assert (cenv.project / "a.txt").read_text() == "a" and (cenv.project / "b.txt").read_text() == "b"
    await rt.shutdown()


async def test_named_resource_conflicts_between_commands(cenv: ConflictEnv) -> None:
    rt = await cenv.runtime(resources=[{"name": "port:8000", "commands": ["Bash(echo serve *)"]}])
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    gate_a = asyncio.Event()
    cenv.server.add(
        [reply(tool_calls=[tool("run_command", {"command": "echo serve a"})]), gated(reply("ok"), gate_a)],
        session="a",
    )
    cenv.server.add(
        [reply(tool_calls=[tool("run_command", {"command": "echo serve b"})]), reply("ok")], session="b"
    )
    cenv.sink.conflict_answers["b"] = ["skip"]
    rt.submit(a.id, "serve")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "serve")
    await rt.wait_idle(b.id)
    conflict = cenv.sink.of(ev.ConflictDetected, b.id)[0]
    assert (conflict.kind, conflict.path, conflict.holder) == ("resource", "resource:port:8000", "a")
    gate_a.set()
    await rt.wait_idle()
    await rt.shutdown()


async def test_unknown_targets_ask_only_while_someone_holds_a_reservation(cenv: ConflictEnv) -> None:
    rt = await cenv.runtime()
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    dynamic = 'F=out.txt; echo hi > "$F"'
    cenv.sink.answers = [("allow_once", None), ("allow_once", None)]  # the policy asks for such commands
    cenv.server.add([reply(tool_calls=[tool("run_command", {"command": dynamic})]), reply("ok")], session="b")
    rt.submit(b.id, "alone")
    await rt.wait_idle(b.id)
    assert not cenv.sink.of(ev.ConflictDetected)  # nobody holds anything: it just runs

    gate_a = asyncio.Event()
    cenv.server.add(
        [
            reply(tool_calls=[tool("write_file", {"path": "x.txt", "content": "x"})]),
            gated(reply("ok"), gate_a),
        ],
        session="a",
    )
    cenv.server.add([reply(tool_calls=[tool("run_command", {"command": dynamic})]), reply("ok")], session="b")
    cenv.sink.conflict_answers["b"] = ["skip"]
    rt.submit(a.id, "write")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "again")
    await rt.wait_idle(b.id)
    conflict = cenv.sink.of(ev.ConflictDetected, b.id)[0]
    assert conflict.kind == "unknown_targets" and conflict.holder == "a"
    gate_a.set()
    await rt.wait_idle()
    await rt.shutdown()


async def test_cancel_while_held_releases_and_clears_the_conflict(cenv: ConflictEnv) -> None:
    rt = await cenv.runtime()
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    gate_a = asyncio.Event()
    cenv.server.add(
        [
            reply(tool_calls=[tool("write_file", {"path": "n.txt", "content": "A"})]),
            gated(reply("ok"), gate_a),
        ],
        session="a",
    )
    cenv.server.add([reply(tool_calls=[tool("write_file", {"path": "n.txt", "content": "B"})])], session="b")
    rt.submit(a.id, "a")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "b")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ConflictDetected, b.id)))
    assert rt.cancel(b.id)
    await rt.wait_idle(b.id)
    assert [e.answer for e in cenv.sink.of(ev.ConflictResolved, b.id)] == ["cancelled"]
    assert not b.conflicts and b.state is not SessionState.WAITING
    assert (cenv.project / "n.txt").read_text() == "A"
    gate_a.set()
    await rt.wait_idle()
    await rt.shutdown()


async def test_unattended_conflict_waits_its_bound_then_skips_and_says_so(cenv: ConflictEnv) -> None:
    """Without a terminal nobody can answer: after ``unattended_wait`` seconds the call is skipped."""
    rt = await cenv.runtime()
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    rt.conflicts.unattended_wait = 0.05
    gate_a = asyncio.Event()
    cenv.server.add(
        [
            reply(tool_calls=[tool("write_file", {"path": "n.txt", "content": "A"})]),
            gated(reply("ok"), gate_a),
        ],
        session="a",
    )
    cenv.server.add(
        [reply(tool_calls=[tool("write_file", {"path": "n.txt", "content": "B"})]), reply("ok")], session="b"
    )
    rt.submit(a.id, "a")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "b")
    await rt.wait_idle(b.id)
    assert [(e.answer, e.by) for e in cenv.sink.of(ev.ConflictResolved, b.id)] == [("skip", "unattended")]
    assert "no terminal to ask" in cenv.sink.of(ev.ToolCallFinished, b.id)[0].output
    assert (cenv.project / "n.txt").read_text() == "A"
    gate_a.set()
    await rt.wait_idle()
    await rt.shutdown()
