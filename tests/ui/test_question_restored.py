""" "needs you: question" survives a restart: a session whose last turn ended with a question is
counted in the header and listed in the inbox again after the app restarts (it lived only in the
session view). Real Runtime on the loopback replay server, real app, restarted on the same store."""

from __future__ import annotations

from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import make_app
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import replies, started

QUESTION = "Should I also update the tests?"


async def test_a_question_the_last_turn_ended_with_is_restored(
    make_runtime: Any, replay: ReplayServer
) -> None:
    replay.add(ScriptedResponse.from_message(f"I changed app.py.\n\n{QUESTION}"), session="s1")
    replay.add(ScriptedResponse.from_message("Done, nothing to ask."), session="s2")
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"change it", "enter")
        await wait_until(pilot, lambda: panel.view.question == QUESTION, "the question")
        await pilot.press("ctrl+n")
        second = (await started(pilot, app, 2))[1]
        await pilot.press(*"do it", "enter")
        await wait_until(pilot, lambda: replies(second) == ["Done, nothing to ask."], "the plain reply")
        await pilot.press("ctrl+q")

    app2 = make_app(await make_runtime())
    async with app2.run_test(size=SIZE) as pilot:
        first, other = await started(pilot, app2, 2)
        assert first.view.question == QUESTION
        assert other.view.question is None  # a reply that asks nothing restores no question
        app2.update_header()
        assert "1 needs you" in app2.sub_title, app2.sub_title
        await app2.shutdown_runtime()
