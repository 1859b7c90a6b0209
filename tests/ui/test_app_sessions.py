"""Pilot tests of concurrent sessions, the queue, approvals, cancel and restart (real Runtime + replay)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from textual.widgets import Button

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.models import SessionState
from paragents.ui.app import make_app
from paragents.ui.widgets.answer_bar import FOCUS_KEY
from paragents.ui.widgets.approval_bar import ApprovalBar
from paragents.ui.widgets.prompt_input import QueuedItem
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.tool_call import ToolEntry
from paragents.ui.widgets.transcript import TextEntry
from tests.scripted import gated
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import replies, started


def prompts(panel: SessionPanel) -> list[str]:
    return [e.text for e in panel.transcript.records if isinstance(e, TextEntry) and e.kind == "user"]


async def test_two_sessions_stream_concurrently(make_runtime: Any, replay: ReplayServer) -> None:
    runtime = await make_runtime()
    gates = {"s1": asyncio.Event(), "s2": asyncio.Event()}
    replay.add(gated("alpha reply from one", gates["s1"]), session="s1")
    replay.add(gated("beta reply from two", gates["s2"]), session="s2")
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (first,) = await started(pilot, app)
        await pilot.press("ctrl+n")
        first, second = await started(pilot, app, 2)
        assert app.active_sid == second.session_id
        await pilot.press(*"two", "enter")
        await pilot.press("alt+left")
        assert app.active_sid == first.session_id
        await pilot.press(*"one", "enter")
        # both replies are mid-stream at the same time, each in its own panel
        await wait_until(pilot, lambda: "alph" in first.transcript.streamed_text, "stream in panel 1")
        await wait_until(pilot, lambda: "beta" in second.transcript.streamed_text, "stream in panel 2")
        assert first.view.state == SessionState.RUNNING and second.view.state == SessionState.RUNNING
        await wait_until(pilot, lambda: first.transcript.live is not None, "panel 1 repainted")
        await wait_until(pilot, lambda: second.transcript.live is not None, "panel 2 repainted")
        assert "running" in app.sub_title and "2 running" in app.sub_title
        gates["s1"].set()
        gates["s2"].set()
        await wait_until(pilot, lambda: bool(replies(first) and replies(second)), "both replies")
        assert replies(first) == ["alpha reply from one"]
        assert replies(second) == ["beta reply from two"]
        assert prompts(first) == ["one"] and prompts(second) == ["two"]
        await app.shutdown_runtime()


async def test_queue_while_busy_and_remove_a_queued_prompt(make_runtime: Any, replay: ReplayServer) -> None:
    runtime = await make_runtime()
    gate = asyncio.Event()
    replay.add(gated("first answer", gate), session="s1")
    replay.add(ScriptedResponse.from_message("second answer"), session="s1")
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: panel.view.state == SessionState.RUNNING, "running")
        await pilot.press(*"second", "enter")
        await pilot.press(*"third", "enter")
        await wait_until(pilot, lambda: len(panel.query(QueuedItem)) == 2, "two queued prompts shown")
        assert [q.text for q in panel.view.queue] == ["second", "third"]
        assert "2 queued" in panel.title_text().plain
        third = next(item for item in panel.query(QueuedItem) if item.text == "third")
        await pilot.click(third.query_one(".remove", Button))
        await wait_until(pilot, lambda: len(panel.query(QueuedItem)) == 1, "third removed")
        gate.set()
        await wait_until(pilot, lambda: len(replies(panel)) == 2 and not panel.view.queue, "both turns")
        assert prompts(panel) == ["first", "second"]
        assert replies(panel) == ["first answer", "second answer"]
        assert len([r for r in replay.requests if r.method == "POST"]) == 2
        await app.shutdown_runtime()


def write_call(path: str) -> ScriptedResponse:
    args = json.dumps({"path": path, "content": "hello\n"})
    return ScriptedResponse.from_message(
        None, tool_calls=[{"id": "call_1", "name": "write_file", "arguments": args}]
    )


async def _approval_run(
    make_runtime: Any, replay: ReplayServer, key: str
) -> tuple[SessionPanel, ToolEntry, Path]:
    runtime = await make_runtime()
    replay.add([write_call("a.txt"), ScriptedResponse.from_message("all done")], session="s1")
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"write it", "enter")
        # The bar is found while the app still awaits its mount; the header is updated right after
        # (under load that gap spans several pauses), so wait for both.
        await wait_until(
            pilot, lambda: panel.approval_bar is not None and "needs you" in app.sub_title, "the approval bar"
        )
        bar = panel.approval_bar
        assert isinstance(bar, ApprovalBar) and not bar.has_focus and panel.prompt_box.input.has_focus
        assert panel.view.state == SessionState.WAITING
        assert "needs you" in app.sub_title
        preview = bar.request.preview  # the real agent computed it: a new file's content
        assert preview is not None and preview.kind == "content" and preview.text == "hello"
        await pilot.press(key)  # typed into the prompt: answers nothing
        await pilot.pause()
        assert panel.prompt_box.input.value == key and not bar.request.reply.done()
        panel.prompt_box.input.value = ""
        await pilot.press(FOCUS_KEY, key)
        await wait_until(pilot, lambda: replies(panel) == ["all done"], "the final reply")
        assert panel.approval_bar is None and not panel.view.pending
        tool = next(e for e in panel.transcript.records if isinstance(e, ToolEntry))
        await app.shutdown_runtime()
    return panel, tool, runtime.project_dir / "a.txt"


async def test_inline_approval_allow_once_runs_the_write(make_runtime: Any, replay: ReplayServer) -> None:
    _, tool, target = await _approval_run(make_runtime, replay, "y")
    assert tool.name == "write_file" and tool.status == "ok"
    assert target.read_text() == "hello\n"


async def test_inline_approval_deny_skips_the_write(make_runtime: Any, replay: ReplayServer) -> None:
    _, tool, target = await _approval_run(make_runtime, replay, "n")
    assert tool.status == "denied"
    assert not target.exists()
    second_request = [r for r in replay.requests if r.method == "POST"][1].body_json
    tool_result = next(m for m in second_request["messages"] if m["role"] == "tool")
    assert "denied" in tool_result["content"]


async def test_escape_cancels_a_hanging_stream(make_runtime: Any, replay: ReplayServer) -> None:
    runtime = await make_runtime()
    hanging = ScriptedResponse.from_message("partial words then nothing", chunk_size=8, done=False)
    hanging.reads = hanging.reads[:2]
    hanging.hang = True
    replay.add(hanging, session="s1")
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: panel.transcript.streamed_text == "partial ", "the first chunk")
        await pilot.press("escape")
        notices = lambda: [  # noqa: E731
            e.text for e in panel.transcript.records if isinstance(e, TextEntry) and e.kind != "user"
        ]
        await wait_until(pilot, lambda: panel.view.state != SessionState.RUNNING, "not running")
        await wait_until(pilot, lambda: any("cancel" in n for n in notices()), "the cancel notice")
        await pilot.pause()
        assert any("partial" in r for r in replies(panel))
        # one notice for one cancel, and the tokens the cancelled request used are counted
        assert [n for n in notices() if "cancel" in n.lower()] == [
            "cancelled: the partial reply was kept (marked incomplete)"
        ]
        assert panel.view.usage.total_tokens > 0
        assert " 0 tok" not in panel.title_text().plain
        await app.shutdown_runtime()


async def test_restart_restores_open_sessions_and_history(make_runtime: Any, replay: ReplayServer) -> None:
    replay.add(ScriptedResponse.from_message("remembered answer"), session="s1")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"remember this", "enter")
        await wait_until(pilot, lambda: replies(panel) == ["remembered answer"], "the reply")
        await pilot.press("ctrl+n")
        await started(pilot, app, 2)
        names = [p.view.name for p in app.panels.values()]
        await pilot.press("ctrl+q")
    assert app._runtime_closed

    runtime2 = await make_runtime()
    app2 = make_app(runtime2)
    async with app2.run_test(size=SIZE) as pilot:
        first, _ = await started(pilot, app2, 2)
        assert [p.view.name for p in app2.panels.values()] == names
        assert prompts(first) == ["remember this"]
        assert replies(first) == ["remembered answer"]
        await app2.shutdown_runtime()
