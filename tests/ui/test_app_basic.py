"""Pilot tests of the main screen against the real Runtime and a loopback ReplayServer."""

from __future__ import annotations

from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.models import SessionState
from paragents.ui.app import make_app
from paragents.ui.widgets.transcript import AssistantBlock, AssistantEntry, UserPrompt
from tests.ui.conftest import SIZE, wait_until


async def test_startup_creates_one_session_and_answers_a_prompt(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    replay.add(
        ScriptedResponse.from_message(
            "Hello **there**", usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
        )
    )
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready, "startup")
        assert len(app.panels) == 1
        panel = next(iter(app.panels.values()))
        await pilot.press(*"hi there", "enter")
        await wait_until(pilot, lambda: bool(panel.query(AssistantBlock)), "the reply")
        await wait_until(pilot, lambda: panel.view.state == SessionState.IDLE, "idle")
        prompts = [str(w.render()) for w in panel.query(UserPrompt)]
        assert any("hi there" in p for p in prompts)
        reply = panel.transcript.records[-1]
        assert isinstance(reply, AssistantEntry) and reply.content == "Hello **there**"
        assert panel.view.usage.total_tokens == 13
        await app.shutdown_runtime()
