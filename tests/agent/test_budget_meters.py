"""Issue 17's second half in the engine: money priced per request at the model used (and kept across
a restart), cached tokens, budgets kept in the store, wall-clock caps counted from the stored turns
(across restarts and per project/day, with a fake clock for the running turn), the loop guard's
"a command that changed files is not idle" test, and the "question" needs-you kind."""

from __future__ import annotations

import json
from pathlib import Path

from paragents import events as ev
from paragents.agent.budget import BudgetMeter
from paragents.agent.question import ends_with_question, question_of
from paragents.config import RuntimeConfig
from paragents.limits import Budget
from paragents.llm.replay import ScriptedResponse
from paragents.models import AssembledReply, SessionState, ToolCall
from tests.runtime_env import Env

BIG = {"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 10000}
PRICES = {
    "m": {"input_price_per_mtok": 1.0, "output_price_per_mtok": 1.0, "cached_price_per_mtok": 0.1},
    "m2": {"input_price_per_mtok": 100.0, "output_price_per_mtok": 100.0},
}


def done(text: str = "done", usage: dict[str, int] | None = None) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=text, usage=usage or BIG)


def command(cmd: str, id: str) -> ScriptedResponse:
    args = json.dumps({"command": cmd})
    return ScriptedResponse.from_message(tool_calls=[{"id": id, "name": "run_command", "arguments": args}])


async def test_money_is_priced_per_request_at_the_model_used_and_kept_across_a_restart(env: Env) -> None:
    rt = await env.runtime(models=PRICES)
    s = await rt.new_session("api")
    env.server.add(done(usage={**BIG, "cached_tokens": 4000}), session="api")
    rt.submit(s.id, "one")
    await rt.wait_idle(s.id)
    # 5000 uncached prompt tokens at $1/M + 4000 cached at $0.1/M + 1000 completion at $1/M
    assert s.spend.usd is not None and abs(s.spend.usd - 0.0064) < 1e-9
    assert (s.spend.prompt, s.spend.cached, s.spend.completion, s.spend.estimated) == (
        9000,
        4000,
        1000,
        False,
    )
    await rt.set_model(s.id, "m2")  # 100x dearer: what was spent does not change
    assert abs((s.spend.usd or 0) - 0.0064) < 1e-9
    meter = rt.budgets.meters[s.id]
    assert abs(((await meter.spent("session")).usd or 0) - 0.0064) < 1e-9
    await rt.shutdown()
    again = await env.runtime(models=PRICES)
    (view,) = await again.restore()
    assert abs((view.spend.usd or 0) - 0.0064) < 1e-9 and view.spend.cached == 4000
    await again.shutdown()


async def test_budget_session_and_project_are_stored_and_survive_a_restart(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("api")
    rt.set_budget(s.id, "session", "0.5usd")
    rt.set_budget(s.id, "project", "21k")
    await rt.shutdown()
    again = await env.runtime()
    (view,) = await again.restore()
    assert view.budget == Budget(usd=0.5)
    assert again.budgets.caps(view.id)["project_day"] == Budget(tokens=21_000)
    again.set_budget(view.id, "session", "off")
    again.set_budget(view.id, "project", "off")
    await again.shutdown()
    third = await env.runtime()
    (view,) = await third.restore()
    assert view.budget is None and third.budgets.caps(view.id)["project_day"] is None
    await third.shutdown()


async def test_wall_clock_caps_count_stored_turns_across_restarts_and_per_project_day(env: Env) -> None:
    rt = await env.runtime()
    a = await rt.new_session("a")
    env.server.add(done(), session="a")
    rt.submit(a.id, "one")
    await rt.wait_idle(a.id)
    (turn,) = await rt.store.turns.all(a.id)
    assert turn.run_seconds is not None and turn.run_seconds >= 0  # the agent stores what it measured
    await rt.store.turns.finish(turn.id, "completed", run_seconds=100.0)  # as if it ran 100 s
    await rt.shutdown()
    again = await env.runtime(budgets={"session": "90s"})  # a restart: the 100 s still count
    (view,) = await again.restore()
    again.submit(view.id, "two")
    await env.sink.wait_for(lambda: view.state is SessionState.BUDGET)
    assert view.budget_pause is not None and view.budget_pause.kind == "seconds"
    assert view.budget_pause.spent == "2m"
    again.stop_paused(view.id)
    await again.wait_idle(view.id)
    await again.shutdown()
    third = await env.runtime(budgets={"project_day": "1m"})  # the project's other session is held too
    b = await third.new_session("b")
    third.submit(b.id, "three")
    await env.sink.wait_for(lambda: b.state is SessionState.BUDGET)
    assert b.budget_pause is not None and (b.budget_pause.level, b.budget_pause.kind) == (
        "project_day",
        "seconds",
    )
    assert len(env.server.requests) == 1
    third.stop_paused(b.id)
    await third.wait_idle(b.id)
    await third.shutdown()


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


async def test_the_meter_counts_the_running_turn_with_a_fake_clock_and_excludes_pauses(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("a")
    clock = FakeClock()
    meter = BudgetMeter(
        budgets=rt.store.budgets,
        config=lambda: rt.config,
        session_id=s.id,
        project_dir=str(env.project),
        caps=lambda: {"session": Budget(seconds=60)},
        warn=lambda text: None,
        clock=clock,
    )
    meter.start_clock()
    clock.now += 40
    meter.stop_clock()  # paused for an hour: not counted
    clock.now += 3600
    meter.start_clock()
    clock.now += 30
    assert await meter.seconds("session") == 70
    breach = await meter.check("m", 10)
    assert breach is not None and breach.kind == "seconds" and breach.spent == "1m"
    assert meter.take_turn_seconds() == 70 and meter.turn_seconds() == 0
    await rt.shutdown()


async def test_a_command_that_changes_files_is_not_idle_and_one_that_does_not_is(env: Env) -> None:
    guard = {"identical_calls": 0, "idle_requests": 2}
    (env.project / "f").write_text("same\n")
    rt = await env.runtime(loop_guard=guard, sandbox="off")
    s = await rt.new_session("busy")
    await rt.set_mode(s.id, "bypassPermissions")
    writes = "date +%s%N >> log; echo ok"  # the same output each time, but the tree changes
    env.server.add([command(writes, f"w{i}") for i in range(4)] + [done()], session="busy")
    rt.submit(s.id, "go")
    await env.sink.wait_for(lambda: s.last_result is not None or s.state is SessionState.BUDGET)
    assert env.sink.of(ev.BudgetPaused, s.id) == []  # without the tree check: paused as idle
    assert s.last_result is not None and s.last_result.status == "completed"
    idle = await rt.new_session("idle")
    await rt.set_mode(idle.id, "bypassPermissions")
    env.server.add([command("cat f", f"r{i}") for i in range(4)] + [done()], session="idle")
    rt.submit(idle.id, "go")
    await env.sink.wait_for(lambda: idle.state is SessionState.BUDGET)
    assert idle.budget_pause is not None and idle.budget_pause.kind == "idle_requests"
    rt.stop_paused(idle.id)
    await rt.wait_idle(idle.id)
    await rt.shutdown()


def test_question_heuristic() -> None:
    assert ends_with_question("I made the change.\n\nShould I also update the tests?") == (
        "Should I also update the tests?"
    )
    assert ends_with_question("Which one do you want: **a** or **b?**") is not None
    assert ends_with_question("Is it fixed? Yes.\n\nDone.") is None
    assert ends_with_question("```python\nx = a?b\n```") is None
    reply = AssembledReply(content="Go on?", finish_reason="length")
    assert question_of(reply) is None
    call = ToolCall("c", "read_file", "{}")
    assert question_of(AssembledReply(content="Go on?", tool_calls=[call], finish_reason="stop")) is None
    assert question_of(AssembledReply(content="Go on?", finish_reason="stop")) == "Go on?"


async def test_a_turn_ending_with_a_question_needs_the_user_until_a_prompt_is_sent(env: Env) -> None:
    rt = await env.runtime()
    s = await rt.new_session("api")
    env.server.add([done("Tests pass.\n\nShall I push the branch?"), done("Pushed.")], session="api")
    rt.submit(s.id, "fix it")
    await rt.wait_idle(s.id)
    assert [e.text for e in env.sink.of(ev.QuestionAsked, s.id)] == ["Shall I push the branch?"]
    assert s.question == "Shall I push the branch?"
    rt.submit(s.id, "yes")
    await rt.wait_idle(s.id)
    assert s.question is None and len(env.sink.of(ev.QuestionAsked, s.id)) == 1
    await rt.shutdown()


def test_cached_price_defaults_to_the_input_price() -> None:
    from paragents.agent.spend import request_cost
    from paragents.models import Usage

    cfg = RuntimeConfig(models={"m": {"input_price_per_mtok": 2.0, "output_price_per_mtok": 4.0}})
    assert request_cost(cfg, "m", Usage(1_000_000, 0, 1_000_000, 500_000)) == 2.0
    assert request_cost(cfg, "other", Usage(10, 10, 20)) is None


def test_tree_fingerprint_changes_when_a_file_is_added(tmp_path: Path) -> None:
    from paragents.agent.tree_state import fingerprint

    (tmp_path / "a").write_text("1")
    first = fingerprint(tmp_path)
    assert first is not None and first == fingerprint(tmp_path)
    (tmp_path / "b").write_text("2")
    assert fingerprint(tmp_path) != first


async def test_rows_without_a_stored_cost_are_priced_at_their_own_model(env: Env) -> None:
    from paragents.agent.spend import priced
    from paragents.models import Usage

    rt = await env.runtime(models=PRICES)
    s = await rt.new_session("api")  # its model is m ($1/M); the old row was served by m2 ($100/M)
    await rt.store.turns.add_usage(s.id, None, "m2", Usage(1000, 0, 1000), estimated=True)  # no cost stored
    await rt.store.turns.add_usage(s.id, None, "m", Usage(1000, 0, 1000), cost_usd=0.5)  # a stored cost wins
    spend = priced(rt.config, await rt.store.budgets.spend_rows(session_id=s.id))
    assert spend.usd is not None and abs(spend.usd - 0.6) < 1e-9
    assert spend.estimated and spend.money() == "~$0.60"
    await rt.shutdown()
