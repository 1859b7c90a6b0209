"""Session and project notes in the system prompt (across restarts), the remember tool under the
permission policy, /memory, and /fork."""

from __future__ import annotations

import json

from paragents.events import PermissionAnswer
from paragents.llm.replay import ScriptedResponse
from paragents.ui.core.commands import SlashCommand, parse_command
from tests.chat_requests import assert_valid_request, turn_requests
from tests.runtime_env import Env


def say(text: str) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=text)


async def test_notes_reach_the_system_prompt_and_survive_a_restart(env: Env) -> None:
    (env.project / "AGENTS.md").write_text("Use tabs.\n")
    rt = await env.runtime()
    a = await rt.lifecycle.new_session("a")
    b = await rt.lifecycle.new_session("b")
    await rt.memory.remember(a.id, "only for a")
    await rt.memory.remember(a.id, "shared decision", project=True)
    await rt.shutdown()

    rt2 = await env.runtime()
    views = {v.name: v for v in await rt2.opening.restore()}
    env.server.add(say("ok"), session="a")
    env.server.add(say("ok"), session="b")
    rt2.submit(views["a"].id, "hi")
    await rt2.wait_idle(views["a"].id)
    rt2.submit(views["b"].id, "hi")
    await rt2.wait_idle(views["b"].id)
    by_session = {r.session: r.body_json["messages"][0]["content"] for r in env.server.requests}
    assert "only for a" in by_session["a"] and "shared decision" in by_session["a"]
    assert "only for a" not in by_session["b"] and "shared decision" in by_session["b"]
    assert "user@a" in by_session["b"]  # who wrote the project note

    report = await rt2.memory.memory(views["a"].id)
    kinds = [row[0] for row in report.rows()]
    assert kinds == ["instructions", "session note", "project note"]
    assert report.rows()[0][1] == str(env.project / "AGENTS.md")
    await rt2.shutdown()
    assert views["b"].id == b.id


async def test_remember_tool_asks_then_stores_a_session_note(env: Env) -> None:
    rt = await env.runtime()
    view = await rt.lifecycle.new_session("a")
    args = json.dumps({"text": "the API lives in api/"})
    env.server.add(
        [
            ScriptedResponse.from_message(tool_calls=[{"id": "r1", "name": "remember", "arguments": args}]),
            say("noted"),
        ],
        session="a",
    )
    env.sink.answers.append(PermissionAnswer("allow_once"))
    rt.submit(view.id, "remember where the API is")
    await rt.wait_idle(view.id)
    report = await rt.memory.memory(view.id)
    assert [(n.text, n.author) for n in report.session_notes] == [("the API lives in api/", "agent@a")]
    second = env.server.requests[-1].body_json
    assert "the API lives in api/" in second["messages"][0]["content"]
    assert_valid_request(second)
    await rt.shutdown()


async def test_fork_copies_history_and_compaction(env: Env) -> None:
    rt = await env.runtime(default_context_window=32768)
    view = await rt.lifecycle.new_session("a")
    for prompt in ("q0", "q1", "q2"):
        env.server.add(say(f"answer {prompt}"), session="a")
        rt.submit(view.id, prompt)
        await rt.wait_idle(view.id)
    env.server.add(say("SUMMARY-F"), session="a/compact")
    assert (await rt.memory.compact(view.id)).ok
    await rt.memory.remember(view.id, "fork me too")

    fork = await rt.lifecycle.fork(view.id)
    assert fork.name == "a-fork" and fork.id != view.id
    assert rt.agents[fork.id].record.history == rt.agents[view.id].record.history
    env.server.add(say("forked answer"), session="a-fork")
    rt.submit(fork.id, "q3 in the fork")
    await rt.wait_idle(fork.id)
    body = turn_requests(env.server)[-1]
    assert_valid_request(body)
    assert "SUMMARY-F" in body["messages"][0]["content"] and "fork me too" in body["messages"][0]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "q3 in the fork"}
    assert len(await rt.store.messages.load(view.id)) == 6  # the original is untouched
    await rt.shutdown()


def test_memory_commands_parse() -> None:
    assert parse_command("/compact keep the API plan") == SlashCommand("compact", "keep the API plan")
    assert parse_command("/compact") == SlashCommand("compact", None)
    assert parse_command("/remember --project use uv") == SlashCommand("remember", "use uv", {"project": "1"})
    assert parse_command("/remember use uv") == SlashCommand("remember", "use uv", {})
    assert "needs the note text" in getattr(parse_command("/remember --project"), "message", "")
    assert parse_command("/fork try-b") == SlashCommand("fork", "try-b")
    assert parse_command("/memory") == SlashCommand("memory")


async def test_fork_mid_turn_copies_the_finished_exchanges_only(env: Env) -> None:
    import asyncio

    from paragents import events as ev
    from tests.scripted import gated

    rt = await env.runtime(default_context_window=32768)
    view = await rt.lifecycle.new_session("a")
    env.server.add(say("answer q0"), session="a")
    rt.submit(view.id, "q0")
    await rt.wait_idle(view.id)
    gate = asyncio.Event()
    env.server.add(gated("a slow answer", gate), session="a")
    rt.submit(view.id, "q1 still running")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.TextDelta, view.id)))
    fork = await rt.lifecycle.fork(view.id)  # mid-turn: q1 has no reply yet
    gate.set()
    await rt.wait_idle(view.id)
    env.server.add(say("forked answer"), session="a-fork")
    rt.submit(fork.id, "q2 in the fork")
    await rt.wait_idle(fork.id)
    body = turn_requests(env.server)[-1]
    assert_valid_request(body)
    roles = [m["role"] for m in body["messages"][1:]]
    assert roles == ["user", "assistant", "user"], roles  # never two user messages in a row
    assert [m["content"] for m in body["messages"][1:]] == ["q0", "answer q0", "q2 in the fork"]
    notes = [n.text for n in env.sink.of(ev.Notice, fork.id)]
    assert any("its running turn was not" in n for n in notes), notes
    await rt.shutdown()
