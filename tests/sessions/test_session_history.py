"""What a session's history holds stays true across processes: a stale in-memory copy reloads before
it writes (a real second process appends meanwhile), a write refused mid-turn ends the turn with
``error_kind`` "store" and loses nothing, and restored tool results carry their real outcome."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.llm.replay import ScriptedResponse
from paragents.sessions import SessionError
from paragents.sessions.runtime import Runtime
from paragents.store import INTERRUPTED_RESULT
from tests.faults.tally import record
from tests.patience import HANG_GUARD_S
from tests.runtime_env import Env

WRITER = Path(__file__).resolve().parents[1] / "store" / "store_child_writer.py"


def reply(content: str = "", **kw: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=content, **kw)  # type: ignore[arg-type]


def call(name: str, args: dict, id: str) -> dict:
    return {"id": id, "name": name, "arguments": json.dumps(args)}


def other_process_appends(db: Path, sid: str, prefix: str, count: int) -> list[int]:
    """Append ``count`` user messages "<prefix>-i" from a real second process; return their ids."""
    out = subprocess.run(
        [sys.executable, str(WRITER), str(db), sid, prefix, str(count)],
        capture_output=True, text=True, timeout=HANG_GUARD_S, check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )  # fmt: skip
    lines = out.stdout.split()
    assert lines[0] == "ready"
    return [int(x) for x in lines[1:]]


async def deny_rm_runtime(env: Env) -> Runtime:
    cfg = {"base_url": env.server.base_url, "model": "m", "max_retries": 0}
    rt = await Runtime.create(
        env.project, cli_overrides=cfg, db_path=env.db, cli_rules={"deny": ["Bash(rm *)"]}
    )
    rt.set_sink(env.sink)
    return rt


async def test_a_stale_copy_reloads_before_it_appends_and_nothing_is_lost_or_reordered(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.lifecycle.new_session("a")
    env.server.add(reply("first answer"), session="a")
    rt.submit(s.id, "q1")
    await rt.wait_idle(s.id)
    ids = other_process_appends(env.db, s.id, "elsewhere", 2)
    env.server.add(reply("second answer"), session="a")
    rt.submit(s.id, "q2")
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.status == "completed"
    sent = [(m["role"], m["content"]) for m in env.server.requests[1].body_json["messages"][1:]]
    assert sent == [
        ("user", "q1"), ("assistant", "first answer"), ("user", "elsewhere-0"), ("user", "elsewhere-1"),
        ("user", "q2"),
    ]  # fmt: skip
    stored = await rt.store.messages.load(s.id)
    assert [m.message["content"] for m in stored] == [
        "q1", "first answer", "elsewhere-0", "elsewhere-1", "q2", "second answer",
    ]  # fmt: skip
    assert [m.id for m in stored][2:4] == ids
    assert any("changed in another process" in n.text for n in env.sink.of(ev.Notice, s.id))
    assert [m.get("content") for m in s.messages][2:4] == ["elsewhere-0", "elsewhere-1"]
    await rt.shutdown()


async def test_a_write_refused_mid_turn_fails_the_turn_as_store_and_keeps_the_other_writes(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.lifecycle.new_session("a")
    env.server.add(
        reply(tool_calls=[call("write_file", {"path": "f.txt", "content": "x"}, "c1")]), session="a"
    )
    rt.submit(s.id, "write it")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.PermissionRequested, s.id)))
    other_process_appends(env.db, s.id, "taken", 1)  # another process wrote while the ask waited
    env.sink.of(ev.PermissionRequested, s.id)[0].reply.set_result(PermissionAnswer("allow_once"))
    await rt.wait_idle(s.id)
    result = s.last_result
    assert result is not None and result.status == "failed" and result.error_kind == "store"
    assert "another process wrote to this session" in (result.error or "")
    (finished,) = env.sink.of(ev.TurnFinished, s.id)
    assert finished.error_kind == "store"
    stored = await rt.store.messages.load(s.id)
    contents = [m.message.get("content") for m in stored]
    # nothing lost or reordered: the finished call's result stays right after its call (not
    # discarded as "interrupted"), then what the other process wrote
    assert len(contents) == 4 and contents[:2] == ["write it", ""] and contents[3] == "taken-0"
    assert (
        stored[2].role == "tool" and stored[2].outcome == "ok" and stored[2].message["tool_call_id"] == "c1"
    )
    assert INTERRUPTED_RESULT not in contents
    assert (env.project / "f.txt").read_text() == "x"
    assert (await rt.store.turns.all(s.id))[-1].status == "failed"
    await rt.shutdown()


async def test_restored_tool_results_show_ok_error_denied_cancelled_and_interrupted(env: Env) -> None:
    (env.project / "here.txt").write_text("present")
    rt = await deny_rm_runtime(env)
    s = await rt.lifecycle.new_session("a")
    env.server.add(
        reply(
            tool_calls=[
                call("read_file", {"path": "here.txt"}, "c_ok"),
                call("read_file", {"path": "missing.txt"}, "c_err"),
                call("run_command", {"command": "rm -rf /"}, "c_deny"),
            ]
        ),
        session="a",
    )
    env.server.add(reply("done"), session="a")
    rt.submit(s.id, "three calls")
    await rt.wait_idle(s.id)
    env.server.add(
        reply(tool_calls=[call("write_file", {"path": "w.txt", "content": "x"}, "c_cancel")]), session="a"
    )
    rt.submit(s.id, "ask then cancel")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.PermissionRequested, s.id)))
    rt.cancel(s.id)
    await rt.wait_idle(s.id)
    crashed = {"id": "c_crash", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    await rt.store.messages.append(s.id, {"role": "assistant", "content": "", "tool_calls": [crashed]})
    await rt.shutdown()  # a process that stopped with the call unanswered

    again = await deny_rm_runtime(env)
    (view,) = await again.opening.restore()
    outcomes = {m["tool_call_id"]: m["outcome"] for m in view.messages if m["role"] == "tool"}
    expected = {
        "c_ok": "ok", "c_err": "error", "c_deny": "denied", "c_cancel": "cancelled", "c_crash": "interrupted",
    }  # fmt: skip
    wrong = sum(outcomes.get(k) != v for k, v in expected.items())
    record("restored tool outcomes after a restart (5 kinds)", recovered=not wrong, runs=len(expected))
    assert outcomes == expected
    crash_result = next(m for m in view.messages if m.get("tool_call_id") == "c_crash")
    assert crash_result["content"] == INTERRUPTED_RESULT
    sent_history = again.agents[view.id].record.history
    assert all("outcome" not in m for m in sent_history)  # the outcome is never sent to the model
    await again.shutdown()


async def test_a_session_held_by_a_live_process_opens_read_only_until_the_user_takes_it_over(
    env: Env,
) -> None:
    rt = await env.runtime()
    s = await rt.lifecycle.new_session("a")
    await rt.shutdown()
    holder = subprocess.Popen(
        [sys.executable, str(WRITER.with_name("store_child_holder.py")), str(env.db), s.id],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        tui = await env.runtime()
        (view,) = await tui.opening.restore()
        assert (
            view.read_only and f"held by pid {holder.pid}" in view.read_only and "/takeover" in view.read_only
        )
        assert any(f"held by pid {holder.pid}" in note for note in tui.notes)
        assert any(f"held by pid {holder.pid}" in n.text for n in env.sink.of(ev.Notice, view.id))
        with pytest.raises(SessionError, match="read-only"):
            tui.submit(view.id, "refused")
        await tui.lifecycle.take_over(view.id)  # the user confirmed
        assert view.read_only is None
        holder_row = await tui.store.holders.get(view.id)
        assert holder_row is not None and holder_row.pid == os.getpid()
        env.server.add(reply("after the take-over"), session="a")
        tui.submit(view.id, "now it runs")
        await tui.wait_idle(view.id)
        assert view.last_result is not None and view.last_result.status == "completed"

        # another process takes it back: the next heartbeat makes it read-only here again
        await tui.store.holders.acquire(view.id, take_over=True, pid=holder.pid)
        assert await tui.holding.check_holds() == [view.id]
        assert view.read_only and "taken over by another process" in view.read_only
        await tui.shutdown()
    finally:
        holder.kill()
        holder.communicate(timeout=HANG_GUARD_S)


async def test_a_fork_keeps_the_outcome_of_each_tool_result(env: Env) -> None:
    """/fork copied denied calls as succeeded (the provider-ready history has no outcomes); the copy
    shows and stores the source's outcomes, also after a restart. Found by a fresh-user test."""
    (env.project / "here.txt").write_text("present")
    rt = await deny_rm_runtime(env)
    s = await rt.lifecycle.new_session("a")
    env.server.add(
        reply(
            tool_calls=[
                call("read_file", {"path": "here.txt"}, "c_ok"),
                call("run_command", {"command": "rm -rf /"}, "c_deny"),
            ]
        ),
        session="a",
    )
    env.server.add(reply("done"), session="a")
    rt.submit(s.id, "two calls")
    await rt.wait_idle(s.id)
    fork = await rt.lifecycle.fork(s.id, "b")
    shown = {m["tool_call_id"]: m.get("outcome") for m in fork.messages if m["role"] == "tool"}
    assert shown == {"c_ok": "ok", "c_deny": "denied"}
    await rt.shutdown()
    again = await deny_rm_runtime(env)
    views = {v.name: v for v in await again.opening.restore()}
    stored = {m["tool_call_id"]: m["outcome"] for m in views["b"].messages if m["role"] == "tool"}
    assert stored == {"c_ok": "ok", "c_deny": "denied"}
    await again.shutdown()


async def test_a_reopened_fork_keeps_the_context_it_copied(env: Env) -> None:
    """Fresh-user finding: a fork's header said `ctx 0%` after a restart though it carries the copied
    history (its prompt size was shown only until then, never stored)."""
    rt = await env.runtime()
    s = await rt.lifecycle.new_session("a")
    env.server.add(reply("the answer"), session="a")
    rt.submit(s.id, "hello")
    await rt.wait_idle(s.id)
    assert s.context_tokens > 0
    fork = await rt.lifecycle.fork(s.id, "b")
    assert fork.context_tokens == s.context_tokens
    await rt.shutdown()
    again = await env.runtime()
    views = {v.name: v for v in await again.opening.restore()}
    assert views["b"].context_tokens == s.context_tokens
    await again.shutdown()
