"""Budget and loop-guard pauses show a bar in the session's own panel that answers like every other
bar: only after ctrl+g (or a click), never from typed text; the title says which pause it is; a bad
"raise to" value is one toast. A real Runtime against the loopback server."""

from __future__ import annotations

import json
from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.models import SessionState
from paragents.ui.app import make_app
from paragents.ui.widgets.budget_bar import BudgetBar
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started

BIG = {"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 10000}


def listing(call_id: str) -> ScriptedResponse:
    args = json.dumps({"path": "a"})
    return ScriptedResponse.from_message(
        tool_calls=[{"id": call_id, "name": "list_dir", "arguments": args}], usage=BIG
    )


async def test_a_budget_pause_shows_its_bar_in_the_panel_and_answers_only_after_ctrl_g(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    (runtime.project_dir / "a").mkdir()
    replay.add([listing("c1"), ScriptedResponse.from_message("all done", usage=BIG)], session="s1")
    app = make_app(runtime)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        (panel,) = await started(pilot, app)
        runtime.budgets.set_budget(panel.session_id, "session", "12k")
        runtime.submit(panel.session_id, "look")
        await wait_until(pilot, lambda: panel.budget_bar is not None, "the budget bar in the panel")
        bar = panel.budget_bar
        assert bar is not None and not bar.armed
        assert "paused: budget" in panel.title_text().plain and "1 needs you" in panel.title_text().plain
        await pilot.press(*"os", "enter")  # typed for the prompt: a prompt, never an answer
        await wait_until(pilot, lambda: bool(panel.view.queue), "the typed text queued as a prompt")
        assert panel.view.state is SessionState.BUDGET and not bar.pause.reply.done()
        assert app.check_action("focus_ask", ()) is True  # the footer offers ctrl+g
        await pilot.press("ctrl+g")
        assert bar.armed and "o allow one more request" in str(bar.query_one(".keys").render())
        await pilot.press("r", *"lots", "enter")  # a value that does not parse: one toast
        said = lambda: [n.message for n in app._notifications if "does not parse" in n.message]  # noqa: E731
        await wait_until(pilot, lambda: bool(said()), "the error toast")
        await pilot.pause()
        assert len(said()) == 1 and panel.view.state is SessionState.BUDGET
        await pilot.press("escape", "o")  # back to the bar; allow one more request
        await wait_until(pilot, lambda: panel.budget_bar is not bar, "the answered bar gone")
        assert bar.pause.reply.result() == "one_more"
        await wait_until(pilot, lambda: len(replay.requests) >= 2, "the held request sent")
        # the prompt typed meanwhile ("os") runs next and pauses at the cap again: a new bar
        await wait_until(pilot, lambda: panel.budget_bar is not None, "the queued prompt's pause")
        await pilot.press("ctrl+g", "s")
        await wait_until(pilot, lambda: panel.budget_bar is None, "stopped")
        await wait_until(pilot, lambda: panel.view.state is not SessionState.BUDGET, "the turn ended")
        assert len(replay.requests) == 2
        await app.shutdown_runtime()


async def test_a_loop_guard_pause_says_so_in_the_title_and_goes_on_with_g(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    (runtime.project_dir / "a").mkdir()
    replay.add(
        [listing("c1"), listing("c2"), listing("c3"), ScriptedResponse.from_message("done", usage=BIG)],
        session="s1",
    )
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        runtime.submit(panel.session_id, "go")
        await wait_until(pilot, lambda: panel.budget_bar is not None, "the loop-guard bar")
        title = panel.title_text().plain
        assert "paused: loop guard" in title and "budget" not in title
        bar = panel.budget_bar
        assert bar is not None and bar.loop
        await pilot.press("ctrl+g", "r", "o")  # no cap to raise, no "one more": only g and s
        assert panel.view.state is SessionState.BUDGET and not bar.pause.reply.done()
        await pilot.press("g")
        await wait_until(pilot, lambda: panel.view.state is SessionState.IDLE, "the turn to go on and end")
        assert len(replay.requests) == 4
        await app.shutdown_runtime()


def test_the_budget_bar_is_an_answer_bar() -> None:
    from paragents.ui.widgets.answer_bar import AnswerBar

    assert issubclass(BudgetBar, AnswerBar)


async def test_an_answer_from_the_phone_page_takes_the_panels_bar_away(
    make_runtime: Any, replay: ReplayServer
) -> None:
    """First answer wins: the page (``paragents serve``) answers the pause by its id; the terminal's
    bar goes, and the bar's own answer after it would be refused, naming the page's."""
    runtime = await make_runtime()
    (runtime.project_dir / "a").mkdir()
    replay.add([listing("c1"), ScriptedResponse.from_message("all done", usage=BIG)], session="s1")
    app = make_app(runtime)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        (panel,) = await started(pilot, app)
        runtime.budgets.set_budget(panel.session_id, "session", "12k")
        runtime.submit(panel.session_id, "look")
        await wait_until(pilot, lambda: panel.budget_bar is not None, "the budget bar in the panel")
        bar = panel.budget_bar
        assert bar is not None
        by = "web:key (client 127.0.0.1:5000)"
        assert runtime.budgets.answer_pause(bar.pause.pause_id, "one_more", "", by).accepted
        await wait_until(pilot, lambda: panel.budget_bar is None, "the answered bar gone")
        late = runtime.budgets.answer_pause(bar.pause.pause_id, "stop", "", "user")
        assert late.status == "already_answered" and by in late.message
        await wait_until(pilot, lambda: panel.view.state is not SessionState.BUDGET, "the turn went on")
        await runtime.wait_idle(panel.session_id)
        assert len(replay.requests) == 2
        await app.shutdown_runtime()
