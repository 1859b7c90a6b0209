"""Nothing a person needs is hidden: a collapsed tool result uses the panel's width and shows the end
of an error, an ask's explanation is whole, a screen over the main one shows its footer alone, and
ctrl+a (answer for the whole fan-out) is in the inbox's footer when it applies."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Collapsible, Footer, Static

from paragents.events import PermissionRequested, ToolCallFinished
from paragents.models import ToolCall
from paragents.ui.app import make_app
from paragents.ui.inbox.screen import InboxItem, InboxScreen
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.bars import bar_text
from tests.ui.conftest import wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view
from tests.ui.feeding import feed
from tests.ui.panel_app import PanelApp

TRACE = "Traceback (most recent call last):\n" + "  File 'x.py', line 1\n" * 5
ERROR = "ValueError: the useful end of the error, which says what went wrong with the build step here"


async def test_a_collapsed_result_uses_the_panel_width_and_shows_the_end_of_an_error() -> None:
    app = PanelApp()
    async with app.run_test(size=(200, 40)) as pilot:
        panel = app.query_one(SessionPanel)
        call = ToolCall("c1", "run_command", '{"command": "make"}')
        await feed(panel, ToolCallFinished("s1", call, "error", TRACE + ERROR, None))
        ok = ToolCall("c2", "run_command", '{"command": "ls"}')
        await feed(panel, ToolCallFinished("s1", ok, "ok", "first line " + "x" * 150 + "\nsecond", None))
        await pilot.pause()
        titles = [str(c.title) for c in panel.query(Collapsible)]
        assert titles[0] == f"result: … {ERROR}"  # the end, not "Traceback (most recent call…"
        assert titles[1].startswith("result: first line xxx") and titles[1].endswith("x second")
        painted = panel.query(Collapsible).first().query_one("CollapsibleTitle").render_line(0).text
        assert "the useful end" in painted and len(painted.rstrip()) > 70


async def test_an_asks_explanation_is_shown_whole() -> None:
    reason = (
        "the project's .mcp.json names the MCP server 'db', which is not trusted yet "
        "(enableAllProjectMcpServers / enabledMcpjsonServers). Allow once or for the session: it starts "
        "for this run; always: remembered in .paragents/permissions.local.json"
    )
    app = PanelApp()
    async with app.run_test(size=(200, 40)) as pilot:
        panel = app.query_one(SessionPanel)
        ask = PermissionRequested(
            "s1", "r1", ToolCall("m1", "mcp__db", "{}"), "start MCP server db: uvx db", reason,
            ("mcp__db",), asyncio.get_running_loop().create_future(),
        )  # fmt: skip
        await feed(panel, ask)
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None and "always: remembered in .paragents/permissions.local.json" in bar_text(bar)


class Overlay(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Static("a screen with its own keys")
        yield Footer()


async def test_a_screen_over_the_main_one_shows_only_its_own_footer(tmp_path: Any) -> None:
    app = make_app(FakeRuntime([make_view("s1", "api")], tmp_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.ready, "the app")
        main_footer = app.screen_stack[0].query_one(Footer)
        assert main_footer.display
        app.push_screen(Overlay())
        await pilot.pause()
        assert not main_footer.display
        app.pop_screen()
        await pilot.pause()
        assert main_footer.display


async def test_ctrl_a_is_in_the_inbox_footer_only_for_a_fan_out_ask(tmp_path: Any) -> None:
    app = make_app(FakeRuntime([make_view("s1", "api")], tmp_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.ready, "the app")
        loop = asyncio.get_running_loop()
        asks = [
            PermissionRequested("s1", f"r{i}", ToolCall(f"c{i}", "run_command", "{}"), f"cmd {i}", "no rule",
                                ("Bash(x)",), loop.create_future())
            for i in (1, 2)
        ]  # fmt: skip
        items = [
            InboxItem("r1", "s1", "api", "approval", "cmd 1", 1.0, asks[0], group="g1"),
            InboxItem("r2", "s1", "api", "approval", "cmd 2", 2.0, asks[1]),
        ]

        async def allow(event: PermissionRequested) -> str:
            return "allowed"

        screen = InboxScreen(lambda: items, lambda: 10.0, allow_group=allow)
        app.push_screen(screen)
        await wait_until(pilot, lambda: screen.selected == "r1", "the fan-out ask selected")
        shown = lambda: {  # noqa: E731
            b.binding.description for b in screen.active_bindings.values() if b.enabled and b.binding.show
        }
        assert "Allow for the whole fan-out" in shown()
        await pilot.press("down")
        await pilot.pause()
        assert "Allow for the whole fan-out" not in shown()


async def test_mcp_right_after_adding_mcp_json_says_reload_reads_it(make_runtime: Any) -> None:
    import json

    runtime = await make_runtime()
    view = await runtime.lifecycle.new_session("a")
    assert any("No MCP servers" in n for n in runtime.mcp.mcp_report(view.id).notes)
    servers = {"mcpServers": {"db": {"command": "uvx", "args": ["some-db-server"]}}}
    (runtime.project_dir / ".mcp.json").write_text(json.dumps(servers))
    notes = runtime.mcp.mcp_report(view.id).notes
    assert not any("No MCP servers" in n for n in notes)
    assert any(".mcp.json was added or changed" in n and "/reload" in n for n in notes), notes
    await runtime.settings.reload_config()
    notes = runtime.mcp.mcp_report(view.id).notes
    assert not any("added or changed" in n or "No MCP servers" in n for n in notes), notes
    assert "db" in runtime.mcp_pool.entries
    await runtime.shutdown()
