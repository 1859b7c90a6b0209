"""Approvals are only given deliberately, and show what will happen (approval and conflict bars).

A panel fed with hand-made asks: keys typed for the prompt stay in the prompt, answer keys do nothing
until the user moved to the bar (ctrl+g or a click), buttons answer on a click, and the ask shows
the diff / content / command + cwd and the rule as inert text."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Button, Input

from paragents.events import ConflictDetected, PermissionAnswer, PermissionRequested
from paragents.models import CallPreview, ToolCall
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.widgets.answer_bar import FOCUS_KEY
from paragents.ui.widgets.approval_bar import ApprovalBar
from paragents.ui.widgets.conflict_bar import describe
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.bars import bar_text, rm_ask
from tests.ui.conftest import SIZE
from tests.ui.feeding import feed
from tests.ui.panel_app import PanelApp

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n def f():\n-    return 1\n+    return 2\n"


async def test_keys_typed_while_an_ask_arrives_stay_in_the_prompt() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        prompt = panel.prompt_box.input
        await pilot.press("s", "a")
        request = rm_ask()
        await feed(panel, request)  # the ask arrives mid-word
        await pilot.press(*"y hi")
        await pilot.pause()
        assert prompt.value == "say hi" and prompt.has_focus
        assert not request.reply.done() and panel.approval_bar is not None
        # and with an empty prompt (the old bar took focus then): "try again" stays text
        prompt.value = ""
        second = rm_ask("r2")
        await feed(panel, second)
        await pilot.press(*"try again")
        await pilot.pause()
        assert prompt.value == "try again"
        assert not request.reply.done() and not second.reply.done()


async def test_answer_keys_do_nothing_until_the_user_moves_to_the_bar() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        request = rm_ask()
        await feed(panel, request)
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None and not bar.armed
        for _ in range(6):  # Tab never lands on the bar
            await pilot.press("tab")
            assert app.focused is not bar
        bar.can_focus = True  # focus put there by anything but the user's ctrl+g / click...
        bar.focus()
        await pilot.pause()
        await pilot.press("y", "s", "n")  # ...does not make its keys answer
        await pilot.pause()
        assert not request.reply.done()
        panel.prompt_box.input.focus()
        await pilot.press(FOCUS_KEY)
        await pilot.pause()
        assert bar.armed and bar.has_focus and "y allow once" in bar_text(bar)
        await pilot.press(FOCUS_KEY)  # and back to the prompt: disarmed
        await pilot.pause()
        assert panel.prompt_box.input.has_focus and not bar.armed
        await pilot.press("y")
        assert not request.reply.done()
        await pilot.press(FOCUS_KEY, "y")
        await pilot.pause()
        assert request.reply.result() == PermissionAnswer("allow_once")
        assert panel.prompt_box.input.has_focus and panel.prompt_box.input.value == "y"


async def test_buttons_answer_on_a_click_and_never_take_focus() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        first, second = rm_ask("r1"), rm_ask("r2")
        await feed(panel, first)
        await feed(panel, second)
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None
        labels = [str(b.label) for b in bar.query(Button)]
        assert labels == ["Allow once", "Allow for session", "Always allow…", "Deny", "Deny with note…"]
        assert not any(b.can_focus for b in bar.query(Button))
        await pilot.click(bar.query_one("#allow_once", Button))
        await pilot.pause()
        assert first.reply.result() == PermissionAnswer("allow_once")
        bar = panel.approval_bar
        assert bar is not None and bar.request is second
        await pilot.click(bar.query_one("#reject_with_note", Button))
        await pilot.pause()
        note = bar.query_one("#note", Input)
        assert note.has_focus
        await pilot.press(*"not now", "enter")
        await pilot.pause()
        assert second.reply.result() == PermissionAnswer("reject_with_note", note="not now")


async def test_an_external_agents_ask_is_answered_with_the_agents_own_options_as_plain_text() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        options = (
            ("allow_once", "[b]Yes[/b], once"),
            ("allow_always", "Always for rm"),
            ("reject_once", "No, tell qwen"),
            ("reject_always", "Never"),
        )
        request = rm_ask(agent_options=options)
        await feed(panel, request)
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None
        labels = [str(b.label) for b in bar.query(Button)]
        # the agent's names label the answers that carry them; markup in them stays text; no note
        assert labels == ["[b]Yes[/b], once", "Allow for session", "Always for rm…", "No, tell qwen"]
        await pilot.press(FOCUS_KEY)
        await pilot.pause()
        keys = bar_text(bar)
        assert "y [b]Yes[/b], once" in keys and "n No, tell qwen" in keys and "d deny" not in keys
        await pilot.press("d")  # deny with note is not offered: the note could not reach the agent
        await pilot.pause()
        assert not request.reply.done() and not bar.has_class("-note")
        await pilot.press("n")
        await pilot.pause()
        assert request.reply.result() == PermissionAnswer("reject_once")


async def test_the_ask_shows_the_command_its_cwd_and_the_rule_as_plain_text() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        command = CallPreview("command", "rm -rf [bold]build[/bold]", "bash -c", cwd="/work/p/[red]x")
        await feed(panel, rm_ask(preview=command, rule="Bash(rm *)", rule_scope="project"))
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None
        text = bar_text(bar)
        assert "$ rm -rf [bold]build[/bold]" in text and "in /work/p/[red]x" in text
        assert "rule: Bash(rm *) (project)" in text


async def test_the_ask_shows_the_diff_of_an_edit_and_the_head_of_a_new_file() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        loop = asyncio.get_running_loop()
        call = ToolCall("c1", "edit_file", '{"path": "app.py"}')
        diff = CallPreview("diff", DIFF.rstrip("\n"), "edits /p/app.py (+1 -1 lines)")
        edit = PermissionRequested(
            "s1", "r1", call, "edit_file app.py", "no rule", (), loop.create_future(), diff, None, "default"
        )
        await feed(panel, edit)
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None
        text = bar_text(bar)
        assert "-    return 1" in text and "+    return 2" in text and " def f():" in text
        assert "rule: none matched (default decided)" in text
        assert "diff: edits /p/app.py (+1 -1 lines)" in str(bar.query_one("CollapsibleTitle").render())
        content = CallPreview("content", "line 0\nline 1", "new file /p/x.txt: 900 lines", omitted=898)
        write = PermissionRequested(
            "s1", "r2", call, "write_file x.txt", "no rule", (), loop.create_future(), content
        )
        edit.reply.set_result(PermissionAnswer("reject_once"))
        await feed(panel, write)
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None and bar.request is write
        text = bar_text(bar)
        assert "line 0\nline 1" in text and "… 898 more lines" in text


def conflict(kind: str, reason: str, since: float, diff: str | None = None) -> ConflictDetected:
    call = ToolCall("c1", "edit_file", '{"path": "src/app.py"}')
    choices = ("reread", "run_anyway", "skip") if kind == "stale_read" else ("wait", "run_anyway", "skip")
    return ConflictDetected(
        "s1", "k1", call, "edit_file src/app.py", kind, "/p/src/app.py", "api" if reason else "",  # type: ignore[arg-type]
        reason, since, diff, choices, asyncio.get_running_loop().create_future(),  # type: ignore[arg-type]
    )  # fmt: skip


async def test_conflict_text_keeps_diff_indentation_and_says_what_the_holder_did() -> None:
    stale = describe(conflict("stale_read", "", 0, DIFF), 300).plain
    assert "\n  -    return 1\n  +    return 2" in stale
    held = describe(conflict("reservation", "write_file src/app.py (3 lines)", 1000), 1185).plain
    assert "api wrote /p/src/app.py 3m05s ago, holds it until its turn ends" in held
    assert "is writing" not in held
    queued = describe(conflict("reservation", "waiting to run: edit_file src/app.py", 1000), 1010).plain
    assert "api is also waiting to write /p/src/app.py, and asked first (10s ago)" in queued


async def test_conflict_bar_answers_by_click_or_armed_keys_only() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        event = conflict("reservation", "edit_file src/app.py", 0)
        await feed(panel, event)
        await pilot.pause()
        bar = panel.conflict_bar
        assert bar is not None and panel.prompt_box.input.has_focus
        await pilot.press(*"wrs")
        assert not event.reply.done() and panel.prompt_box.input.value == "wrs"
        assert [str(b.label) for b in bar.query(Button)] == ["Wait", "Run anyway", "Skip"]
        await pilot.click(bar.query_one("#skip", Button))
        await pilot.pause()
        assert event.reply.result() == "skip"
        second = conflict("stale_read", "", 0, DIFF)
        await feed(panel, second)
        await pilot.pause()
        await pilot.press(FOCUS_KEY, "w")  # armed, but wait is not offered for a stale read
        await pilot.pause()
        assert not second.reply.done()
        await pilot.press("e")
        await pilot.pause()
        assert second.reply.result() == "reread"


async def test_an_ask_arriving_in_an_open_inbox_does_not_take_the_keys(tmp_path: Path) -> None:
    from tests.ui.snapshot_app import app_with, feed, settle

    app, runtime = app_with(tmp_path, ["api"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f2")  # nothing waits yet
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InboxScreen) and not screen.items
        request = rm_ask()
        feed(runtime, [request])
        await settle(pilot)
        bar = screen.query_one(ApprovalBar)
        assert not bar.armed
        await pilot.press("y")
        await settle(pilot)
        assert not request.reply.done()
        await pilot.press("down")  # moving in the list does not arm it
        await settle(pilot)
        assert not bar.armed
        await pilot.press("ctrl+g")  # the deliberate act aimed at the bar
        await settle(pilot)
        assert bar.armed
        await pilot.press("y")
        await settle(pilot)
        assert request.reply.result() == PermissionAnswer("allow_once")


async def test_the_bar_shows_the_destructive_flag_of_the_one_classifier() -> None:
    """Issue 26 item 8: the approval bar says "destructive" as the phone page does
    (paragents.permissions.destructive), for forms the old check missed (a here-string into bash)."""
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        call = ToolCall("c2", "run_command", '{"command": "bash <<< \'rm -rf ~\'"}')
        request = PermissionRequested(
            "s1", "r2", call, "run_command bash <<< 'rm -rf ~'", "no rule allows it", (),
            asyncio.get_running_loop().create_future(), None,
        )  # fmt: skip
        await feed(panel, request)
        await pilot.pause()
        assert panel.approval_bar is not None
        shown = bar_text(panel.approval_bar)
        assert "destructive: `rm -rf ~` deletes or overwrites files" in shown
        request.reply.set_result(PermissionAnswer("reject_once"))
