"""The one-line forms of an ask (the bar's headline and ``why:``, the transcript row, the f2 list row)
draw a command's control characters as symbols (ESC ``␛``, BEL ``␇``), as the bar's command and ctrl+o
already did: nothing is silently dropped, so the line shows what runs (fresh-user finding after issue
29). Real Runtime (real tools and policy) on the loopback replay server, real app."""

from __future__ import annotations

import json
from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import ParagentsApp, make_app
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.widgets.tool_call import ToolEntry
from tests.ui.conftest import wait_until
from tests.ui.helpers import started

BIG = (220, 70)
COMMAND = "echo hi \x1b[31mRED\x1b[0m \x07bell; ls"
SHOWN = "echo hi \u241b[31mRED\u241b[0m \u2407bell; ls"
"""COMMAND as every form shows it: ESC as "␛", BEL as "␇"."""


def screen_text(app: ParagentsApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_every_one_line_form_of_an_ask_shows_control_characters(
    make_runtime: Any, replay: ReplayServer
) -> None:
    call = {"id": "c1", "name": "run_command", "arguments": json.dumps({"command": COMMAND})}
    replay.add(
        [ScriptedResponse.from_message(None, tool_calls=[call]), ScriptedResponse.from_message("done")],
        session="s1",
    )
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=BIG) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: panel.approval_bar is not None, "the approval bar")
        await pilot.pause()
        shown = screen_text(app)
        assert "\x1b" not in shown and "\x07" not in shown
        assert f"Permission needed: run_command {SHOWN}" in shown  # the headline
        assert "why: no rule allows `echo hi \u241b[31mRED\u241b[0m \u2407bell`" in shown
        [row] = [e for e in panel.transcript.records if isinstance(e, ToolEntry)]
        assert row.summary.startswith(f"run_command {SHOWN}")  # the transcript row
        assert f"? run_command  {SHOWN}" in shown  # the tool's name once (it was repeated)
        assert "run_command  run_command" not in shown
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, InboxScreen), "the inbox")
        await pilot.pause()
        inbox = screen_text(app)
        assert f"approval  run_command {SHOWN}" in inbox  # the f2 list row
        assert "\x1b" not in inbox
        await app.shutdown_runtime()
