"""Budgets and the loop guard against a loopback server that returns scripted ``usage`` per request
and counts the requests it received."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.cli.exit_codes import EXIT_BUDGET, exit_code_for
from paragents.limits import Budget, BudgetError, parse_budget
from paragents.llm.replay import ScriptedResponse, ThreadedReplayServer
from paragents.models import SessionState
from paragents.sessions.opening import turn_notes
from tests.cli.headless import run_json
from tests.runtime_env import Env

BIG = {"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 10000}
"""Usage of each scripted request: 10k tokens ($0.01 at $1 per million tokens both ways)."""
PRICED = {"m": {"input_price_per_mtok": 1.0, "output_price_per_mtok": 1.0}}


def read(path: str, id: str = "c1") -> ScriptedResponse:
    args = json.dumps({"path": path})
    return ScriptedResponse.from_message(
        tool_calls=[{"id": id, "name": "list_dir", "arguments": args}], usage=BIG
    )


def done(text: str = "done") -> ScriptedResponse:
    return ScriptedResponse.from_message(content=text, usage=BIG)


def test_budget_strings_parse_and_bad_ones_say_how_to_write_them() -> None:
    assert parse_budget("2.00usd") == Budget(usd=2.0)
    assert parse_budget("$0.01") == Budget(usd=0.01)
    assert parse_budget("500k") == Budget(tokens=500_000)
    assert parse_budget("30m") == Budget(seconds=1800)
    assert parse_budget("2usd, 500k 1h") == Budget(usd=2.0, tokens=500_000, seconds=3600)
    for bad in ("", "abc", "-1usd", "0k", "2usd 3usd", "5 parsecs"):
        with pytest.raises(BudgetError, match=r"2\.00usd"):
            parse_budget(bad)


def test_a_huge_budget_is_refused_in_one_line_and_caps_print_as_integers() -> None:
    with pytest.raises(BudgetError) as huge:
        parse_budget("99999999999999999999999999k")
    said = str(huge.value)
    assert "too large" in said and "at most 1000000M tokens" in said and "e+" not in said
    with pytest.raises(BudgetError, match="money cap is at most"):
        parse_budget("1e9usd".replace("1e9", "1" + "0" * 9))
    assert parse_budget("1000000000k").describe() == "1000000M tokens"
    assert parse_budget("2000000").describe() == "2M tokens"
    assert parse_budget("1500k").describe() == "1.5M tokens"


async def test_small_cap_pauses_after_the_nth_request_and_raise_resumes(env: Env) -> None:
    """$0.025 cap, $0.01 per request: the third request fits (0.02 + its estimate), the fourth does not
    and is never sent; the session is in state BUDGET with an inbox-ready pause; raising resumes it."""
    (env.project / "a").mkdir()
    (env.project / "b").mkdir()
    (env.project / "c").mkdir()
    rt = await env.runtime(models=PRICED, budgets={"session": "0.025usd"})
    s = await rt.lifecycle.new_session("api")
    env.server.add([read("a", "c1"), read("b", "c2"), read("c", "c3"), done()], session="api")
    rt.submit(s.id, "look around")
    rt.submit(s.id, "queued behind the pause")
    await env.sink.wait_for(lambda: s.state is SessionState.BUDGET)
    assert len(env.server.requests) == 3
    pause = s.budget_pause
    assert pause is not None and pause.level == "session" and pause.kind == "usd"
    assert (pause.spent, pause.cap) == ("$0.03", "$0.03")  # shown to the cent
    assert "session budget" in pause.reason
    assert [p.text for p in s.queue] == ["queued behind the pause"]  # the queue holds
    assert len(env.server.requests) == 3  # request 4 was never sent
    env.server.add(done("second"), session="api")
    rt.budgets.set_budget(s.id, "session", "1usd")
    await rt.wait_idle(s.id)
    assert len(env.server.requests) == 5
    assert s.last_result is not None and s.last_result.status == "completed"
    assert s.budget_pause is None
    assert [e.answer for e in env.sink.of(ev.BudgetResolved, s.id)] == ["retry"]
    await rt.shutdown()


async def test_token_cap_and_allow_one_more_then_stop(env: Env) -> None:
    rt = await env.runtime(budgets={"session": "12k"})
    s = await rt.lifecycle.new_session("api")
    (env.project / "a").mkdir()
    (env.project / "b").mkdir()
    env.server.add([read("a", "c1"), read("b", "c2"), done()], session="api")
    rt.submit(s.id, "go")
    await env.sink.wait_for(lambda: s.state is SessionState.BUDGET)
    assert len(env.server.requests) == 1
    assert s.budget_pause is not None and s.budget_pause.kind == "tokens"
    assert rt.budgets.allow_one_more(s.id)
    await env.sink.wait_for(lambda: len(env.sink.of(ev.BudgetPaused, s.id)) == 2)
    assert len(env.server.requests) == 2
    assert rt.budgets.stop_paused(s.id)
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.error_kind == "budget"
    assert s.last_result.status == "cancelled" and len(env.server.requests) == 2
    assert exit_code_for(s.last_result.status.value, s.last_result.error_kind) == EXIT_BUDGET == 7
    await rt.shutdown()


async def test_stop_at_a_budget_pause_ends_the_turn_as_a_cancel_not_a_failure(env: Env) -> None:
    """A running session paused at its budget, then stopped (the bar's Stop): the session is idle
    (as after a cancel), not failed, and its detail and a notice say it stopped at the budget."""
    rt = await env.runtime(budgets={"session": "12k"})
    s = await rt.lifecycle.new_session("api")
    (env.project / "a").mkdir()
    env.server.add([read("a", "c1"), done()], session="api")
    rt.submit(s.id, "go")
    await env.sink.wait_for(lambda: s.state is SessionState.BUDGET)
    assert rt.budgets.stop_paused(s.id)
    await rt.wait_idle(s.id)
    assert s.state is SessionState.IDLE
    assert s.last_result is not None and s.last_result.status == "cancelled"
    assert s.state_detail.startswith("stopped at the budget: session budget: spent")
    notices = [n.text for n in env.sink.of(ev.Notice, s.id)]
    assert any(t.startswith("stopped at the budget: session budget") for t in notices)
    turns = await rt.store.turns.all(s.id)
    assert turns[-1].status == "cancelled" and "stopped at the budget" in (turns[-1].error or "")
    notes = turn_notes(await rt.store.messages.load(s.id), turns)  # what a restored transcript says
    assert [text for _, text, _ in notes] == [f"Turn cancelled: {turns[-1].error}"]
    await rt.shutdown()


async def test_usd_budget_without_prices_warns_once_and_falls_back_to_tokens(env: Env) -> None:
    rt = await env.runtime(budgets={"session": "0.01usd, 12k"})
    s = await rt.lifecycle.new_session("api")
    (env.project / "a").mkdir()
    env.server.add([read("a"), done()], session="api")
    rt.submit(s.id, "go")
    await env.sink.wait_for(lambda: s.state is SessionState.BUDGET)
    assert s.budget_pause is not None and s.budget_pause.kind == "tokens"
    warnings = [n.text for n in env.sink.of(ev.Notice, s.id) if "has no prices" in n.text]
    assert len(warnings) == 1 and "token cap" in warnings[0]
    rt.budgets.stop_paused(s.id)
    await rt.wait_idle(s.id)
    await rt.shutdown()


async def test_project_day_cap_holds_across_two_runtimes_on_one_database(env: Env) -> None:
    first = await env.runtime()
    a = await first.lifecycle.new_session("a")
    env.server.add([done(), done()], session="a")
    first.submit(a.id, "one")
    first.submit(a.id, "two")
    await first.wait_idle(a.id)
    assert len(env.server.requests) == 2
    second = await env.runtime(budgets={"project_day": "21k"})
    b = await second.lifecycle.new_session("b")
    env.server.add(done(), session="b")
    second.submit(b.id, "three")
    await env.sink.wait_for(lambda: b.state is SessionState.BUDGET)
    assert b.budget_pause is not None and b.budget_pause.level == "project_day"
    assert "20k" in b.budget_pause.spent or b.budget_pause.spent == "20000"
    assert len(env.server.requests) == 2  # what the other runtime spent counted: nothing was sent
    second.budgets.set_budget(b.id, "project", "100k")
    await second.wait_idle(b.id)
    assert len(env.server.requests) == 3
    await second.shutdown()
    await first.shutdown()


async def test_loop_guard_trips_on_the_third_identical_call(env: Env) -> None:
    (env.project / "a").mkdir()
    rt = await env.runtime()
    s = await rt.lifecycle.new_session("loop")
    env.server.add([read("a", "c1"), read("a", "c2"), read("a", "c3"), done()], session="loop")
    rt.submit(s.id, "go")
    await env.sink.wait_for(lambda: s.state is SessionState.BUDGET)
    assert len(env.server.requests) == 3  # the fourth request waits
    pause = s.budget_pause
    assert pause is not None and pause.level == "loop" and pause.kind == "identical_calls"
    assert "3 identical list_dir calls" in pause.reason
    rt.budgets.set_budget(s.id, "session", "5usd")  # raising a cap does not answer the loop guard
    assert s.state is SessionState.BUDGET and s.budget_pause is pause
    rt.budgets.stop_paused(s.id)
    await rt.wait_idle(s.id)
    assert s.last_result is not None and s.last_result.error_kind == "loop"
    assert len(env.server.requests) == 3
    await rt.shutdown()


async def test_loop_guard_does_not_trip_on_three_different_reads(env: Env) -> None:
    for name in "abc":
        (env.project / name).mkdir()
    rt = await env.runtime()
    s = await rt.lifecycle.new_session("work")
    env.server.add([read("a", "c1"), read("b", "c2"), read("c", "c3"), done()], session="work")
    rt.submit(s.id, "go")
    await rt.wait_idle(s.id)
    assert env.sink.of(ev.BudgetPaused, s.id) == []
    assert s.last_result is not None and s.last_result.status == "completed"
    assert len(env.server.requests) == 4
    await rt.shutdown()


def test_headless_max_budget_exits_7_with_error_kind_budget(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with ThreadedReplayServer(models=["m"]) as server:
        server.add([read("a", "c1"), read("a", "c2"), done()], session="b")
        code, out = run_json(server, tmp_path, "--session", "b", "--max-budget", "12k")
        assert code == 7
        assert out["error"]["kind"] == "budget" and "session budget" in out["error"]["message"]
        assert len(server.requests) == 1


def test_headless_bad_max_budget_is_a_usage_error(tmp_path: Path) -> None:
    with ThreadedReplayServer(models=["m"]) as server:
        from tests.cli.headless import paragents

        proc = paragents(
            "run", "--endpoint", server.base_url, "--model", "m", "--max-budget=-2usd", "hi", cwd=tmp_path
        )
        assert proc.returncode == 2 and "more than zero" in proc.stderr
        assert server.requests == []


def test_a_bad_budget_in_the_config_file_names_the_file_and_field(tmp_path: Path) -> None:
    from paragents.config import ConfigError, read_config_file

    path = tmp_path / "runtime_config.json"
    path.write_text(json.dumps({"budgets": {"session": "-1usd"}}))
    with pytest.raises(ConfigError, match=r"field 'budgets.session': budget '-1usd' must be more than zero"):
        read_config_file(path)
    path.write_text(json.dumps({"budgets": {"sesion": "1usd"}}))
    with pytest.raises(ConfigError, match="known keys: group, project_day, session"):
        read_config_file(path)
