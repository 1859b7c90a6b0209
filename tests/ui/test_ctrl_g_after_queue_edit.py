"""ctrl+g always reaches the pending ask's bar, also right after a queued prompt was removed or
edited with the mouse (fresh-user finding after issue 29: the first ctrl+g then went to the prompt
box, and the answer key typed after it landed there). Real Runtime on the loopback replay server,
real app, real clicks."""

from __future__ import annotations

import json
from typing import Any

from textual.widgets import Button

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.models import CallPreview, SessionState
from paragents.ui.app import make_app
from paragents.ui.widgets.answer_bar import FOCUS_KEY
from paragents.ui.widgets.prompt_area import PromptArea
from paragents.ui.widgets.prompt_input import QueuedItem
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.bars import rm_ask
from tests.ui.conftest import SIZE, wait_until
from tests.ui.feeding import feed
from tests.ui.helpers import started
from tests.ui.panel_app import PanelApp


def _ask_then_reply(replay: ReplayServer) -> None:
    args = json.dumps({"path": "a.txt", "content": "hello\n"})
    call = {"id": "call_1", "name": "write_file", "arguments": args}
    replay.add(
        [ScriptedResponse.from_message(None, tool_calls=[call]), ScriptedResponse.from_message("done")],
        session="s1",
    )


async def _queue_two_behind_an_ask(pilot: Any, panel: SessionPanel) -> None:
    await pilot.press(*"write it", "enter")
    await wait_until(pilot, lambda: panel.approval_bar is not None, "the approval bar")
    assert panel.view.state == SessionState.WAITING
    await pilot.press(*"second", "enter")
    await pilot.press(*"third", "enter")
    await wait_until(pilot, lambda: len(panel.query(QueuedItem)) == 2, "two queued prompts shown")


async def _ctrl_g_answers(pilot: Any, panel: SessionPanel) -> None:
    bar = panel.approval_bar
    assert bar is not None
    await pilot.press(FOCUS_KEY)
    await pilot.pause()
    assert bar.armed and bar.has_focus, f"ctrl+g left focus on {pilot.app.focused!r}"
    await pilot.press("y")
    await wait_until(pilot, lambda: bar.request.reply.done(), "the answer")
    assert "y" not in panel.prompt_box.input.value


async def test_ctrl_g_reaches_the_ask_after_removing_a_queued_prompt_with_the_mouse(
    make_runtime: Any, replay: ReplayServer
) -> None:
    _ask_then_reply(replay)
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await _queue_two_behind_an_ask(pilot, panel)
        third = next(item for item in panel.query(QueuedItem) if item.text == "third")
        await pilot.click(third.query_one(".remove", Button))
        await wait_until(pilot, lambda: len(panel.query(QueuedItem)) == 1, "third removed")
        await pilot.pause()
        assert panel.prompt_box.input.has_focus  # the removed button's focus came back to the prompt
        await _ctrl_g_answers(pilot, panel)
        await app.shutdown_runtime()


async def test_ctrl_g_reaches_the_ask_after_editing_a_queued_prompt_with_the_mouse(
    make_runtime: Any, replay: ReplayServer
) -> None:
    _ask_then_reply(replay)
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await _queue_two_behind_an_ask(pilot, panel)
        second = next(item for item in panel.query(QueuedItem) if item.text == "second")
        await pilot.click(second.query_one(".edit", Button))
        await wait_until(pilot, lambda: bool(second.query(PromptArea)), "the queued prompt's editor")
        await pilot.press("end", *"X", "enter")
        await wait_until(pilot, lambda: [q.text for q in panel.view.queue][:1] == ["secondX"], "the edit")
        await pilot.pause()
        assert panel.prompt_box.input.has_focus  # the gone editor's focus came back to the prompt
        await _ctrl_g_answers(pilot, panel)
        await app.shutdown_runtime()


async def test_ctrl_g_arms_a_bar_that_focus_fell_into_by_itself() -> None:
    """Focus that lands in an unarmed bar (its command preview) without ctrl+g is not "on the bar":
    ctrl+g arms that bar rather than going back to the prompt."""
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        await feed(panel, rm_ask(preview=CallPreview("command", "rm -rf build", cwd="/work")))
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None and not bar.armed
        inner = next(w for w in bar.query("*") if w.focusable)
        app.screen.set_focus(inner)
        await pilot.pause()
        await pilot.press(FOCUS_KEY)
        await pilot.pause()
        assert bar.armed and bar.has_focus
