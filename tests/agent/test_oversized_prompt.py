"""A prompt that alone cannot fit the context window is refused before any request is sent, with
one message saying its size, the window and what to do; it goes back to the prompt box, is kept in
the store marked unsent, and later prompts neither carry it nor try to compact it."""

from __future__ import annotations

import json

from paragents import events as ev
from paragents.llm.replay import ScriptedResponse
from paragents.models import SessionState
from tests.chat_requests import is_summary_request
from tests.runtime_env import Env

HUGE = "\n".join(f"line {i}: " + "x" * 100 for i in range(20_000))
"""A pasted 20,000-line prompt (about 2.2 MB)."""


async def test_a_prompt_bigger_than_the_window_is_refused_kept_and_not_retried(env: Env) -> None:
    rt = await env.runtime(models={"m": {"context_window": 8192}})
    view = await rt.lifecycle.new_session("a")
    rt.submit(view.id, HUGE)
    await rt.wait_idle(view.id)

    assert env.server.requests == []  # nothing was sent
    result = view.last_result
    assert result is not None and result.status == "failed" and result.error_kind == "context_length"
    error = result.error or ""
    assert "8,192 tokens" in error and "so nothing was sent" in error
    assert "Shorten it" in error and "/model NAME" in error and "prompt box" in error
    tokens = int(error.split("this prompt is about ")[1].split(" tokens")[0].replace(",", ""))
    assert tokens > 8192 * 10
    assert view.state is SessionState.FAILED
    assert [e.text for e in env.sink.of(ev.DraftRestored, view.id)] == [HUGE]  # back in the box
    assert view.draft == HUGE
    assert not env.sink.of(ev.TurnStarted, view.id)  # never shown as a sent prompt
    stored = await rt.store.messages.load(view.id)
    assert [(m.message["content"], m.complete) for m in stored] == [(HUGE, False)]  # kept, unsent

    for prompt in ("hello", "again"):  # later prompts: no compaction, no trace of the huge prompt
        env.server.add(ScriptedResponse.from_message(content=f"hi to {prompt}"), session="a")
        rt.submit(view.id, prompt)
        await rt.wait_idle(view.id)
        assert view.last_result is not None and view.last_result.status == "completed"
    assert len(env.server.requests) == 2
    assert not [r for r in env.server.requests if is_summary_request(r)]
    assert all("line 19999" not in json.dumps(r.body_json) for r in env.server.requests)
    assert not [n for n in env.sink.of(ev.Notice, view.id) if "compaction" in n.text]
    await rt.shutdown()


async def test_a_prompt_that_fits_is_sent_as_before(env: Env) -> None:
    rt = await env.runtime(models={"m": {"context_window": 8192}})
    view = await rt.lifecycle.new_session("a")
    env.server.add(ScriptedResponse.from_message(content="ok"), session="a")
    rt.submit(view.id, "\n".join(f"line {i}" for i in range(200)))
    await rt.wait_idle(view.id)
    assert view.last_result is not None and view.last_result.status == "completed"
    assert len(env.server.requests) == 1 and not env.sink.of(ev.DraftRestored, view.id)
    await rt.shutdown()
