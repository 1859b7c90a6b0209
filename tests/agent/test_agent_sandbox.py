"""The agent and runtime with the command sandbox: auto-allow, "required" without bwrap, the one-time
warning of "auto" without bwrap, the sandboxed flag on events, and /sandbox's runtime calls."""

from __future__ import annotations

import json
import shutil

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.llm.replay import ScriptedResponse
from paragents.sessions import SessionError
from paragents.tools.sandbox import SandboxConfig, check
from tests.runtime_env import Env

MISSING = "/nonexistent/bin/bwrap"
needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None or not check(SandboxConfig()).active,
    reason="bwrap (Debian package bubblewrap) is not installed or cannot create a sandbox here",
)


def command_call(command: str, id: str = "c1") -> ScriptedResponse:
    args = json.dumps({"command": command})
    return ScriptedResponse.from_message(tool_calls=[{"id": id, "name": "run_command", "arguments": args}])


@needs_bwrap
async def test_auto_allow_runs_a_sandboxed_command_without_asking(env: Env) -> None:
    rt = await env.runtime(sandbox={"mode": "required", "autoAllow": True})
    s = await rt.new_session("a")
    env.server.add(command_call("echo hi > made.txt"), session="a")
    env.server.add(ScriptedResponse.from_message(content="done"), session="a")
    rt.submit(s.id, "go")
    await rt.wait_idle(s.id)
    assert env.sink.of(ev.PermissionRequested, s.id) == []
    assert (env.project / "made.txt").read_text() == "hi\n"
    assert [e.sandboxed for e in env.sink.of(ev.ToolCallStarted, s.id)] == [True]
    assert [e.sandboxed for e in env.sink.of(ev.ToolCallFinished, s.id)] == [True]
    decision = (await rt.store.audit.recent(s.id))[0]
    assert decision["answer"] == "allow" and "sandbox.autoAllow" in decision["reason"]
    await rt.shutdown()


@needs_bwrap
async def test_without_auto_allow_the_ask_says_the_command_will_be_sandboxed(env: Env) -> None:
    rt = await env.runtime(sandbox="auto")
    s = await rt.new_session("a")
    env.sink.answers.append(PermissionAnswer("allow_once"))
    env.server.add(command_call("true"), session="a")
    env.server.add(ScriptedResponse.from_message(content="done"), session="a")
    rt.submit(s.id, "go")
    await rt.wait_idle(s.id)
    assert [e.sandboxed for e in env.sink.of(ev.PermissionRequested, s.id)] == [True]
    await rt.shutdown()


async def test_required_without_bwrap_refuses_without_asking(env: Env) -> None:
    rt = await env.runtime(sandbox={"mode": "required", "bwrap": MISSING})
    s = await rt.new_session("a")
    env.server.add(command_call("touch ran"), session="a")
    env.server.add(ScriptedResponse.from_message(content="ok"), session="a")
    rt.submit(s.id, "go")
    await rt.wait_idle(s.id)
    assert env.sink.of(ev.PermissionRequested, s.id) == []
    finished = env.sink.of(ev.ToolCallFinished, s.id)
    assert finished[0].status == "error" and "apt-get install bubblewrap" in finished[0].output
    assert not (env.project / "ran").exists()
    await rt.shutdown()


async def test_auto_without_bwrap_warns_once_and_runs_unconfined(env: Env) -> None:
    rt = await env.runtime(sandbox={"mode": "auto", "bwrap": MISSING})
    s = await rt.new_session("a")
    env.sink.answers.extend([PermissionAnswer("allow_once"), PermissionAnswer("allow_once")])
    env.server.add(command_call("touch one", "c1"), session="a")
    env.server.add(command_call("touch two", "c2"), session="a")
    env.server.add(ScriptedResponse.from_message(content="ok"), session="a")
    rt.submit(s.id, "go")
    await rt.wait_idle(s.id)
    warnings = [n for n in env.sink.of(ev.Notice, s.id) if "unconfined" in n.text]
    assert len(warnings) == 1 and "not found" in warnings[0].text
    assert (env.project / "one").exists() and (env.project / "two").exists()
    assert [e.sandboxed for e in env.sink.of(ev.ToolCallFinished, s.id)] == [False, False]
    await rt.shutdown()


async def test_set_sandbox_switches_the_session_and_the_report_says_so(env: Env) -> None:
    rt = await env.runtime(sandbox={"mode": "required", "bwrap": MISSING})
    s = await rt.new_session("a")
    assert "sandbox mode required" in rt.sandbox_report(s.id) and "install" in rt.sandbox_report(s.id)
    rt.set_sandbox(s.id, "off")
    assert rt.sandbox_report(s.id).startswith("sandbox mode off: commands run unconfined")
    with pytest.raises(SessionError, match="unknown sandbox mode"):
        rt.set_sandbox(s.id, "sometimes")
    await rt.shutdown()
