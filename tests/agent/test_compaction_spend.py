"""Compaction is paid for: every summary request the server answered is a usage row in the store,
part of the session's spend and counted against the budgets, whether the summary was kept or not;
and the budgets are checked before an automatic summary request as before a turn's request."""

from __future__ import annotations

import time

from paragents.llm.replay import ScriptedResponse
from paragents.models import SessionState
from paragents.sessions.runtime import Runtime
from tests.chat_requests import is_summary_request
from tests.runtime_env import Env

PRICE = {"input_price_per_mtok": 1.0, "output_price_per_mtok": 1.0}
BILL = {"prompt_tokens": 900_000, "completion_tokens": 100_000, "total_tokens": 1_000_000}
"""The summary request's usage: $1.00 at $1 per million tokens both ways."""
DETAILS = " with the details of the work done" * 12


async def three_turns(rt: Runtime, env: Env, sid: str) -> None:
    for prompt in ("q0 build the parser", "q1", "q2"):
        env.server.add(ScriptedResponse.from_message(content=f"answer to {prompt}{DETAILS}"), session="a")
        rt.submit(sid, prompt)
        await rt.wait_idle(sid)


def summary(text: str) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=text, usage=BILL)


async def compaction_rows(rt: Runtime, sid: str) -> list[dict[str, object]]:
    """The usage rows written for no turn (the summary requests)."""
    return [r for r in await rt.store.turns.list_usage(sid) if r["turn_id"] is None]


async def test_a_kept_summary_is_spent_and_a_budget_trips_on_it(env: Env) -> None:
    rt = await env.runtime(default_context_window=32768, models={"m": PRICE}, budgets={"session": "0.50usd"})
    view = await rt.lifecycle.new_session("a")
    await three_turns(rt, env, view.id)
    assert view.spend.usd is not None and view.spend.usd < 0.5
    env.server.add(summary("SUMMARY-1: parser task"), session="a/compact")
    assert (await rt.memory.compact(view.id)).ok
    [row] = await compaction_rows(rt, view.id)
    assert (row["prompt_tokens"], row["completion_tokens"], row["cost_usd"]) == (900_000, 100_000, 1.0)
    assert view.spend.usd is not None and view.spend.usd > 1.0
    assert view.usage.total_tokens > 1_000_000
    sent = len(env.server.requests)
    rt.submit(view.id, "q3")
    await env.sink.wait_for(lambda: view.state is SessionState.BUDGET)
    assert view.budget_pause is not None and view.budget_pause.kind == "usd"
    assert len(env.server.requests) == sent  # the turn's request was never sent
    assert rt.budgets.stop_paused(view.id)
    await rt.wait_idle(view.id)
    await rt.shutdown()


async def test_a_refused_summary_the_server_billed_is_spent_and_counted(env: Env) -> None:
    """The summary came back too long (so it is not kept) but the server billed it: its usage is a
    row in the store, in the session's spend and the project's today, and the cap trips on it."""
    rt = await env.runtime(
        default_context_window=32768, models={"m": PRICE}, budgets={"project_day": "0.50usd"}
    )
    view = await rt.lifecycle.new_session("a")
    await three_turns(rt, env, view.id)
    env.server.add(summary("word " * 9000), session="a/compact")  # far over the summary limit
    outcome = await rt.memory.compact(view.id)
    assert not outcome.ok and "too long" in outcome.message
    assert rt.agents[view.id].record.compaction is None
    [row] = await compaction_rows(rt, view.id)
    assert row["cost_usd"] == 1.0 and row["estimated"] is False
    assert view.spend.usd is not None and view.spend.usd > 1.0
    today, _ = await rt.budgets.today(time.time())
    assert today.usd is not None and today.usd > 1.0  # the header's "today"
    rt.submit(view.id, "q3")
    await env.sink.wait_for(lambda: view.state is SessionState.BUDGET)
    assert view.budget_pause is not None and view.budget_pause.level == "project_day"
    assert rt.budgets.stop_paused(view.id)
    await rt.wait_idle(view.id)
    await rt.shutdown()


async def test_a_summary_not_kept_for_being_no_shorter_is_still_spent(env: Env) -> None:
    rt = await env.runtime(default_context_window=32768, models={"m": PRICE})
    view = await rt.lifecycle.new_session("a")
    for prompt in ("q0", "q1", "q2"):
        env.server.add(ScriptedResponse.from_message(content="ok"), session="a")
        rt.submit(view.id, prompt)
        await rt.wait_idle(view.id)
    env.server.add(summary("SUMMARY-LONG: " + "what happened so far, at length. " * 20), session="a/compact")
    outcome = await rt.memory.compact(view.id)
    assert not outcome.ok and "would not make the requests smaller" in outcome.message
    [row] = await compaction_rows(rt, view.id)
    assert row["cost_usd"] == 1.0
    assert view.spend.usd is not None and view.spend.usd > 1.0
    await rt.shutdown()


async def test_an_automatic_summary_request_waits_at_the_budget_like_a_turn_request(env: Env) -> None:
    """A session over its cap whose next request would be compacted first: the pause comes before
    the summary request, so nothing at all is sent once the cap is reached."""
    rt = await env.runtime(models={"m": {**PRICE, "context_window": 2000}}, budgets={"session": "0.50usd"})
    view = await rt.lifecycle.new_session("a")
    for i in range(6):
        env.server.add(
            ScriptedResponse.from_message(
                content=f"did step {i}" + " and more" * 40, usage=BILL if i == 5 else None
            ),
            session="a",
        )
    for _ in range(6):
        env.server.add(ScriptedResponse.from_message(content="Task: steps so far."), session="a/compact")
    for i in range(6):
        rt.submit(view.id, f"step {i}")
        await rt.wait_idle(view.id)
        if view.spend.usd is not None and view.spend.usd > 0.5:
            break
    assert view.spend.usd is not None and view.spend.usd > 0.5
    sent = len(env.server.requests)
    rt.submit(view.id, "step next" + " with a long body" * 200)
    await env.sink.wait_for(lambda: view.state is SessionState.BUDGET)
    assert len(env.server.requests) == sent  # neither a summary request nor the turn's was sent
    assert not [r for r in env.server.requests[sent:] if is_summary_request(r)]
    assert rt.budgets.stop_paused(view.id)
    await rt.wait_idle(view.id)
    assert view.last_result is not None and view.last_result.error_kind == "budget"
    await rt.shutdown()
