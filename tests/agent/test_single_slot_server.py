"""Several sessions against a server that runs one request at a time (fresh-user finding: nine
sessions against the local llama.cpp Python server, eight ended "the model returned an empty reply").

Measured against the real server (llama-cpp-python 0.3.36, /work/captures/leftovers-single-slot-raw.txt):
when a second request arrives, the RUNNING one is cut: status 200, its role chunk and whatever content
it had streamed, then ``data: [DONE]`` with no finish_reason. The loopback replay server sends those
bytes (tests/scripted.py ``cut_by_next_request``) to the real client and agent loop."""

from __future__ import annotations

from paragents import events as ev
from paragents.agent.loop import UNFINISHED_NOTE
from paragents.llm.replay import ScriptedResponse
from tests.runtime_env import Env
from tests.scripted import cut_by_next_request, posts


def notices(env: Env, sid: str) -> list[str]:
    return [n.text for n in env.sink.of(ev.Notice, sid)]


async def test_a_request_the_server_dropped_for_another_is_retried_and_both_sessions_answer(env: Env) -> None:
    rt = await env.runtime(max_retries=2)
    a, b = await rt.new_session("a"), await rt.new_session("b")
    env.server.add(
        [cut_by_next_request(posts(env.server, 2)), ScriptedResponse.from_message("a here")], session="a"
    )
    env.server.add(ScriptedResponse.from_message("b here"), session="b")
    rt.submit(a.id, "say one word")
    await env.server.wait_for(lambda: len(env.server.requests) >= 1)  # a's request is running
    rt.submit(b.id, "say two words")
    await rt.wait_idle(a.id)
    await rt.wait_idle(b.id)
    for view, text in ((a, "a here"), (b, "b here")):
        assert view.last_result is not None and view.last_result.status == "completed"
        stored = await rt.store.messages.load(view.id)
        assert stored[-1].message == {"role": "assistant", "content": text}
        assert not any("empty reply" in n for n in notices(env, view.id))
    [retry] = env.sink.of(ev.StreamRetry, a.id)
    assert retry.reason == "the server dropped the request" and retry.attempt == 1
    assert any(n.startswith("the server dropped the request, retrying in") for n in notices(env, a.id))
    assert [r.session for r in env.server.requests] == ["a", "b", "a"]
    await rt.shutdown()


async def test_a_server_that_keeps_dropping_the_request_fails_the_turn_saying_so(env: Env) -> None:
    rt = await env.runtime(max_retries=1)
    a = await rt.new_session("a")
    dropped = [cut_by_next_request(posts(env.server, n)) for n in (1, 2)]  # cut at once, twice
    env.server.add(dropped, session="a")
    rt.submit(a.id, "say one word")
    await rt.wait_idle(a.id)
    result = a.last_result
    assert result is not None and result.status == "failed" and result.error_kind == "server"
    assert result.error is not None
    assert (
        "ended the stream with no reply and no finish_reason: the server dropped the request" in result.error
    )
    assert "--interrupt_requests False" in result.error and "(gave up after 1 retries)" in result.error
    assert not any("empty reply" in n for n in notices(env, a.id))
    assert len(env.server.requests) == 2
    await rt.shutdown()


async def test_a_reply_cut_after_some_text_is_kept_and_said_to_be_maybe_cut(env: Env) -> None:
    """The same cut after some text: the reply is kept (the shared fixture A10 says a stream with
    [DONE] and no finish_reason completes), with a notice that it may be cut short."""
    rt = await env.runtime()
    a = await rt.new_session("a")
    env.server.add(cut_by_next_request(posts(env.server, 1), ["O'", "Mal", "ice", ", a"]), session="a")
    rt.submit(a.id, "a poem")
    await rt.wait_idle(a.id)
    assert a.last_result is not None and a.last_result.status == "completed"
    stored = await rt.store.messages.load(a.id)
    assert stored[-1].message == {"role": "assistant", "content": "O'Malice, a"}
    assert UNFINISHED_NOTE in notices(env, a.id)
    await rt.shutdown()


async def test_a_reply_that_says_it_finished_gets_no_such_notice(env: Env) -> None:
    rt = await env.runtime()
    a = await rt.new_session("a")
    env.server.add(ScriptedResponse.from_message("whole"), session="a")
    rt.submit(a.id, "hi")
    await rt.wait_idle(a.id)
    assert a.last_result is not None and a.last_result.status == "completed"
    assert UNFINISHED_NOTE not in notices(env, a.id)
    await rt.shutdown()
