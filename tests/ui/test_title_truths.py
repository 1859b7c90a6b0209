"""What a panel title says is true: a fork's title shows the context it copied (not ``ctx 0%``) and
an external agent's title no "0 tok" it cannot know."""

from __future__ import annotations

from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import make_app
from tests.ui.conftest import SIZE, wait_until
from tests.ui.feeding import feed
from tests.ui.helpers import started

USAGE = {"prompt_tokens": 3000, "completion_tokens": 200, "total_tokens": 3200}


async def test_a_forked_panel_shows_the_context_it_copied(make_runtime: Any, replay: ReplayServer) -> None:
    replay.add(ScriptedResponse.from_message("an answer", usage=USAGE), session="s1")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        runtime.submit(panel.session_id, "question")
        await runtime.wait_idle(panel.session_id)
        await wait_until(pilot, lambda: "ctx 0%" not in panel.title_text().plain, "the source's context")
        source_ctx = panel.title_text().plain.split("ctx ")[1].split("%")[0]
        assert int(source_ctx) > 0
        await pilot.press(*"/fork", "enter")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the fork's panel")
        fork = list(app.panels.values())[1]
        await pilot.pause()
        assert f"ctx {source_ctx}%" in fork.title_text().plain, fork.title_text().plain
        await app.action_quit()


async def test_an_external_agents_title_says_no_token_count_it_does_not_know() -> None:
    from pathlib import Path

    from paragents.events import UsageUpdated
    from paragents.models import Usage
    from paragents.sessions import SessionView
    from paragents.sessions.acp import MODEL_PREFIX
    from paragents.ui.widgets.session_panel import SessionPanel
    from tests.ui.panel_app import PanelApp

    app = PanelApp()
    agent_view = SessionView("s1", "helper", f"{MODEL_PREFIX}claude", "default", Path("."))
    app.compose = lambda: iter([SessionPanel(agent_view, 1)])  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        await feed(panel, UsageUpdated("s1", Usage(0, 0, 0), 780, 1000))
        await pilot.pause()
        title = panel.title_text().plain
        assert "ctx 78%" in title and "0 tok" not in title
        await feed(panel, UsageUpdated("s1", Usage(100, 20, 120), 780, 1000))  # it reports tokens
        assert "120 tok" in panel.title_text().plain


async def test_a_session_waiting_for_a_turn_slot_says_why(make_runtime: Any, replay: ReplayServer) -> None:
    import asyncio

    from paragents.models import SessionState
    from tests.scripted import gated

    runtime = await make_runtime()
    runtime.scheduler.max_parallel = 1
    gate = asyncio.Event()
    replay.add(gated("busy", gate), session="s1")
    replay.add(ScriptedResponse.from_message("my turn"), session="s2")
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (first,) = await started(pilot, app)
        await app.open_session("s2")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the second panel")
        second = list(app.panels.values())[1]
        runtime.submit(first.session_id, "long one")
        await wait_until(pilot, lambda: first.view.state is SessionState.RUNNING, "the first turn")
        runtime.submit(second.session_id, "short one")
        await wait_until(pilot, lambda: second.view.state is SessionState.QUEUED, "the wait")
        title = second.title_text().plain
        assert "queued: waiting for a turn slot: 1 running, max_parallel_turns = 1" in title, title
        gate.set()
        await runtime.wait_idle()
        await wait_until(pilot, lambda: second.view.state is SessionState.IDLE, "its turn done")
        await app.action_quit()
