"""The cost an external ACP agent reports (``usage_update.cost``, cumulative for its session) is the
session's spend: stored per turn as the difference, shown in the title and the overview, counted by
the budget caps before each prompt and during a turn (a crossing cancels the turn with
``session/cancel``); another currency is shown but never counted in USD."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from paragents import events as ev
from paragents.agent.spend import priced
from paragents.models import SessionState
from paragents.ui.budgets.hooks import budget_label
from paragents.ui.screens.overview import ActivityLog, collect_rows
from tests.acp.conftest import AcpEnv, idle
from tests.acp.helpers import calls, notices
from tests.patience import HANG_GUARD_S


async def usd_spent(rt: object, sid: str) -> float | None:
    store = rt.store  # type: ignore[attr-defined]
    return priced(rt.config, await store.budgets.spend_rows(session_id=sid)).usd  # type: ignore[attr-defined]


async def test_reported_cost_is_stored_per_turn_and_shown_in_the_title_and_overview(
    aenv: AcpEnv, tmp_path: Path
) -> None:
    rt = await aenv.runtime()
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "cost 0.02\ncost 0.05\ntokens 1200 300\nsay done")
    await idle(rt, view.id)
    assert await usd_spent(rt, view.id) == pytest.approx(0.05)
    rt.submit(view.id, "cost 0.07\nsay again")  # cumulative: this turn cost 0.02
    await idle(rt, view.id)
    assert await usd_spent(rt, view.id) == pytest.approx(0.07)
    usage = await rt.store.turns.list_usage(view.id)
    costs = [float(str(u["cost_usd"] or 0)) for u in usage]
    assert sum(costs) == pytest.approx(0.07)
    assert sum(int(u["total_tokens"]) for u in usage) == 1500  # type: ignore[call-overload]  # the agent's tokens, not priced again
    assert view.spend.usd == pytest.approx(0.07) and view.usage.total_tokens == 1500
    assert budget_label(rt, view.id) == "$0.07"
    rt.budgets.set_budget(view.id, "session", "1usd")
    assert budget_label(rt, view.id) == "$0.07 of $1.00 (7%)"
    panel = SimpleNamespace(number=1, view=view, agent_controls=None)
    [row] = collect_rows({view.id: panel}, ActivityLog(), rt)  # type: ignore[dict-item]
    assert "$0.07" in row.cells() and "7% of $1.00" in row.cells()
    await rt.shutdown()

    again = await aenv.runtime()  # after a restart the stored spend is the session's
    [restored] = await again.opening.restore()
    assert restored.spend.usd == pytest.approx(0.07)
    await again.shutdown()


async def test_a_session_cap_in_usd_pauses_the_next_prompt_before_it_reaches_the_agent(
    aenv: AcpEnv, tmp_path: Path
) -> None:
    log = tmp_path / "agent.log"
    rt = await aenv.runtime(FAKE_ACP_LOG=str(log))
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "cost 0.06\nsay first")
    await idle(rt, view.id)
    rt.budgets.set_budget(view.id, "session", "0.05usd")
    rt.submit(view.id, "say second")
    sink = aenv.sink
    await sink.wait_for(lambda: bool(sink.of(ev.BudgetPaused, view.id)), HANG_GUARD_S)
    [pause] = sink.of(ev.BudgetPaused, view.id)
    assert (pause.level, pause.kind) == ("session", "usd") and "$0.06 of $0.05" in pause.reason
    assert view.state is SessionState.BUDGET
    assert rt.budgets.stop_paused(view.id)
    await idle(rt, view.id)
    result = view.last_result
    assert result is not None and result.error_kind == "budget" and "not sent" in (result.error or "")
    assert "prompt say second" not in calls(log)
    await rt.shutdown()


async def test_a_usage_update_crossing_the_cap_mid_turn_cancels_the_turn(
    aenv: AcpEnv, tmp_path: Path
) -> None:
    log = tmp_path / "agent.log"
    rt = await aenv.runtime(FAKE_ACP_LOG=str(log))
    view = await aenv.session(rt, "q")
    rt.budgets.set_budget(view.id, "session", "0.05usd")
    rt.submit(view.id, "cost 0.03\ncost 0.08\nwait")
    await idle(rt, view.id)
    result = view.last_result
    assert result is not None and result.status == "failed" and result.error_kind == "budget", result
    assert "session budget: spent $0.08 of $0.05" in (result.error or "")
    assert "session/cancel" in (result.error or "")
    assert calls(log)[-1] == "cancel"  # the agent was told to stop
    assert await usd_spent(rt, view.id) == pytest.approx(0.08)
    await rt.shutdown()


async def test_another_currency_is_shown_and_not_counted_in_usd(aenv: AcpEnv, tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    rt = await aenv.runtime(FAKE_ACP_LOG=str(log))
    view = await aenv.session(rt, "q")
    rt.budgets.set_budget(view.id, "session", "0.01usd")
    rt.submit(view.id, "cost 1.5 EUR\ntokens 100 50\nsay one")
    await idle(rt, view.id)
    rt.submit(view.id, "cost 2.25 EUR\nsay two")
    await idle(rt, view.id)
    said = notices(aenv.sink, view.id)
    assert sum("reports its cost in EUR" in n and "not counted" in n for n in said) == 1  # once
    assert "agent cost: 1.5000 EUR for its session so far" in said
    assert "agent cost: 2.2500 EUR for its session so far" in said
    # the USD cap cannot count it: said once, and the prompts went on (tokens still counted)
    assert sum("budget of $0.01 cannot be counted" in n for n in said) == 1
    assert view.last_result is not None and view.last_result.status == "completed"
    assert await usd_spent(rt, view.id) is None and view.usage.total_tokens == 150
    assert "prompt cost 2.25 EUR" in calls(log)
    await rt.shutdown()


async def test_a_new_agent_session_counts_its_cost_from_zero(aenv: AcpEnv) -> None:
    rt = await aenv.runtime()
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "cost 0.05\nsay one")
    await idle(rt, view.id)
    await rt.lifecycle.start_new_agent_session(view.id)  # /agent new: the new session's cost starts at 0
    rt.submit(view.id, "cost 0.01\nsay two")
    await idle(rt, view.id)
    assert await usd_spent(rt, view.id) == pytest.approx(0.06)
    await rt.shutdown()
