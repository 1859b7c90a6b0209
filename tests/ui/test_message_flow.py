"""Message chains of the app, observed with ``run_test(message_hook=...)`` (every message any widget
or the app handles, in order) instead of patching classes: keys -> widget message -> app -> runtime
call -> core event -> panel."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TypeVar

from textual.message import Message

from paragents.events import (
    PermissionAnswer,
    PermissionRequested,
    SessionRenamed,
    SessionStateChanged,
)
from paragents.models import SessionState, ToolCall
from paragents.ui.app import make_app
from paragents.ui.command_runner import HANDLERS, SESSION_COMMANDS
from paragents.ui.core.commands import COMMANDS, SlashCommand
from paragents.ui.core.messages import AgentEvent, Answer, ApprovalChoice, CommandRequested, PromptSubmitted
from paragents.ui.widgets.answer_bar import FOCUS_KEY
from tests.ui.conftest import SIZE, wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view
from tests.ui.feeding import shown_title
from tests.ui.prompt_input import started

M = TypeVar("M", bound=Message)


def handled(seen: list[Message], kind: type[M]) -> list[M]:
    """The messages of ``kind`` among ``seen``, each once (the hook sees a bubbling message at every
    node that handles it)."""
    unique = {id(m): m for m in seen if isinstance(m, kind)}
    return list(unique.values())


def test_every_slash_command_has_one_handler() -> None:
    assert set(HANDLERS) == {spec.name for spec in COMMANDS}
    assert set(HANDLERS) > SESSION_COMMANDS and "new" not in SESSION_COMMANDS


async def test_a_typed_prompt_goes_box_to_app_to_runtime_submit(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await started(pilot, app)
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: bool(runtime.submitted), "the submit")
        prompts = handled(seen, PromptSubmitted)
        assert [(m.session_id, m.text) for m in prompts] == [("s1", "hello")]
        assert runtime.submitted == [("s1", "hello")]


async def test_a_typed_rename_goes_through_the_command_table_and_the_panel_shows_it(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await started(pilot, app)
        await pilot.press(*"/rename web", "enter")
        panel = app.panels["s1"]
        await wait_until(pilot, lambda: " web " in shown_title(panel), "the new name in the panel")
        commands = [m.command for m in handled(seen, CommandRequested)]
        assert commands == [SlashCommand("rename", "web")]
        assert runtime.sessions["s1"].name == "web" and panel.view is runtime.sessions["s1"]


async def test_a_typed_mcp_prompt_command_sends_the_prompts_text(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)  # its mcp_prompt echoes name and arguments
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        await pilot.press(*"/mcp__demo__review a.py", "enter")
        await wait_until(pilot, lambda: bool(runtime.submitted), "the submit")
        assert runtime.submitted == [("s1", "mcp__demo__review a.py")]


async def test_a_session_command_without_a_session_is_refused_with_a_notice(tmp_path: Path) -> None:
    runtime = FakeRuntime([], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready, "startup")
        await app.run_command(None, SlashCommand("clear"))
        await wait_until(pilot, lambda: bool(app._notifications), "the notice")
        assert [n.message for n in app._notifications] == ["/clear needs an open session: ctrl+n opens one."]


async def test_core_events_reach_the_panel_as_agent_events(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api"), make_view("s2", "web")], tmp_path)
    app = make_app(runtime)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 2, "startup")
        runtime.emit(SessionRenamed("s2", "frontend"))
        runtime.emit(SessionStateChanged("s2", SessionState.WAITING, "waiting on api", "api"))
        panel = app.panels["s2"]
        await wait_until(pilot, lambda: "waiting on api" in shown_title(panel), "the waiting state shown")
        routed = [m.event for m in handled(seen, AgentEvent)]
        assert [type(e) for e in routed] == [SessionRenamed, SessionStateChanged]
        assert "frontend" in shown_title(panel)


async def test_an_approval_answered_by_key_resolves_the_ask(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await started(pilot, app)
        reply: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        call = ToolCall("c1", "run_command", '{"command": "npm test"}')
        runtime.emit(PermissionRequested("s1", "r1", call, "run_command npm test", "no rule", (), reply))
        panel = app.panels["s1"]
        await wait_until(pilot, lambda: panel.approval_bar is not None, "the ask's bar")
        await pilot.press(FOCUS_KEY, "y")
        await wait_until(pilot, reply.done, "the answer")
        choices = [m.choice for m in handled(seen, Answer)]
        answers = [(c.ask.request_id, c.answer.kind) for c in choices if isinstance(c, ApprovalChoice)]
        assert answers == [("r1", "allow_once")] and reply.result() == PermissionAnswer("allow_once")
