"""/fork, quitting while a turn streams, and /permissions, with a real Runtime (and its real Policy)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from typing import Any

import pytest
from textual.widgets import DataTable
from textual.widgets._toast import Toast

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.models import SessionState
from paragents.ui import app_actions
from paragents.ui.app import make_app
from paragents.ui.core.signals import quit_on_signals
from paragents.ui.screens.info import TableScreen
from paragents.ui.widgets.transcript import TextEntry
from tests.scripted import gated
from tests.trusting import trusted
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import replies, started


def notices(panel: Any) -> list[str]:
    return [e.text for e in panel.transcript.records if isinstance(e, TextEntry) and e.kind != "user"]


async def test_fork_opens_a_panel_with_its_notice(make_runtime: Any, replay: ReplayServer) -> None:
    replay.add(ScriptedResponse.from_message("the answer"), session="s1")
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: replies(panel) == ["the answer"], "the reply")
        await pilot.press(*"/fork", "enter")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the forked panel")
        fork = list(app.panels.values())[1]
        await wait_until(pilot, lambda: any("forked from" in n for n in notices(fork)), "the fork notice")
        await pilot.pause()
        assert app.is_running and app._exception is None
        assert replies(fork) == ["the answer"]  # the copied history shows in the new panel
        assert app.active_sid == fork.session_id
        await app.shutdown_runtime()


async def test_quit_while_a_turn_streams_exits_cleanly_and_saves(
    make_runtime: Any, replay: ReplayServer
) -> None:
    gate = asyncio.Event()
    replay.add(gated("a long answer that is still streaming", gate), session="s1")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        sid = panel.session_id
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: "a lo" in panel.transcript.streamed_text, "the stream")
        assert panel.view.state == SessionState.RUNNING
        await pilot.press("ctrl+q")
    gate.set()
    assert app._exception is None
    assert app.return_code == 0  # what `paragents` (run_tui) exits with
    assert app._runtime_closed

    # next start: the session is back, idle, with the prompt and the kept partial reply
    app2 = make_app(await make_runtime())
    async with app2.run_test(size=SIZE) as pilot:
        (panel2,) = await started(pilot, app2)
        assert panel2.session_id == sid
        assert panel2.view.state == SessionState.IDLE
        texts = [getattr(e, "text", "") for e in panel2.transcript.records]
        assert "hello" in texts
        assert any(r.startswith("a lo") for r in replies(panel2))
        await app2.shutdown_runtime()


async def test_permissions_lists_the_rules_of_a_real_policy(make_runtime: Any, replay: ReplayServer) -> None:
    runtime = await make_runtime()
    rules = {
        "permissions": {"allow": ["Bash(npm test *)"], "deny": ["Read(./.env)"], "ask": ["Edit(src/**)"]}
    }
    (runtime.project_dir / "permissions.json").write_text(json.dumps(rules))
    trusted(runtime.project_dir)
    await runtime.shutdown()
    runtime = await make_runtime()
    assert type(runtime.policy).__name__ == "Policy" and runtime.policy.rules_table()
    app = make_app(runtime)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot, app)
        await pilot.press(*"/permissions", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen), "the rules screen")
        table = app.screen.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        project_file = str(runtime.project_dir / "permissions.json")
        assert ["deny", "Read(./.env)", "project", project_file] in rows
        assert ["ask", "Edit(src/**)", "project", project_file] in rows
        assert ["allow", "Bash(npm test *)", "project", project_file] in rows
        assert [str(c.label) for c in table.columns.values()] == ["kind", "rule", "scope", "file"]
        assert not app._notifications
        await app.shutdown_runtime()


async def test_help_lists_each_key_once() -> None:
    from paragents.ui.screens.info import KEY_ROWS

    keys = [key for key, _ in KEY_ROWS]
    assert len(keys) == len(set(keys))
    assert "ctrl+q" in keys


async def test_a_retry_shows_one_notice(make_runtime: Any, replay: ReplayServer) -> None:
    busy = ScriptedResponse(
        status=503, headers={"Retry-After": "0"}, reads=['{"error": {"message": "busy"}}']
    )
    replay.add([busy, ScriptedResponse.from_message("ok")], session="s1")
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: replies(panel) == ["ok"], "the reply after the retry")
        assert [n for n in notices(panel) if "retry" in n] == [notices(panel)[0]]
        assert len(notices(panel)) == 1, notices(panel)
        await app.shutdown_runtime()


async def test_quit_with_queued_prompts_warns_once_and_quits_on_the_second_press(
    make_runtime: Any, replay: ReplayServer
) -> None:
    gate = asyncio.Event()
    replay.add(gated("a long answer that is still streaming", gate), session="s1")
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: "a lo" in panel.transcript.streamed_text, "the stream")
        await pilot.press(*"queued one", "enter")
        await wait_until(pilot, lambda: len(app.runtime.sessions[panel.session_id].queue) == 1, "the queue")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.is_running and not app._runtime_closed  # the first press only warns
        warnings = [n.message for n in app._notifications]
        assert any("1 queued prompt not sent yet" in m and "ctrl+q" in m for m in warnings), warnings
        await pilot.press("ctrl+q")
    gate.set()
    assert app.return_code == 0
    assert app._runtime_closed


async def test_a_second_quit_as_the_warning_leaves_still_quits(
    make_runtime: Any, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fresh-user finding: the confirmation ended with the warning's time, but the toast leaves a moment
    later, so a ctrl+q while it still showed warned again. It lasts longer than its notice: a press
    right when the toast has gone still quits (a short notice keeps the test quick)."""
    monkeypatch.setattr(app_actions, "QUIT_NOTICE_S", 0.3)
    gate = asyncio.Event()
    replay.add(gated("a long answer that is still streaming", gate), session="s1")
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: "a lo" in panel.transcript.streamed_text, "the stream")
        await pilot.press(*"queued one", "enter")
        await wait_until(pilot, lambda: len(app.runtime.sessions[panel.session_id].queue) == 1, "the queue")
        await pilot.press("ctrl+q")

        def warning_shown() -> bool:
            return any("not sent yet" in str(toast.render()) for toast in app.screen.query(Toast))

        await wait_until(pilot, warning_shown, "the warning")
        await wait_until(pilot, lambda: not warning_shown(), "the warning to leave")
        assert app.is_running and not app._runtime_closed
        await pilot.press("ctrl+q")
    gate.set()
    assert app.return_code == 0 and app._runtime_closed


async def test_sigterm_mid_stream_quits_like_ctrl_q_and_keeps_the_partial_reply(
    make_runtime: Any, replay: ReplayServer
) -> None:
    """SIGTERM/SIGHUP (terminal closed, kill) killed the app mid-stream: the streamed text was lost and
    the terminal left in the alternate screen. Now they quit as ctrl+q does, queued prompts or not."""
    gate = asyncio.Event()
    replay.add(gated("a long answer that is still streaming", gate), session="s1")
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        remove = quit_on_signals(app)
        try:
            await pilot.press(*"hello", "enter")
            await wait_until(pilot, lambda: "a lo" in panel.transcript.streamed_text, "the stream")
            await pilot.press(*"queued", "enter")  # a queued prompt does not hold a signal's quit
            os.kill(os.getpid(), signal.SIGTERM)
            await wait_until(pilot, lambda: app._runtime_closed, "the quit")
        finally:
            remove()
    gate.set()
    assert app.return_code == 0 and app._exception is None
    app2 = make_app(await make_runtime())
    async with app2.run_test(size=SIZE) as pilot:
        (panel2,) = await started(pilot, app2)
        assert any(r.startswith("a lo") for r in replies(panel2))
        await app2.shutdown_runtime()
