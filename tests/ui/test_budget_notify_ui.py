"""The app's notifications and budget rows, with a real Runtime against the loopback server: a
background session's approval notifies (naming it) and the focused one's does not; a session held at
its budget has an inbox row with raise / one more / stop, and raising it there resumes the turn."""

from __future__ import annotations

import json
from typing import Any

from paragents.events import PermissionAnswer
from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.models import SessionState
from paragents.ui.app import make_app
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.widgets.budget_bar import BudgetBar
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started

BIG = {"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 10000}


def command_call(cmd: str, **kw: Any) -> list[ScriptedResponse]:
    args = json.dumps({"command": cmd})
    return [
        ScriptedResponse.from_message(
            tool_calls=[{"id": "c1", "name": "run_command", "arguments": args}], **kw
        ),
        ScriptedResponse.from_message("ok"),
    ]


async def test_background_approval_notifies_and_the_focused_one_does_not(
    make_runtime: Any, replay: ReplayServer
) -> None:
    replay.add(command_call("touch focused.txt"), session="s1")
    replay.add(command_call("touch build.txt"), session="bg")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (front,) = await started(pilot, app)
        await app.open_session("bg")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the second panel")
        back = next(p for p in app.panels.values() if p is not front)
        app.focus_panel(front.session_id)
        await pilot.pause()
        notifier = app.notifier
        assert notifier is not None
        notifier.digest_window = 0
        runtime.submit(front.session_id, "make a file")
        runtime.submit(back.session_id, "make another")
        await wait_until(pilot, lambda: bool(front.view.pending) and bool(back.view.pending), "both asks")
        notifier.tick()  # (the app's own 1 s tick may have sent it already)
        assert [n.text for n in notifier.sent] == ["bg · approve `touch build.txt` (run_command) · f2"]
        assert notifier.title() == "paragents · 2 need you"
        for panel in (front, back):
            next(iter(panel.view.pending.values())).reply.set_result(PermissionAnswer("reject_once"))
        await wait_until(pilot, lambda: not runtime.scheduler.running_count, "both turns to end")
        await app.shutdown_runtime()


async def test_budget_pause_has_an_inbox_row_and_raising_it_there_resumes(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    (runtime.project_dir / "a").mkdir()
    listing = json.dumps({"path": "a"})
    replay.add(
        [
            ScriptedResponse.from_message(
                tool_calls=[{"id": "c1", "name": "list_dir", "arguments": listing}], usage=BIG
            ),
            ScriptedResponse.from_message("all done", usage=BIG),
        ],
        session="s1",
    )
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        runtime.budgets.set_budget(panel.session_id, "session", "12k")
        runtime.submit(panel.session_id, "look")
        await wait_until(pilot, lambda: panel.view.state is SessionState.BUDGET, "the budget pause")
        assert len(replay.requests) == 1
        assert "10k of 12k tok (83%)" in panel.title_text().plain
        assert "1 needs you" in app.sub_title
        await pilot.press("f2")
        await wait_until(
            pilot, lambda: isinstance(app.screen, InboxScreen) and bool(app.screen.items), "inbox"
        )
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        (item,) = screen.items
        assert item.kind == "budget"
        assert item.summary == "s1 reached 10k of 12k: raise to … / allow one more request / stop"
        bar = screen.query_one(BudgetBar)
        await pilot.press(*"5usd")  # typed before arming: goes nowhere, answers nothing
        assert (
            not bar.armed and panel.view.state is SessionState.BUDGET and isinstance(app.screen, InboxScreen)
        )
        await pilot.press("ctrl+g", "r", *"100k", "enter")  # the inbox says ctrl+g answers with keys
        await wait_until(pilot, lambda: panel.view.state is SessionState.IDLE, "the resumed turn to finish")
        assert len(replay.requests) == 2
        await app.shutdown_runtime()
