"""Untrusted text (tool output and arguments, file and session names, errors, notifications, model
replies and reasoning, inbox and overview rows) reaches the screen literally and never crashes the app,
also when a stored conversation holding it is restored."""

from __future__ import annotations

import json
from typing import Any

import pytest
from textual.widgets import Collapsible

from paragents.events import SessionRenamed
from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import ParagentsApp, make_app
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.screens.overview import OverviewScreen
from paragents.ui.widgets import tool_call as tool_call_module
from paragents.ui.widgets.markdown_reply import MarkdownReply
from paragents.ui.widgets.tool_call import ToolCallBlock, ToolEntry
from paragents.ui.widgets.transcript import AssistantEntry
from tests.ui.conftest import wait_until
from tests.ui.helpers import replies, started

BIG = (220, 70)
"""A screen wide enough for every hostile string to show uncut."""
HOSTILE = (
    "[/]",
    "[link=x]y[/link]",
    "[bold]x[/bold]",
    "report[final].md",
    "[@click=app.quit]x[/]",
    "\x1b[31mred\x1b[0m",
    "\x1b]8;;http://x\x1b\\osc\x1b]8;;\x1b\\",
)
"""Each is markup to Textual or rich, or a terminal escape sequence."""
SHOWN = (
    "[/]",
    "[link=x]y[/link]",
    "[bold]x[/bold]",
    "report[final].md",
    "[@click=app.quit]x[/]",
    "red",
    "osc",
)
"""What each HOSTILE string must look like on screen (escape sequences removed, markup literal)."""
LINE = " ".join(HOSTILE)
"""All of them on one line."""
FILE = "report[final].md"


def screen_text(app: ParagentsApp) -> str:
    """Every row the screen shows now (toasts included), as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def toast_text(app: ParagentsApp) -> str:
    """The text of every toast shown now."""
    from textual.widgets._toast import Toast

    return "\n".join(str(toast.render()) for toast in app.screen.query(Toast))


def assert_literal(text: str, where: str) -> None:
    for shown in SHOWN:
        assert shown in text, f"{shown!r} is not shown literally in the {where}"
    assert "\x1b" not in text


def tool_reply(
    call_id: str, name: str, args: dict[str, Any], reasoning: str | None = None
) -> ScriptedResponse:
    return ScriptedResponse.from_message(
        None,
        reasoning_content=reasoning,
        tool_calls=[{"id": call_id, "name": name, "arguments": json.dumps(args)}],
    )


async def expand_all(pilot: Any, app: ParagentsApp) -> None:
    from textual.widgets import Collapsible

    for block in app.query(Collapsible):
        block.collapsed = False
    await pilot.pause()


async def test_hostile_text_is_shown_literally_on_every_path(make_runtime: Any, replay: ReplayServer) -> None:
    runtime = await make_runtime()
    project = runtime.project_dir
    (project / FILE).write_text(LINE + "\n")
    (project / "[link=x]y.txt").write_text("x")
    replay.add(
        [
            tool_reply("c1", "read_file", {"path": FILE}, reasoning=f"thinking {LINE}"),
            tool_reply("c2", "list_dir", {"path": "."}),
            ScriptedResponse.from_message(f"reply `{LINE}` and {LINE}"),
            tool_reply("c3", "write_file", {"path": f"{FILE}.out", "content": LINE}),
        ],
        session="s1",
    )
    app = make_app(runtime)
    async with app.run_test(size=BIG, notifications=True) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: any(r.startswith("reply") for r in replies(panel)), "the reply")
        tools = [e for e in panel.transcript.records if isinstance(e, ToolEntry)]
        assert [t.status for t in tools] == ["ok", "ok"]
        # tool output (in the result's title and body), tool arguments, file names
        for block in app.query(ToolCallBlock):
            block.query_one(".tool-body", Collapsible).collapsed = False
        await pilot.pause()
        shown = screen_text(app)
        assert_literal(shown, "tool output")
        assert f"read_file  {FILE}" in shown  # the call's arguments (its name once)
        assert "result: 1 [/] [link=x]y[/link] [bold]x[/bold]" in shown  # the result's title
        assert "[link=x]y.txt" in shown
        # model reply and reasoning
        await expand_all(pilot, app)
        reply_text = "\n".join(w.rendered(100).plain for w in app.query(MarkdownReply))
        assert_literal(reply_text, "model reply")
        assert_literal(screen_text(app), "reasoning")
        # session name (title, overview, inbox) and a tool call waiting for approval (inbox, title)
        # a name the store holds from elsewhere (names typed here are checked: the refusal is a toast)
        panel.prompt_box.input.focus()
        await pilot.press(*"/rename [b]n[/b]", "enter")
        await wait_until(pilot, lambda: "'[b]n[/b]'" in toast_text(app), "the refusal")
        await pilot.press(*"write", "enter")
        await wait_until(pilot, lambda: panel.approval_bar is not None, "the approval bar")
        # set once the last request is sent: requests carry the name (X-Paragents-Session), the replay
        # server tells sessions by it
        panel.view.apply(SessionRenamed(panel.session_id, "[b]n[/b]"))
        panel.refresh_title()
        shown = screen_text(app)
        assert "[b]n[/b]" in shown and f"{FILE}.out" in shown
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, InboxScreen), "the inbox")
        inbox = screen_text(app)
        assert "[b]n[/b]" in inbox and f"{FILE}.out" in inbox
        await pilot.press("escape")
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, OverviewScreen), "the overview")
        await pilot.pause()
        assert "[b]n[/b]" in screen_text(app)
        await pilot.press("escape")
        # notifications and error messages
        app.notify(f"note {LINE}", title="[b]t[/b]")
        app.show_error(ValueError(f"error {LINE}"))
        await wait_until(pilot, lambda: "error [/]" in toast_text(app), "the toasts")
        toasts = toast_text(app)
        assert_literal(toasts, "notifications")
        assert "[b]t[/b]" in toasts and "note [/]" in toasts
        assert app.is_running
        await app.shutdown_runtime()


async def test_failed_turn_error_text_is_literal(make_runtime: Any, replay: ReplayServer) -> None:
    error = json.dumps({"error": {"message": f"bad {LINE}", "type": "invalid_request_error"}})
    replay.add(ScriptedResponse(reads=[f"data: {error}\n\n"]), session="s1")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=BIG) as pilot:
        await started(pilot, app)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: "Turn failed" in screen_text(app), "the error notice")
        assert_literal(screen_text(app), "error notice")
        await app.shutdown_runtime()


async def test_restart_restores_a_hostile_transcript(make_runtime: Any, replay: ReplayServer) -> None:
    runtime = await make_runtime()
    (runtime.project_dir / FILE).write_text(LINE + "\n")
    replay.add(
        [tool_reply("c1", "read_file", {"path": FILE}, f"why {LINE}"), ScriptedResponse.from_message(LINE)],
        session="s1",
    )
    app = make_app(runtime)
    async with app.run_test(size=BIG) as pilot:
        (panel,) = await started(pilot, app)
        # LINE ends with a backslash: a space keeps Enter from continuing the prompt on a new line
        await pilot.press(*LINE.replace("\x1b", ""), "space", "enter")
        await wait_until(pilot, lambda: LINE in replies(panel), "the reply")
        await pilot.press("ctrl+q")
    assert app.return_code == 0

    app2 = make_app(await make_runtime())
    async with app2.run_test(size=BIG) as pilot:
        (panel,) = await started(pilot, app2)
        assert [e.status for e in panel.transcript.records if isinstance(e, ToolEntry)] == ["ok"]
        await expand_all(pilot, app2)
        assert_literal(screen_text(app2), "restored transcript")
        await app2.shutdown_runtime()


async def test_an_entry_that_cannot_be_drawn_is_shown_as_plain_text(
    make_runtime: Any, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = await make_runtime()
    (runtime.project_dir / FILE).write_text("the output\n")
    replay.add(
        [tool_reply("c1", "read_file", {"path": FILE}), ScriptedResponse.from_message("done")], session="s1"
    )
    app = make_app(runtime)
    async with app.run_test(size=BIG) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: replies(panel) == ["done"], "the reply")
        await pilot.press("ctrl+q")

    def broken(self: Any) -> Any:
        raise RuntimeError("a drawing bug")

    monkeypatch.setattr(tool_call_module.ToolCallBlock, "_collapsible", broken)
    monkeypatch.setattr("paragents.ui.widgets.markdown_reply.render_markdown", broken)
    app2 = make_app(await make_runtime())
    async with app2.run_test(size=BIG) as pilot:
        (panel,) = await started(pilot, app2)
        await pilot.pause()
        shown = screen_text(app2)
        assert "could not be drawn" in shown and "the output" in shown and "done" in shown
        assert any(isinstance(e, AssistantEntry) for e in panel.transcript.records)
        assert app2.is_running
        await app2.shutdown_runtime()


async def test_model_names_from_the_server_are_literal_in_setup(make_runtime: Any) -> None:
    from textual.widgets import Input, Select, Static

    from paragents.ui.screens.setup import SetupScreen

    async with ReplayServer(models=["[/]", "[link=x]y[/link]", "m"]) as server:
        app = make_app(await make_runtime(), first_run=True)
        async with app.run_test(size=BIG) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup screen")
            app.screen.query_one("#base-url", Input).value = server.base_url
            await pilot.click("#test")
            status = lambda: str(app.screen.query_one("#status", Static).render())  # noqa: E731
            await wait_until(pilot, lambda: status().startswith(("✓", "✗")), "the connection result")
            select = app.screen.query_one("#model-select", Select)
            select.expanded = True
            await pilot.pause()
            shown = screen_text(app)
            assert "[/]" in shown and "[link=x]y[/link]" in shown
            assert app.is_running
            await app.shutdown_runtime()
