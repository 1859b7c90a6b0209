"""Widgets fed with hand-made core events: transcript bounds and streaming, approval answers."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.widgets import Button, Input, Static

from paragents.events import (
    MessageAdded,
    PermissionAnswer,
    PermissionRequested,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from paragents.models import ToolCall
from paragents.ui.widgets import live_reply as live_reply_module
from paragents.ui.widgets import transcript as transcript_module
from paragents.ui.widgets.answer_bar import FOCUS_KEY
from paragents.ui.widgets.approval_bar import ApprovalBar, parse_rules
from paragents.ui.widgets.live_reply import LiveReply
from paragents.ui.widgets.markdown_reply import MarkdownReply
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.tool_call import ToolEntry
from paragents.ui.widgets.transcript import AssistantEntry, TextEntry, Transcript
from tests.ui.conftest import SIZE
from tests.ui.feeding import feed
from tests.ui.panel_app import PanelApp


async def test_transcript_keeps_at_most_max_mounted_entries(monkeypatch: Any) -> None:
    monkeypatch.setattr(transcript_module, "MAX_MOUNTED", 20)
    monkeypatch.setattr(transcript_module, "RESTORE_MOUNTED", 20)
    history = []
    for i in range(30):
        history += [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]
    app = PanelApp(history)
    async with app.run_test(size=SIZE) as pilot:
        t = app.query_one(Transcript)
        await pilot.pause()
        assert len(t.records) == 60
        mounted = [c for c in t.children if c.id != "earlier"]
        assert len(mounted) == 20 and t.first_mounted == 40
        button = t.query_one("#earlier")
        assert "40 hidden" in str(button.render())
        t.show_earlier(10)
        await pilot.pause()
        assert t.first_mounted == 30
        assert len([c for c in t.children if c.id != "earlier"]) == 30
        # the oldest mounted widget is the record at first_mounted, in order
        assert t.records[30].widget is next(c for c in t.children if c.id != "earlier")


async def test_stream_shows_plain_live_text_then_one_markdown() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        for piece in ["# Title\n", "some [bold]x[/bold] ", "\x1b[31mtext"]:
            await feed(panel, TextDelta("s1", piece))
        assert panel.dirty and not panel.query(LiveReply)
        assert panel.flush() is True and panel.flush() is False
        await pilot.pause()
        live = panel.query_one(LiveReply)
        assert "[bold]x[/bold]" in live.rows_text() and "\x1b" not in live.rows_text()
        assert not panel.query(MarkdownReply)
        await feed(panel, MessageAdded("s1", {"role": "assistant", "content": "# Title\nsome text"}))
        await pilot.pause()
        assert not panel.query(LiveReply)
        assert len(panel.query(MarkdownReply)) == 1


async def test_long_lines_and_wide_chars_do_not_widen_the_panel() -> None:
    app = PanelApp([{"role": "assistant", "content": "x" * 5000 + " 🚀宽" * 300}])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        panel = app.query_one(SessionPanel)
        assert panel.size.width <= SIZE[0]
        assert app.query_one(Transcript).virtual_size.width <= SIZE[0]


def ask(loop: asyncio.AbstractEventLoop, rid: str = "r1") -> PermissionRequested:
    call = ToolCall("c1", "run_command", '{"command": "npm test"}')
    return PermissionRequested(
        "s1", rid, call, "run_command npm test", "no rule", ("Bash(npm test)",), loop.create_future()
    )


async def test_always_allow_stores_the_edited_rules() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        request = ask(asyncio.get_running_loop())
        await feed(panel, request)
        await pilot.pause()
        bar = panel.query_one(ApprovalBar)
        assert not bar.has_focus and panel.prompt_box.input.has_focus
        await pilot.press(FOCUS_KEY, "a")
        rules = bar.query_one("#rules", Input)
        assert rules.has_focus and rules.value == "Bash(npm test)"
        rules.value = "Bash(npm test *); Bash(npm run lint)"
        await pilot.press("enter")
        await pilot.pause()
        assert request.reply.result() == PermissionAnswer(
            "allow_always",
            rules=(
                "Bash(npm test *)",
                "Bash(npm run lint)",
            ),
        )
        assert not panel.query(ApprovalBar)


async def test_no_always_allow_when_no_rule_is_suggested() -> None:
    """``ls && rm -rf ~`` gets no suggested rule, so the bar offers no "always allow"."""
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        call = ToolCall("c1", "run_command", '{"command": "ls && rm -rf ~"}')
        loop = asyncio.get_running_loop()
        request = PermissionRequested(
            "s1", "r1", call, "run_command ls && rm -rf ~", "no rule", (), loop.create_future()
        )
        await feed(panel, request)
        await pilot.pause()
        bar = panel.query_one(ApprovalBar)
        assert "allow_always" not in {b.id for b in bar.query(Button)}
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert "always allow" not in str(bar.query_one(".keys", Static).render())
        await pilot.press("a")
        await pilot.pause()
        assert not bar.has_class("-rules") and not request.reply.done()
        await pilot.press("y")
        await pilot.pause()
        assert request.reply.result().kind == "allow_once"


async def test_deny_with_note_and_next_ask_follows() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        loop = asyncio.get_running_loop()
        first, second = ask(loop, "r1"), ask(loop, "r2")
        await feed(panel, first)
        await feed(panel, second)
        await pilot.pause()
        assert "2 needs you" in panel.title_text().plain
        await pilot.press(FOCUS_KEY, "d", *"use pytest", "enter")
        await pilot.pause()
        assert first.reply.result() == PermissionAnswer("reject_with_note", note="use pytest")
        bar = panel.query_one(ApprovalBar)
        assert bar.request.request_id == "r2"
        assert panel.prompt_box.input.has_focus  # the next ask does not inherit the keys
        await pilot.press("s")
        await pilot.pause()
        assert not second.reply.done() and panel.prompt_box.input.value == "s"
        await pilot.press(FOCUS_KEY, "s")
        await pilot.pause()
        assert second.reply.result() == PermissionAnswer("allow_session")


def test_parse_rules() -> None:
    assert parse_rules(" Bash(a) ;\nEdit(b);; ") == ["Bash(a)", "Edit(b)"]


async def test_tool_call_block_states_and_diff() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        call = ToolCall("c9", "edit_file", '{"path": "x.py"}')
        await feed(panel, ToolCallStarted("s1", call, "x.py"))
        await pilot.pause()
        entry = panel.transcript.records[-1]
        assert isinstance(entry, ToolEntry)
        assert entry.status == "running"
        diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
        await feed(panel, ToolCallFinished("s1", call, "ok", "edited", diff))
        await pilot.pause()
        assert entry.status == "ok" and entry.diff == diff
        assert "diff" in str(entry.widget.query_one("Collapsible").title)
        await feed(panel, TurnFinished("s1", "failed", "HTTP 401 from server", "auth"))
        await pilot.pause()
        notice = panel.transcript.records[-1]
        assert isinstance(notice, TextEntry)
        assert "Turn failed [auth]: HTTP 401" in notice.text


async def test_live_reply_keeps_every_row_of_a_long_reply_and_grows_in_steps() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        t = panel.transcript
        await feed(panel, TextDelta("s1", "line 0\n"))
        panel.flush()
        await pilot.pause()
        live = panel.query_one(LiveReply)
        step = live._step()
        assert step >= live_reply_module.LIVE_GROW_ROWS
        first_height = live.outer_size.height
        assert first_height == step
        heights = {first_height}
        last = 3 * t.size.height
        for i in range(1, last, 3):
            for j in range(i, i + 3):
                await feed(panel, TextDelta("s1", f"line {j}\n"))
            panel.flush()
            await pilot.pause()
            heights.add(live.outer_size.height)
        # every height is a whole number of steps; every row is there, in order
        assert all(h % step == 0 for h in heights) and max(heights) >= live.row_count
        rows = live.rows_text().split("\n")
        assert rows[0] == "line 0" and rows[-1] == f"line {max(range(1, last, 3)) + 2}"
        assert len(rows) == live.row_count > 2 * t.size.height
        # the whole reply is kept and shown once it completes
        full = t.streamed_text
        await feed(panel, MessageAdded("s1", {"role": "assistant", "content": full}))
        await pilot.pause()
        reply = t.records[-1]
        assert isinstance(reply, AssistantEntry)
        assert not panel.query(LiveReply) and reply.content == full


async def test_live_reply_of_one_huge_line_keeps_every_row_and_wraps_only_what_is_new() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        await feed(panel, TextDelta("s1", "a" * 200_000 + "THE-END"))
        panel.flush()
        await pilot.pause()
        live = panel.query_one(LiveReply)
        width = live.size.width
        assert live.rows_text().endswith("THE-END") and live.rows_text().count("a") == 200_000
        # the open line was cut at row boundaries: only its last rows are wrapped again
        assert len(live._tail) <= 2 and len(live._rows) >= 200_000 // width - 2
        await feed(panel, TextDelta("s1", "b" * 10))
        panel.flush()
        assert live.rows_text().endswith("THE-END" + "b" * 10) and len(live._tail) <= 2
