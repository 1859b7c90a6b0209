"""Queued prompts are kept in the store as the queue changes (a crash keeps them), survive closing
their session, and come back as separate queued prompts, held (not run until released), with the
draft alone back in the prompt box when it is opened again."""

from __future__ import annotations

import asyncio

from paragents import events as ev
from paragents.llm.replay_script import ScriptedResponse
from paragents.store import Store
from tests.runtime_env import Env
from tests.scripted import gated


async def stored(env: Env, sid: str) -> tuple[str, list[str]]:
    """The session's draft as another process reads it."""
    async with await Store.open(env.db) as store:
        return await store.drafts.get(sid)


async def test_queued_prompts_are_kept_as_they_change_and_come_back_as_a_draft_not_run(env: Env) -> None:
    rt = await env.runtime()
    view = await rt.new_session("a")
    gate = asyncio.Event()
    env.server.add(gated("a long answer", gate, at=2), session="a")
    rt.submit(view.id, "first")
    await env.sink.wait_for(lambda: bool(env.sink.of(ev.TextDelta, view.id)))
    rt.submit(view.id, "second [b]x[/b]")
    third = rt.submit(view.id, "third")
    await rt.drafts.flushed()
    assert await stored(env, view.id) == ("", ["second [b]x[/b]", "third"])
    assert rt.remove_queued(view.id, third)
    await rt.drafts.flushed()
    assert await stored(env, view.id) == ("", ["second [b]x[/b]"])

    await rt.save_draft(view.id, "half typed")
    await rt.close_session(view.id)  # the turn is cancelled; the queued prompt stays kept
    gate.set()
    assert await stored(env, view.id) == ("half typed", ["second [b]x[/b]"])
    requests = len(env.server.requests)

    again = await rt.reopen_session(view.id)
    (restored,) = env.sink.of(ev.DraftRestored, view.id)
    assert restored.text == "half typed" and restored.queued == 1  # the draft alone
    assert again.draft == "half typed"
    assert [(q.text, q.held) for q in again.queue] == [("second [b]x[/b]", True)]  # its own prompt, held
    assert any("1 prompt still queued" in n.text for n in env.sink.of(ev.Notice, view.id))
    await rt.drafts.flushed()
    assert await stored(env, view.id) == ("half typed", ["second [b]x[/b]"])  # a crash keeps both
    assert len(env.server.requests) == requests  # nothing ran by itself

    # a new prompt runs while the held one waits; /lanes-like text typed after it is its own prompt
    env.server.add(
        [ScriptedResponse.from_message("fresh answer"), ScriptedResponse.from_message("now the old one")],
        session="a",
    )
    rt.submit(again.id, "fresh")
    await rt.wait_idle(again.id)
    assert [q.text for q in again.queue] == ["second [b]x[/b]"]
    assert env.server.requests[-1].body_json["messages"][-1]["content"] == "fresh"
    assert rt.release_queued(again.id)
    await rt.wait_idle(again.id)
    assert not again.queue
    assert env.server.requests[-1].body_json["messages"][-1]["content"] == "second [b]x[/b]"
    await rt.shutdown()
