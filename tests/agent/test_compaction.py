"""Compaction against a scripted model: what the replay server received before and after."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from paragents import events as ev
from paragents.agent.compaction import SUMMARY_HEADER, build_request, choose_cut, valid_cuts
from paragents.events import PermissionAnswer
from paragents.llm.replay import ScriptedResponse
from paragents.sessions.runtime import Runtime
from tests.chat_requests import assert_valid_request, is_summary_request, turn_requests
from tests.patience import HANG_GUARD_S
from tests.runtime_env import Env


def say(text: str) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=text)


async def until(predicate: Callable[[], bool], limit: int = 1000) -> None:
    """Yield to the event loop until ``predicate`` holds (no timing involved)."""
    for _ in range(limit):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


async def turns(rt: Runtime, env: Env, sid: str, prompts: list[str], session: str = "a") -> None:
    for prompt in prompts:
        env.server.add(say(f"answer to {prompt}"), session=session)
        rt.submit(sid, prompt)
        await rt.wait_idle(sid)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def answer(text: str) -> dict:
    return {"role": "assistant", "content": f"answer to {text}"}


async def test_summary_replaces_the_oldest_messages_in_requests_only(env: Env) -> None:
    rt = await env.runtime(default_context_window=32768)  # room to keep the last two turns
    view = await rt.lifecycle.new_session("a")
    await turns(rt, env, view.id, ["q0 build the parser", "q1", "q2"])
    env.server.add(say("SUMMARY-1: parser task, nothing decided yet"), session="a/compact")
    outcome = await rt.memory.compact(view.id, "focus on the parser")
    assert outcome.ok and outcome.replaced == 2

    summary_request = env.server.requests[3]
    assert is_summary_request(summary_request) and "tools" not in summary_request.body_json
    sys_text, user_text = (m["content"] for m in summary_request.body_json["messages"])
    assert "focus on the parser" in sys_text
    assert "q0 build the parser" in user_text and "answer to q0" in user_text and "q1" not in user_text

    await turns(rt, env, view.id, ["q3"])
    body = turn_requests(env.server)[-1]
    assert_valid_request(body)
    system = body["messages"][0]["content"]
    assert SUMMARY_HEADER in system and "SUMMARY-1" in system and "q0 build the parser" in system
    kept = [user("q1"), answer("q1"), user("q2"), answer("q2"), user("q3")]
    assert body["messages"][1:] == kept
    # the store and the transcript keep every message
    stored = [m.message for m in await rt.store.messages.load(view.id)]
    assert stored[:2] == [user("q0 build the parser"), answer("q0 build the parser")]
    assert len(stored) == 8 and len(view.messages) == 8
    compacted = env.sink.of(ev.Compacted, view.id)
    assert [(c.replaced, c.covered) for c in compacted] == [(2, 2)]
    await rt.shutdown()


def _history_with_batches() -> list[dict]:
    def call(cid: str) -> dict:
        return {"id": cid, "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}

    return [
        user("start"),
        {"role": "assistant", "content": "", "tool_calls": [call("a1"), call("a2"), call("a3")]},
        {"role": "tool", "tool_call_id": "a1", "content": "x" * 300},
        {"role": "tool", "tool_call_id": "a2", "content": "y" * 300},
        {"role": "tool", "tool_call_id": "a3", "content": "z" * 300},
        {"role": "assistant", "content": "", "tool_calls": [call("b1")]},
        {"role": "tool", "tool_call_id": "b1", "content": "w" * 300},
        {"role": "assistant", "content": "done"},
        user("next"),
        {"role": "assistant", "content": "", "tool_calls": [call("c1"), call("c2")]},
        {"role": "tool", "tool_call_id": "c1", "content": "v" * 300},
        {"role": "tool", "tool_call_id": "c2", "content": "u" * 300},
    ]


def test_a_cut_never_splits_a_tool_pair_or_a_parallel_batch() -> None:
    history = _history_with_batches()
    assert valid_cuts(history) == [1, 5, 7, 8, 9]
    seen = set()
    for keep in range(0, 1200, 5):
        for turns_kept in (0, 1, 2):
            cut = choose_cut(history, 0, keep, 10_000, turns_kept)
            assert cut is not None and history[cut]["role"] != "tool"
            seen.add(cut)
            from paragents.agent.compaction import CompactionState

            request = build_request("sys", history, CompactionState("S", cut, "start"), 10_000)
            assert_valid_request({"messages": request})
    assert len(seen) > 2  # the budget really moves the cut across the batches


def test_no_cut_after_start_means_nothing_to_compact() -> None:
    history = _history_with_batches()
    assert choose_cut(history, 9, 0, 10_000) is None


async def test_compaction_asked_during_a_tool_call_waits_for_the_results(env: Env) -> None:
    rt = await env.runtime()
    view = await rt.lifecycle.new_session("a")
    await turns(rt, env, view.id, ["q0", "q1"])
    args = json.dumps({"path": "out.txt", "content": "hi"})
    env.server.add(
        [
            ScriptedResponse.from_message(tool_calls=[{"id": "w1", "name": "write_file", "arguments": args}]),
            say("written"),
        ],
        session="a",
    )
    env.server.add(say("SUMMARY-W"), session="a/compact")
    rt.submit(view.id, "write the file")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.PermissionRequested, view.id)))
    task = asyncio.create_task(rt.memory.compact(view.id))
    await until(lambda: bool(rt.agents[view.id].compactions.waiters))
    assert not task.done()
    assert not any(is_summary_request(r) for r in env.server.requests)  # nothing sent mid-call

    env.sink.of(ev.PermissionRequested, view.id)[0].reply.set_result(PermissionAnswer("allow_once"))
    outcome = await asyncio.wait_for(task, HANG_GUARD_S)
    await rt.wait_idle(view.id)
    assert outcome.ok
    kinds = [type(e) for e in env.sink.events if e.session_id == view.id]
    assert kinds.index(ev.ToolCallFinished) < kinds.index(ev.Compacted)
    summary_at = next(i for i, r in enumerate(env.server.requests) if is_summary_request(r))
    after = env.server.requests[summary_at + 1].body_json
    assert_valid_request(after)
    assert after["messages"][-2:][0]["role"] == "assistant"  # the call and its result stayed together
    assert after["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "w1",
        "content": after["messages"][-1]["content"],
    }
    assert (env.project / "out.txt").read_text() == "hi"
    await rt.shutdown()


async def test_a_failing_compaction_changes_nothing(env: Env) -> None:
    rt = await env.runtime()
    view = await rt.lifecycle.new_session("a")
    await turns(rt, env, view.id, ["q0", "q1", "q2"])
    env.server.add(
        ScriptedResponse(status=500, reads=['{"error": {"message": "model crashed"}}']), session="a/compact"
    )
    env.server.add(say("word " * 4000), session="a/compact")  # far over the summary limit

    first = await rt.memory.compact(view.id)
    second = await rt.memory.compact(view.id)
    assert not first.ok and "summary request failed" in first.message
    assert not second.ok and "too long" in second.message
    notices = [n.text for n in env.sink.of(ev.Notice, view.id) if n.level == "error"]
    assert any("compaction failed" in n and "unchanged" in n for n in notices)
    assert rt.agents[view.id].record.compaction is None
    assert await rt.store.compactions.latest(view.id) is None
    assert not env.sink.of(ev.Compacted)

    await turns(rt, env, view.id, ["q3"])
    body = turn_requests(env.server)[-1]
    assert body["messages"][1:] == [
        user("q0"),
        answer("q0"),
        user("q1"),
        answer("q1"),
        user("q2"),
        answer("q2"),
        user("q3"),
    ]
    await rt.shutdown()


async def test_next_request_after_restart_and_crash_is_valid(env: Env) -> None:
    rt = await env.runtime(default_context_window=32768)
    view = await rt.lifecycle.new_session("a")
    await turns(rt, env, view.id, ["q0 the task", "q1", "q2"])
    env.server.add(say("SUMMARY-R"), session="a/compact")
    assert (await rt.memory.compact(view.id)).ok
    await rt.shutdown()

    rt2 = await env.runtime(default_context_window=32768)
    (view2,) = await rt2.opening.restore()
    assert rt2.agents[view2.id].record.compaction is not None
    await turns(rt2, env, view2.id, ["q3"])
    body = turn_requests(env.server)[-1]
    assert_valid_request(body)
    assert "SUMMARY-R" in body["messages"][0]["content"] and "q0 the task" in body["messages"][0]["content"]
    assert body["messages"][1:] == [user("q1"), answer("q1"), user("q2"), answer("q2"), user("q3")]

    # crash: the process dies while a tool call runs (the call is stored, its result never is)
    crashed_call = {"id": "k1", "type": "function", "function": {"name": "run_command", "arguments": "{}"}}
    await rt2.store.messages.append(
        view2.id, {"role": "assistant", "content": "", "tool_calls": [crashed_call]}
    )
    await rt2.client.aclose()
    await rt2.store.close()

    rt3 = await env.runtime(default_context_window=32768)
    (view3,) = await rt3.opening.restore()
    await turns(rt3, env, view3.id, ["q4"])
    body = turn_requests(env.server)[-1]
    assert_valid_request(body)
    assert "SUMMARY-R" in body["messages"][0]["content"]
    assert body["messages"][-3]["tool_calls"][0]["id"] == "k1"
    assert body["messages"][-2]["role"] == "tool" and "interrupted" in body["messages"][-2]["content"]
    await rt3.shutdown()


def test_long_tool_outputs_are_trimmed_in_requests_only() -> None:
    history = [
        user("go"),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "t", "type": "function", "function": {"name": "grep", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "t", "content": "A" * 5000 + "END"},
    ]
    request = build_request("sys", history, None, 1000)
    trimmed = request[-1]["content"]
    assert len(trimmed) < 1600 and trimmed.endswith("END") and "whole output is kept" in trimmed
    assert "read_file" in trimmed  # says how to see the rest
    assert history[-1]["content"] == "A" * 5000 + "END"
