"""MCP in real sessions: a Runtime against the loopback replay server (the scripted model calls
``mcp__demo__*``) with the demo server as a real stdio subprocess shared by the sessions."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.llm.replay import ScriptedResponse
from paragents.sessions.runtime import Runtime
from tests.mcp.conftest import DEMO, Env, demo_stdio
from tests.mcp.processes import alive, wait_exited
from tests.patience import HANG_GUARD_S

TIMEOUT = HANG_GUARD_S
"""Seconds a turn may take here (the demo server imports the SDK: slow on a loaded machine)."""


def call(name: str, args: dict[str, Any], cid: str = "c1") -> ScriptedResponse:
    return ScriptedResponse.from_message(
        tool_calls=[{"id": cid, "name": f"mcp__demo__{name}", "arguments": json.dumps(args)}]
    )


def done(text: str = "done") -> ScriptedResponse:
    return ScriptedResponse.from_message(content=text)


async def runtime(env: Env, **server: Any) -> Runtime:
    return await env.runtime(mcp={"servers": {"demo": demo_stdio(**server)}})


async def turn(rt: Runtime, sid: str, text: str = "go") -> None:
    rt.submit(sid, text)
    await asyncio.wait_for(rt.wait_idle(sid), TIMEOUT)


def tool_results(env: Env, sid: str) -> list[tuple[str, str]]:
    return [(e.status, e.output) for e in env.sink.of(ev.ToolCallFinished, sid)]


async def test_two_sessions_share_one_server_process(env: Env) -> None:
    rt = await runtime(env)
    a = await rt.lifecycle.new_session("a")
    b = await rt.lifecycle.new_session("b")
    for name in ("a", "b"):
        env.server.add([call("add", {"a": 2, "b": 3}), call("pid", {}, "c2"), done()], session=name)
    env.sink.answers = [
        PermissionAnswer("allow_once"),
        PermissionAnswer("allow_once"),
    ]  # pid is unlisted: it asks
    await asyncio.gather(turn(rt, a.id), turn(rt, b.id))
    results_a, results_b = tool_results(env, a.id), tool_results(env, b.id)
    assert results_a[0] == ("ok", "5") and results_b[0] == ("ok", "5")  # readOnlyHint: no ask
    pid_a, pid_b = results_a[1][1], results_b[1][1]
    assert pid_a == pid_b  # one server process served both sessions
    [row] = rt.mcp_pool.status()
    assert row.pid == int(pid_a) and set(row.users) == {a.id, b.id} and row.state == "running"
    asks = env.sink.of(ev.PermissionRequested)
    assert [r.call.name for r in asks] == ["mcp__demo__pid", "mcp__demo__pid"]
    report = rt.mcp.mcp_report(a.id)  # /mcp
    top = report.rows[0]
    assert top[0].startswith("demo (user, stdio, shared)") and top[1] == "running" and top[2] == pid_a
    assert top[5] == "a, b" and top[3].endswith("MB") and top[6].endswith("%)")
    assert any(r[1] == "stderr" and "Processing request" in r[7] for r in report.rows)  # its log tail
    assert (
        report.summary[0].startswith(f"MCP demo: running, pid {pid_a}")
        and "used by a, b" in report.summary[0]
    )
    memory = await rt.memory.memory(a.id)  # /memory counts the schemas' tokens
    assert memory.mcp_tokens["demo"] == int(top[6].split()[0])
    assert any(k == "mcp tools" and w == "demo" for k, w, _t in memory.rows())
    await rt.shutdown()
    assert not alive(int(pid_a))  # stopped with the runtime


async def test_mcp_offers_to_disable_unused_tools_of_a_costly_server(env: Env) -> None:
    rt = await env.runtime(
        mcp={"servers": {"demo": demo_stdio()}, "context_share": 0.05}, models={"m": {"context_window": 6000}}
    )
    s = await rt.lifecycle.new_session("s")
    env.server.add([call("add", {"a": 1, "b": 1}), done()], session="s")
    await turn(rt, s.id)
    assert tool_results(env, s.id) == [("ok", "2")]
    [offer] = [n for n in rt.mcp.mcp_report(s.id).notes if "disabledTools" in n]
    assert "'demo' tool schemas cost" in offer and '"echo"' in offer and '"add"' not in offer  # add was used
    await rt.shutdown()


async def test_scope_session_gives_each_session_its_own_process(env: Env) -> None:
    rt = await runtime(env, scope="session")
    a = await rt.lifecycle.new_session("a")
    b = await rt.lifecycle.new_session("b")
    for name in ("a", "b"):
        env.server.add([call("pid", {}), done()], session=name)
    env.sink.answers = [PermissionAnswer("allow_once"), PermissionAnswer("allow_once")]
    await asyncio.gather(turn(rt, a.id), turn(rt, b.id))
    pids = {tool_results(env, sid)[0][1] for sid in (a.id, b.id)}
    assert len(pids) == 2
    rows = rt.mcp_pool.status()
    assert sorted(r.users for r in rows) == sorted([(a.id,), (b.id,)])
    own = rt.mcp_pool.handles[("demo", a.id)]
    await rt.lifecycle.close_session(a.id)  # its own server stops with it
    await own.stop()  # joins the stop the close started
    assert not alive(int(tool_results(env, a.id)[0][1]))
    assert [r.users for r in rt.mcp_pool.status()] == [(b.id,)]
    await rt.shutdown()


async def test_an_unlisted_tool_asks_with_server_description_and_arguments(env: Env) -> None:
    rt = await runtime(env)
    s = await rt.lifecycle.new_session("s")
    env.server.add([call("echo", {"text": "hello"}), done()], session="s")
    env.sink.answers = [PermissionAnswer("reject_once")]
    await turn(rt, s.id)
    [ask] = env.sink.of(ev.PermissionRequested, s.id)
    assert ask.call.name == "mcp__demo__echo" and ask.preview is not None
    assert "MCP server: demo" in ask.preview.text and "Return the text unchanged." in ask.preview.text
    assert '"text": "hello"' in ask.preview.text
    assert tool_results(env, s.id)[0][0] == "denied"
    await rt.shutdown()


async def test_disabled_tools_are_not_in_the_request_body(env: Env) -> None:
    rt = await runtime(env, disabledTools=["echo", "w*"])
    s = await rt.lifecycle.new_session("s")
    env.server.add(done(), session="s")
    await turn(rt, s.id)
    body = env.server.requests[-1].body_json
    names = [t["function"]["name"] for t in body["tools"]]
    assert "mcp__demo__add" in names and "read_file" in names
    assert "mcp__demo__echo" not in names and "mcp__demo__wipe" not in names
    assert "mcp__demo__bad" not in names  # invalid schema: never sent
    await rt.shutdown()


async def test_tool_timeout_is_a_tool_error_and_the_turn_goes_on(env: Env) -> None:
    rt = await runtime(env, toolTimeout=1)
    s = await rt.lifecycle.new_session("s")
    env.server.add([call("slow", {"seconds": 60}), done("after")], session="s")
    env.sink.answers = [PermissionAnswer("allow_once")]
    await turn(rt, s.id)
    [(outcome, content)] = tool_results(env, s.id)
    assert outcome == "error" and "toolTimeout" in content and "'demo'" in content
    assert s.last_result is not None and s.last_result.status == "completed"
    await rt.shutdown()


async def test_a_killed_server_is_restarted_and_the_next_call_works(env: Env) -> None:
    rt = await runtime(env)
    s = await rt.lifecycle.new_session("s")
    env.server.add([call("add", {"a": 1, "b": 1}), done()], session="s")
    await turn(rt, s.id)
    [row] = rt.mcp_pool.status()
    assert row.pid is not None
    os.kill(row.pid, signal.SIGKILL)
    await asyncio.to_thread(wait_exited, row.pid)  # gone before the next call (else it is mid-call)
    env.server.add([call("add", {"a": 20, "b": 22}, "c2"), done()], session="s")
    await turn(rt, s.id)
    assert tool_results(env, s.id)[-1] == ("ok", "42")
    [after] = rt.mcp_pool.status()
    assert after.pid not in (None, row.pid) and after.restarts == 1
    assert after.last_error is not None and "demo" in after.last_error
    top = rt.mcp.mcp_report(s.id).rows[0]  # /mcp shows the new process and why the old one went
    assert top[2] == str(after.pid) and top[7] == "last error: MCP server 'demo' exited with code -9"
    await rt.shutdown()


async def test_a_crash_mid_call_is_a_tool_error_never_a_hang(env: Env) -> None:
    rt = await runtime(env)
    s = await rt.lifecycle.new_session("s")
    env.server.add([call("crash", {}), call("add", {"a": 1, "b": 2}, "c2"), done()], session="s")
    env.sink.answers = [PermissionAnswer("allow_once")]
    await turn(rt, s.id)
    (o1, c1), (o2, c2) = tool_results(env, s.id)
    assert o1 == "error" and "MCP server 'demo' stopped during the call" in c1
    assert (o2, c2) == ("ok", "3")  # restarted for the next call
    await rt.shutdown()


async def test_an_untrusted_project_server_asks_before_it_starts(env: Env) -> None:
    (env.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"demo": demo_stdio()}}), encoding="utf-8"
    )
    rt = await env.runtime()
    s = await rt.lifecycle.new_session("s")
    env.server.add([call("add", {"a": 1, "b": 2}), done()], session="s")
    seen: list[tuple[str, int]] = []

    def answer(event: ev.Event) -> None:
        if isinstance(event, ev.PermissionRequested):
            seen.append((event.call.name, len(rt.mcp_pool.handles)))
            event.reply.set_result(PermissionAnswer("allow_always"))

    rt.observers.append(answer)
    await turn(rt, s.id)
    assert seen == [("mcp__demo", 0)]  # asked first, nothing started yet
    [ask] = env.sink.of(ev.PermissionRequested, s.id)
    assert ask.preview is not None and str(DEMO) in ask.preview.text
    assert tool_results(env, s.id) == [("ok", "MCP server 'demo' may start"), ("ok", "3")]
    assert not (env.project / ".paragents" / "permissions.local.json").exists()  # kept outside the project
    assert rt.mcp_pool.entries["demo"].trust == "unknown"  # until the entries are read again:
    await rt.mcp_pool.reconfigure(rt.config.mcp)
    assert rt.mcp_pool.entries["demo"].trust == "trusted"
    await rt.shutdown()


async def test_a_missing_command_and_a_silent_server_give_one_message_each(env: Env) -> None:
    servers = {
        "ghost": {"command": "no-such-mcp-server-xyz"},
        "mute": demo_stdio(args=[str(DEMO), "hang"], startupTimeout=1),
    }
    rt = await env.runtime(mcp={"servers": servers})
    s = await rt.lifecycle.new_session("s")
    env.server.add(done(), session="s")
    await turn(rt, s.id)
    notes = [n.text for n in env.sink.of(ev.Notice, s.id)]
    assert any("'ghost'" in n and "not found" in n for n in notes)
    assert any("'mute'" in n and "startupTimeout" in n for n in notes)
    assert s.last_result is not None and s.last_result.status == "completed"
    states = {r.name: r.state for r in rt.mcp_pool.status()}
    assert states == {"ghost": "failed", "mute": "failed"}
    await rt.shutdown()


async def test_an_invalid_mcp_json_is_one_message_naming_the_file(env: Env) -> None:
    (env.project / ".mcp.json").write_text("{not json", encoding="utf-8")
    rt = await env.runtime()
    assert any(".mcp.json" in n and "not valid JSON" in n for n in rt.notes)
    s = await rt.lifecycle.new_session("s")
    env.server.add(done(), session="s")
    await turn(rt, s.id)
    assert s.last_result is not None and s.last_result.status == "completed"
    await rt.shutdown()


async def test_a_10_mb_result_over_stdio_is_capped(tmp_path: Path) -> None:
    """The stdio transport assembles a 10 MB line from many reads; the result is capped."""
    from paragents.config import McpSettings
    from paragents.mcp import McpPool
    from paragents.tools.base import ToolContext

    pool = McpPool(
        tmp_path, McpSettings.model_validate({"servers": {"demo": demo_stdio()}}), log_dir=tmp_path
    )
    mine = pool.for_session("s1")
    await asyncio.wait_for(mine.prepare(), TIMEOUT)
    ctx = ToolContext(workdir=tmp_path, max_output_chars=30000)
    result = await asyncio.wait_for(mine.tools["mcp__demo__big"].run({"size": 10_000_000}, ctx), TIMEOUT)
    assert not result.is_error and len(result.content) <= 30000
    assert "[... 99" in result.content and "chars omitted ...]" in result.content
    await pool.shutdown()
