"""Streaming edge cases taken from peer SDKs' tests, end to end: recorded SSE served by the loopback
replay server, the real client and agent loop, and assertions on the next request body the server got."""

from __future__ import annotations

import json
from typing import Any

from paragents import events as ev
from paragents.llm.replay import ScriptedResponse
from tests.runtime_env import Env


def sse(*chunks: dict[str, Any], done: bool = True) -> ScriptedResponse:
    """One recorded stream: each chunk dict becomes one ``data:`` event in its own network read."""
    reads: list[bytes | str] = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    if done:
        reads.append("data: [DONE]\n\n")
    return ScriptedResponse(reads=reads)


def tool_delta(fragment: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}, "finish_reason": None}]}


def finish(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def assistant_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]


async def test_call_whose_name_never_arrives_fails_the_turn_and_is_never_sent_back(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(
        sse(
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me look."}}]},
            tool_delta({"index": 0, "id": "call_N", "type": "function", "function": {"arguments": ""}}),
            tool_delta({"index": 0, "function": {"arguments": '{"path": "a.txt"}'}}),
            finish("tool_calls"),
        ),
        session="a",
    )
    rt.submit(s.id, "q1")
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.status == "failed"
    assert s.last_result.error is not None and "without a function name" in s.last_result.error
    assert s.last_result.error_kind == "protocol"
    assert not env.sink.of(ev.ToolCallStarted, s.id)  # nothing of that reply ran
    stored = await rt.store.messages.load(s.id)
    assert stored[-1].message == {"role": "assistant", "content": "Let me look."}
    assert stored[-1].complete is False

    env.server.add(ScriptedResponse.from_message("fine"), session="a")
    rt.submit(s.id, "q2")
    await rt.wait_idle(s.id)
    sent = env.server.requests[1].body_json["messages"]
    assert assistant_calls(sent) == []  # no call with an empty (or invented) name goes back
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    assert s.last_result is not None and s.last_result.status == "completed"
    await rt.shutdown()


async def test_whitespace_only_arguments_are_stored_and_sent_as_empty_object(env: Env) -> None:
    (env.project / "a.txt").write_text("x")
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(
        sse(
            tool_delta({"index": 0, "id": "call_W", "type": "function", "function": {"name": "list_dir"}}),
            tool_delta({"index": 0, "function": {"arguments": " \n\t "}}),
            tool_delta({"index": 1, "id": "call_E", "type": "function", "function": {"name": "list_dir"}}),
            finish("tool_calls"),
        ),
        session="a",
    )
    env.server.add(ScriptedResponse.from_message("done"), session="a")
    rt.submit(s.id, "list")
    await rt.wait_idle(s.id)
    finished = {e.call.id: e for e in env.sink.of(ev.ToolCallFinished, s.id)}
    assert finished["call_W"].status == "ok" and "a.txt" in finished["call_W"].output  # the call ran
    assert finished["call_E"].status == "ok"
    calls = assistant_calls(env.server.requests[1].body_json["messages"])
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [("call_W", "{}"), ("call_E", "{}")]
    stored = await rt.store.messages.load(s.id)
    kept = [c["function"]["arguments"] for m in stored for c in m.message.get("tool_calls") or []]
    assert kept == ["{}", "{}"]
    await rt.shutdown()


async def test_empty_fragment_without_id_or_name_is_dropped(env: Env) -> None:
    """A stray ``{"index": 1}`` fragment is not a call: the turn goes on with the real one only."""
    rt = await env.runtime()
    s = await rt.new_session("a")
    env.server.add(
        sse(
            tool_delta({"index": 0, "id": "call_R", "function": {"name": "list_dir", "arguments": "{}"}}),
            tool_delta({"index": 1}),
            finish("tool_calls"),
        ),
        session="a",
    )
    env.server.add(ScriptedResponse.from_message("done"), session="a")
    rt.submit(s.id, "list")
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.status == "completed"
    calls = assistant_calls(env.server.requests[1].body_json["messages"])
    assert [c["id"] for c in calls] == ["call_R"]
    await rt.shutdown()


async def test_a_turn_cancelled_while_retrying_a_failed_request_counts_no_tokens(env: Env) -> None:
    """The endpoint answers 500 (nothing scripted): the request never produced a reply, so cancelling
    during the retry's backoff must not count an estimate of its tokens as spent."""
    rt = await env.runtime(max_retries=3)
    view = await rt.new_session("a")
    rt.submit(view.id, "hello " * 200)
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.StreamRetry, view.id)))
    rt.cancel(view.id)
    await rt.wait_idle(view.id)
    assert view.last_result is not None and view.last_result.status == "cancelled"
    assert await rt.store.turns.list_usage(view.id) == []
    assert view.usage.total_tokens == 0
    await rt.shutdown()
