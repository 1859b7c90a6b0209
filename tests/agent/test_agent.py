"""The agent loop end to end: real Runtime, store, policy and tools against the loopback replay server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.llm.replay import ScriptedResponse
from paragents.models import SessionState
from tests.conftest import shared_fixtures_dir
from tests.runtime_env import Env


def reply(content: str = "", **kw: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=content, **kw)  # type: ignore[arg-type]


def call(name: str, args: dict | str, id: str = "call_1") -> dict:
    return {"id": id, "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}


async def test_text_reply_is_streamed_stored_and_counted(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(
        reply("Hello **there**", usage={"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}),
        session="a",
    )
    rt.submit(s.id, "hi")
    await rt.wait_idle(s.id)
    assert "".join(e.text for e in env.sink.of(ev.TextDelta, s.id)) == "Hello **there**"
    assert s.last_result is not None and s.last_result.status == "completed"
    assert s.usage.total_tokens == 34 and s.context_tokens == 34
    stored = await rt.store.messages.load(s.id)
    assert [m.message["role"] for m in stored] == ["user", "assistant"]
    assert stored[1].message["content"] == "Hello **there**"
    body = env.server.requests[0].body_json
    assert body["stream"] is True and body["model"] == "m"
    assert body["messages"][0]["role"] == "system" and str(env.project) in body["messages"][0]["content"]
    assert {t["function"]["name"] for t in body["tools"]} >= {"read_file", "write_file", "run_command"}
    await rt.shutdown()


async def test_read_tool_runs_and_reasoning_goes_back_with_the_call(env: Env) -> None:
    """A4-t1 follow-up: the next request carries reasoning_content next to tool_calls, then the result."""
    (env.project / "notes.md").write_text("hello")
    rt = await env.runtime()
    s = await rt.new_session("a")
    fixture = json.loads((shared_fixtures_dir() / "sse" / "A4-t1.json").read_text())
    env.server.add_fixture(fixture, session="a")
    env.server.add(reply("It says hello."), session="a")
    rt.submit(s.id, "read notes.md")
    await rt.wait_idle(s.id)
    second = env.server.requests[1].body_json["messages"]
    assistant, tool = second[-2], second[-1]
    assert assistant["reasoning_content"] == "Need the file first."
    assert assistant["tool_calls"][0]["id"] == "call_R"
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_R" and "hello" in tool["content"]
    assert "".join(e.text for e in env.sink.of(ev.ReasoningDelta, s.id)) == "Need the file first."
    await rt.shutdown()


async def test_truncated_arguments_are_never_run_and_the_loop_goes_on(env: Env) -> None:
    """A9-t1: write_file with cut-off JSON gets an error tool message; the file is not written."""
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add_fixture(
        json.loads((shared_fixtures_dir() / "sse" / "A9-t1.json").read_text()), session="a"
    )
    env.server.add(reply("Sorry, retrying later."), session="a")
    rt.submit(s.id, "write it")
    await rt.wait_idle(s.id)
    assert not (env.project / "out.txt").exists()
    tool_msg = env.server.requests[1].body_json["messages"][-1]
    assert tool_msg["tool_call_id"] == "call_J"
    assert "not valid json" in tool_msg["content"].lower() and "finish_reason=length" in tool_msg["content"]
    assert s.last_result is not None and s.last_result.status == "completed"
    await rt.shutdown()


async def test_unknown_tool_and_bad_argument_types_go_back_to_the_model(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(
        reply(tool_calls=[call("get_weather", {"city": "Oslo"}, "c1"), call("read_file", {"path": 5}, "c2")]),
        session="a",
    )
    env.server.add(reply("ok"), session="a")
    rt.submit(s.id, "go")
    await rt.wait_idle(s.id)
    msgs = env.server.requests[1].body_json["messages"]
    results = {m["tool_call_id"]: m["content"] for m in msgs if m["role"] == "tool"}
    assert "get_weather" in results["c1"] and "read_file" in results["c1"]
    assert "path" in results["c2"] and "bad arguments" in results["c2"]
    await rt.shutdown()


async def test_write_asks_and_allow_once_writes_the_file(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.sink.answers.append(PermissionAnswer("allow_once"))
    env.server.add(reply(tool_calls=[call("write_file", {"path": "x.txt", "content": "hi\n"})]), session="a")
    env.server.add(reply("written"), session="a")
    rt.submit(s.id, "write x")
    await rt.wait_idle(s.id)
    asks = env.sink.of(ev.PermissionRequested, s.id)
    assert len(asks) == 1 and "x.txt" in asks[0].summary
    assert (env.project / "x.txt").read_text() == "hi\n"
    decisions = await rt.store.audit.recent(s.id)
    assert decisions[0]["answer"] == "allow_once" and decisions[0]["answered_by"] == "user"
    assert s.pending == {}
    await rt.shutdown()


async def test_deny_with_note_reaches_the_model_and_nothing_is_written(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.sink.answers.append(PermissionAnswer("reject_with_note", note="use y.txt instead"))
    env.server.add(reply(tool_calls=[call("write_file", {"path": "x.txt", "content": "hi"})]), session="a")
    env.server.add(reply("ok"), session="a")
    rt.submit(s.id, "write x")
    await rt.wait_idle(s.id)
    assert not (env.project / "x.txt").exists()
    tool_msg = env.server.requests[1].body_json["messages"][-1]
    assert "use y.txt instead" in tool_msg["content"] and "denied" in tool_msg["content"]
    await rt.shutdown()


async def test_allow_for_session_stops_asking_in_that_session_only(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.sink.answers.append(PermissionAnswer("allow_session"))
    cmd = {"command": "echo one"}
    env.server.add(reply(tool_calls=[call("run_command", cmd, "c1")]), session="a")
    env.server.add(reply(tool_calls=[call("run_command", {"command": "echo two"}, "c2")]), session="a")
    env.server.add(reply("done"), session="a")
    rt.submit(s.id, "echo")
    await rt.wait_idle(s.id)
    assert len(env.sink.of(ev.PermissionRequested, s.id)) == 1
    assert s.session_rules, "allow_session stored no rule"
    outputs = [e.output for e in env.sink.of(ev.ToolCallFinished, s.id)]
    assert "one" in outputs[0] and "two" in outputs[1]
    rec = await rt.store.sessions.get(s.id)
    assert rec is not None and list(rec.session_rules) == s.session_rules
    await rt.shutdown()


async def test_stream_breaking_midway_keeps_partial_text_marked_and_out_of_history(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(
        ScriptedResponse(reads=['data: {"choices":[{"index":0,"delta":{"content":"Partial ans"}}]}\n\n']),
        session="a",
    )
    rt.submit(s.id, "q1")
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.status == "failed"
    assert s.last_result.error_kind == "protocol"
    assert s.state == SessionState.FAILED
    stored = await rt.store.messages.load(s.id)
    assert stored[-1].message["content"] == "Partial ans" and stored[-1].complete is False
    assert s.messages[-1] == {"role": "assistant", "content": "Partial ans", "incomplete": True}
    env.server.add(reply("full answer"), session="a")
    rt.submit(s.id, "q2")
    await rt.wait_idle(s.id)
    sent = env.server.requests[1].body_json["messages"]
    assert all(m.get("content") != "Partial ans" for m in sent)
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    await rt.shutdown()


async def test_cancel_mid_stream_ends_the_turn_cancelled_and_keeps_partial(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(
        ScriptedResponse(
            reads=['data: {"choices":[{"index":0,"delta":{"content":"Working on"}}]}\n\n'], hang=True
        ),
        session="a",
    )
    rt.submit(s.id, "long task")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.TextDelta, s.id)))
    assert rt.cancel(s.id)
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.status == "cancelled"
    finished = env.sink.of(ev.TurnFinished, s.id)
    assert finished[-1].status == "cancelled"
    await env.server.wait_for_client_close(0)
    stored = await rt.store.messages.load(s.id)
    assert stored[-1].message["content"] == "Working on" and not stored[-1].complete
    await rt.shutdown()


async def test_cancel_while_waiting_for_approval_answers_the_call(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(reply(tool_calls=[call("run_command", {"command": "touch z"})]), session="a")
    rt.submit(s.id, "touch")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.PermissionRequested, s.id)))
    assert s.state == SessionState.WAITING and s.pending
    rt.cancel(s.id)
    await rt.wait_idle(s.id)
    assert s.pending == {}
    assert not (env.project / "z").exists()
    history = await rt.store.messages.load_history(s.id)
    assert history[-1]["role"] == "tool" and history[-1]["content"].startswith("cancelled")
    await rt.shutdown()


async def test_two_sessions_stream_concurrently_and_the_cap_queues_a_third(env: Env) -> None:
    rt = await env.runtime(max_parallel_turns=2)
    a = await rt.new_session("a")
    b = await rt.new_session("b")
    c = await rt.new_session("c")
    gate = asyncio.Event()

    async def hold(_i: int) -> None:
        await gate.wait()

    for name in ("a", "b"):
        env.server.add(
            ScriptedResponse(
                reads=[
                    f'data: {{"choices":[{{"index":0,"delta":{{"content":"{name}1 "}}}}]}}\n\n',
                    'data: {"choices":[{"index":0,"delta":{"content":"'
                    + f"{name}2"
                    + '"},"finish_reason":"stop"}]}\n\n',
                    "data: [DONE]\n\n",
                ],
                before_read=lambda i: hold(i) if i == 1 else _noop(),
            ),
            session=name,
        )
    env.server.add(reply("c done"), session="c")
    for v in (a, b, c):
        rt.submit(v.id, "go")
    await env.sink.wait_for(
        lambda: bool(env.sink.of(ev.TextDelta, a.id)) and bool(env.sink.of(ev.TextDelta, b.id))
    )
    assert a.state == SessionState.RUNNING and b.state == SessionState.RUNNING
    assert c.state == SessionState.QUEUED and not env.sink.of(ev.TurnStarted, c.id)
    gate.set()
    await rt.wait_idle()
    assert [m["content"] for m in a.messages if m["role"] == "assistant"] == ["a1 a2"]
    assert c.last_result is not None and c.last_result.status == "completed"
    await rt.shutdown()


async def _noop() -> None:
    return None


async def _one_stored_turn(env: Env) -> None:
    """A session "keep" with one completed turn ("first" -> "first answer"), left open in the store."""
    rt = await env.runtime()
    s = await rt.new_session("keep")
    env.server.add(reply("first answer"), session="keep")
    rt.submit(s.id, "first")
    await rt.wait_idle(s.id)
    await rt.shutdown()


async def test_restart_restores_open_sessions_and_continues_the_history(env: Env) -> None:
    await _one_stored_turn(env)
    rt2 = await env.runtime()
    views = await rt2.restore()
    assert [v.name for v in views] == ["keep"]
    v = views[0]
    assert [m["content"] for m in v.messages] == ["first", "first answer"]
    env.server.add(reply("second answer"), session="keep")
    rt2.submit(v.id, "second")
    await rt2.wait_idle(v.id)
    sent = env.server.requests[-1].body_json["messages"]
    assert [m.get("content") for m in sent[1:]] == ["first", "first answer", "second"]
    await rt2.shutdown()


async def test_a_prompt_submitted_before_restored_history_loads_waits_for_it(env: Env) -> None:
    await _one_stored_turn(env)
    rt2 = await env.runtime()
    views = await rt2.restore_views()  # the TUI's first half: panels before messages
    v = views[0]
    assert v.name == "keep" and v.messages == [] and v.id not in rt2.agents
    env.server.add(reply("second answer"), session="keep")
    rt2.submit(v.id, "second")  # typed into the panel before the history was read
    loaded = await rt2.load_restored()
    assert loaded == [v]
    await rt2.wait_idle(v.id)
    sent = env.server.requests[-1].body_json["messages"]
    assert [m.get("content") for m in sent[1:]] == ["first", "first answer", "second"]
    assert [m["content"] for m in v.messages] == ["first", "first answer", "second", "second answer"]
    await rt2.shutdown()


async def test_clear_starts_a_new_conversation_and_keeps_the_old(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(reply("one"), session="a")
    rt.submit(s.id, "q")
    await rt.wait_idle(s.id)
    await rt.clear_session(s.id)
    assert s.messages == []
    env.server.add(reply("two"), session="a")
    rt.submit(s.id, "q2")
    await rt.wait_idle(s.id)
    assert [m["role"] for m in env.server.requests[-1].body_json["messages"]] == ["system", "user"]
    convs = await rt.store.sessions.conversations(s.id)
    assert len(convs) == 2
    await rt.shutdown()


async def test_agents_md_is_in_the_system_prompt(env: Env) -> None:
    (env.project / "AGENTS.md").write_text("Always answer in French.")
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(reply("Bonjour"), session="a")
    rt.submit(s.id, "hi")
    await rt.wait_idle(s.id)
    system = env.server.requests[0].body_json["messages"][0]["content"]
    assert "Always answer in French." in system and str(env.project / "AGENTS.md") in system
    await rt.shutdown()


def test_fixture_dir_is_present() -> None:
    assert (shared_fixtures_dir() / "sse").is_dir()
    assert Path(__file__).exists()


async def test_a_prompt_far_over_the_context_window_is_refused_locally(env: Env) -> None:
    rt = await env.runtime(models={"m": {"context_window": 2000}})
    s = await rt.new_session("a")
    rt.submit(s.id, "word " * 20000)
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.status == "failed"
    assert s.last_result.error_kind == "context_length"
    assert "context window" in (s.last_result.error or "") and "2,000" in (s.last_result.error or "")
    assert env.server.requests == []
    stored = await rt.store.messages.load(s.id)
    assert stored[0].message["role"] == "user"
    await rt.shutdown()


async def test_an_edit_ask_carries_the_diff_computed_without_running_it(env: Env) -> None:
    (env.project / "app.py").write_text("def f():\n    return 1\n")
    rt = await env.runtime()
    s = await rt.new_session("a")
    edit = {"path": "app.py", "old_string": "return 1", "new_string": "return 2"}
    env.server.add(reply(tool_calls=[call("edit_file", edit)]), session="a")
    env.server.add(reply("edited"), session="a")
    rt.submit(s.id, "edit it")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.PermissionRequested, s.id)))
    (ask,) = env.sink.of(ev.PermissionRequested, s.id)
    assert (env.project / "app.py").read_text() == "def f():\n    return 1\n"  # nothing ran yet
    assert ask.preview is not None and ask.preview.kind == "diff"
    assert "-    return 1\n+    return 2" in ask.preview.text
    assert ask.rule is None  # no rule matched: the default asked
    ask.reply.set_result(PermissionAnswer("reject_once"))
    await rt.wait_idle(s.id)
    await rt.shutdown()


async def test_a_command_ask_carries_the_command_its_cwd_and_the_matching_rule(env: Env) -> None:
    (env.project / "permissions.json").write_text(json.dumps({"permissions": {"ask": ["Bash(rm *)"]}}))
    (env.project / "build").mkdir()
    rt = await env.runtime()
    s = await rt.new_session("a")
    cmd = {"command": "rm -rf out && echo gone", "cwd": "build"}
    env.server.add(reply(tool_calls=[call("run_command", cmd)]), session="a")
    env.server.add(reply("ok"), session="a")
    rt.submit(s.id, "clean")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.PermissionRequested, s.id)))
    (ask,) = env.sink.of(ev.PermissionRequested, s.id)
    assert ask.preview is not None and ask.preview.kind == "command"
    assert ask.preview.text == "rm -rf out && echo gone"
    assert ask.preview.cwd == str((env.project / "build").resolve())
    assert ask.rule == "Bash(rm *)" and ask.rule_scope == "project"
    ask.reply.set_result(PermissionAnswer("reject_once"))
    await rt.wait_idle(s.id)
    await rt.shutdown()


@pytest.mark.parametrize("name", ["café", "漢字テスト", "🚀shop"])
async def test_a_session_with_a_non_ascii_name_runs_its_turn(env: Env, name: str) -> None:
    """Session names may hold any letters and emoji; the name travels in an HTTP header (ASCII only),
    so it is percent-encoded there, and the turn completes (it failed with UnicodeEncodeError)."""
    rt = await env.runtime()
    s = await rt.new_session(name)
    env.server.add(reply("hello"), session=name)  # routed by the decoded header
    rt.submit(s.id, "hi")
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.status.value == "completed", s.last_result
    assert s.messages[-1]["content"] == "hello"
    await rt.shutdown()


async def test_an_internal_error_fails_the_turn_row_and_the_session_state(env: Env) -> None:
    """A bug that escapes the turn loop ends the turn as failed (store row and panel state), never a
    session that shows "running" forever."""
    rt = await env.runtime()
    s = await rt.new_session("a")
    agent = rt.agents[s.id]

    async def broken(prompt: str) -> None:
        agent.record.turn_id = await rt.store.turns.start(s.id, prompt)
        raise RuntimeError("boom")

    agent.run_turn = broken  # type: ignore[method-assign,assignment]
    rt.submit(s.id, "hi")
    await rt.wait_idle(s.id)
    assert s.state.value == "failed"
    states = [e.state.value for e in env.sink.of(ev.SessionStateChanged, s.id)]
    assert states[-1] == "failed"
    assert s.last_result is not None and s.last_result.error_kind == "internal"
    turns = await rt.store.turns.all(s.id)
    assert turns[-1].status == "failed"
    await rt.shutdown()
