"""The "always allow" rule editor (fresh-user finding, tryout2): ``a`` always moves focus to the editor
and shows it (in a small panel it was below the fold, so a prompt typed there became the rule), the
editor says what Enter and Esc do, and a rule that cannot be saved keeps the ask open with the error
(it ran the call "allowed once" before). Real Runtime (real policy, tools, trust) on the loopback
replay server, real app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Input, Static

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import ParagentsApp, make_app
from paragents.ui.widgets.answer_bar import FOCUS_KEY
from paragents.ui.widgets.approval_bar import RULES_HINT, ApprovalBar
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.bars import plain
from tests.ui.conftest import wait_until
from tests.ui.helpers import started
from tests.ui.prompt_input import feed

SMALL = (100, 24)
"""A terminal where the bar does not fit its panel: the editor opens below the fold."""


def touch_call(server: ReplayServer) -> None:
    call = {"id": "c1", "name": "run_command", "arguments": json.dumps({"command": "touch made.txt"})}
    server.add(
        [ScriptedResponse.from_message(None, tool_calls=[call]), ScriptedResponse.from_message("done")],
        session="s1",
    )


async def asked(pilot: Any, app: ParagentsApp) -> tuple[SessionPanel, ApprovalBar]:
    (panel,) = await started(pilot, app)
    await pilot.press(*"go", "enter")
    await wait_until(pilot, lambda: panel.approval_bar is not None, "the approval bar")
    bar = panel.approval_bar
    assert bar is not None
    return panel, bar


def in_view(app: ParagentsApp, widget: Input) -> bool:
    """True when ``widget`` is drawn on the screen now (not scrolled out of its panel)."""
    return widget in app.screen._compositor.visible_widgets


async def test_a_opens_the_editor_focused_in_view_with_its_hint(
    make_runtime: Any, replay: ReplayServer
) -> None:
    touch_call(replay)
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SMALL) as pilot:
        panel, bar = await asked(pilot, app)
        editor = bar.query_one("#rules", Input)
        feed(app, "\x07a")  # ctrl+g, a: in one read
        await wait_until(pilot, lambda: app.focused is editor, "the editor focused")
        await wait_until(pilot, lambda: in_view(app, editor), "the editor scrolled into view")
        hint = bar.query_one("#rules-hint", Static)
        assert hint.display and bar.has_class("-rules")
        assert "Enter saves the rule(s) and allows" in plain(hint) and "Esc goes back" in RULES_HINT
        feed(app, "x")
        await pilot.pause()
        assert "x" in editor.value and panel.prompt_box.input.text == ""  # the key went to the editor
        await app.shutdown_runtime()


async def test_a_rule_that_does_not_parse_keeps_the_ask_open_and_runs_nothing(
    make_runtime: Any, replay: ReplayServer
) -> None:
    touch_call(replay)
    runtime = await make_runtime()
    project: Path = runtime.project_dir
    app = make_app(runtime)
    async with app.run_test(size=SMALL) as pilot:
        panel, bar = await asked(pilot, app)
        editor = bar.query_one("#rules", Input)
        await pilot.press(FOCUS_KEY, "a")
        editor.value = ""
        feed(app, "please fix the tests\r")  # the user's next prompt, typed into the editor
        error = bar.query_one("#rules-error", Static)
        await wait_until(pilot, lambda: "does not start with a tool name" in plain(error), "the error")
        assert not bar.request.reply.done() and panel.approval_bar is bar
        assert app.focused is editor and editor.value == "please fix the tests"
        assert in_view(app, editor) or editor.display
        assert not (project / "made.txt").exists()
        assert not (project / ".paragents" / "permissions.local.json").exists()
        await pilot.press("escape", "n")  # the user answers otherwise: deny
        await wait_until(pilot, lambda: bar.request.reply.done(), "the answer")
        assert bar.request.reply.result().kind == "reject_once"
        await runtime.wait_idle(panel.view.id)
        assert not (project / "made.txt").exists()
        await app.shutdown_runtime()


async def test_an_untrusted_permissions_file_refuses_the_rule_and_the_call_waits(
    make_runtime: Any, replay: ReplayServer
) -> None:
    touch_call(replay)
    runtime = await make_runtime()
    project: Path = runtime.project_dir
    (project / "permissions.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))  # not trusted
    app = make_app(runtime)
    async with app.run_test(size=SMALL) as pilot:
        _panel, bar = await asked(pilot, app)
        await pilot.press(FOCUS_KEY, "a", "enter")  # the suggested rule, as offered
        error = bar.query_one("#rules-error", Static)
        await wait_until(pilot, lambda: "changed outside paragents" in plain(error), "the error")
        assert not bar.request.reply.done() and not (project / "made.txt").exists()
        await pilot.press("escape", "y")  # allowed once, chosen by the user
        await wait_until(pilot, lambda: (project / "made.txt").exists(), "the call to run")
        assert bar.request.reply.result().kind == "allow_once"
        await app.shutdown_runtime()
