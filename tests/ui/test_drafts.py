"""Nothing typed is lost by quitting: a prompt box's unsent text comes back into the prompt box and the
prompts still queued come back into the queue one by one, held (not sent), with a real Runtime and its
store."""

from __future__ import annotations

import asyncio
from typing import Any

from paragents.events import DraftRestored
from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.store import Store
from paragents.ui.app import make_app
from paragents.ui.widgets.prompt_input import QueuedItem
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.transcript import TextEntry
from tests.scripted import gated
from tests.ui.conftest import SIZE, wait_until
from tests.ui.feeding import feed
from tests.ui.helpers import started
from tests.ui.panel_app import PanelApp


def notices(panel: Any) -> list[str]:
    return [e.text for e in panel.transcript.records if isinstance(e, TextEntry) and e.kind != "user"]


async def test_unsent_text_comes_back_alone_and_queued_prompts_come_back_as_held_queued_prompts(
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
        await pilot.press(*"queued two", "enter")
        await wait_until(pilot, lambda: len(app.runtime.sessions[panel.session_id].queue) == 2, "the queue")
        await pilot.press(*"half typed")  # no Enter, and quit before typing pauses
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("ctrl+q")
    gate.set()
    assert app.return_code == 0
    sent = len(replay.requests)

    again_rt = await make_runtime()
    again = make_app(again_rt)
    async with again.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, again)
        box = panel.prompt_box.input
        await wait_until(pilot, lambda: bool(box.value), "the draft back in the prompt box")
        assert box.value == "half typed"  # the draft alone
        await wait_until(pilot, lambda: any("back in the queue" in n for n in notices(panel)), "notice")
        assert any(n.startswith("2 prompts still queued") for n in notices(panel)), notices(panel)
        view = again.runtime.sessions[panel.session_id]
        assert [(q.text, q.held) for q in view.queue] == [("queued one", True), ("queued two", True)]
        await wait_until(pilot, lambda: len(panel.prompt_box.query(QueuedItem)) == 2, "two queued items")
        assert all(item.held for item in panel.prompt_box.query(QueuedItem))
        assert len(replay.requests) == sent  # nothing runs by itself
        # a command typed now is a command (not appended to the old prompts and sent to the model)
        box.value = ""
        await pilot.press(*"/mute", "enter")
        await pilot.pause()
        assert len(replay.requests) == sent and len(view.queue) == 2
        # the first one's "send" button starts it alone
        replay.add(ScriptedResponse.from_message("done one"), session="s1")
        first = panel.prompt_box.query(QueuedItem).first()
        await pilot.click(first.query_one(".send"))
        await wait_until(pilot, lambda: len(replay.requests) == sent + 1, "the first one sent")
        assert replay.requests[-1].body_json["messages"][-1]["content"] == "queued one"
        await again.runtime.wait_idle(panel.session_id)
        assert [(q.text, q.held) for q in view.queue] == [("queued two", True)]
        await pilot.press("ctrl+q")
    async with await Store.open(again_rt.store.path) as store:
        assert await store.drafts.get(panel.session_id) == ("", ["queued two"])


async def test_a_draft_is_saved_once_typing_pauses_so_a_crash_keeps_it(
    make_runtime: Any, replay: ReplayServer
) -> None:
    rt = await make_runtime()
    app = make_app(rt)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"[b]not[/b] sent yet ")
        panel.prompt_box.input.insert("🙂")  # (Pilot has no key for it: as a paste would)
        await wait_until(pilot, lambda: panel.prompt_box.unsaved_draft() is None, "the draft saved")
        # another process (a restart after a crash) reads it from the store
        async with await Store.open(rt.store.path) as store:
            assert await store.drafts.get(panel.session_id) == ("[b]not[/b] sent yet 🙂", [])
        await app.shutdown_runtime()


async def test_a_draft_restored_while_typing_goes_after_the_typed_text_and_the_cursor_stays() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        box = panel.prompt_box.input
        await pilot.press(*"new")
        await pilot.press("left")
        cursor = box.cursor_location
        restored = DraftRestored(panel.session_id, "from [red]last[/red] time", 1)
        await feed(panel, restored)
        await feed(panel, restored)  # delivered twice (a reload): once in the box
        await pilot.press("X")
        await pilot.pause()
        assert box.value == "neXw\n\nfrom [red]last[/red] time"
        assert cursor == (0, 2) and box.cursor_location == (0, 3)


async def test_a_queued_prompt_does_not_start_while_the_quit_warning_waits_for_confirmation(
    make_runtime: Any, replay: ReplayServer
) -> None:
    gate = asyncio.Event()
    replay.add(gated("a long answer that is still streaming", gate), session="s1")
    replay.add(ScriptedResponse.from_message("never sent"), session="s1")
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: "a lo" in panel.transcript.streamed_text, "the stream")
        await pilot.press(*"queued one", "enter")
        view = app.runtime.sessions[panel.session_id]
        await wait_until(pilot, lambda: len(view.queue) == 1, "the queue")
        await pilot.press("ctrl+q")  # warns: the queued prompt will be back next time, not sent
        await pilot.pause()
        gate.set()  # the running turn ends while the warning waits
        await wait_until(pilot, lambda: view.last_result is not None, "the first turn's end")
        await pilot.pause()
        assert [q.text for q in view.queue] == ["queued one"] and len(replay.requests) == 1
        assert view.waiting_on != "a new agent session"  # held for the quit, not for an agent
        await pilot.press("ctrl+q")
    assert app.return_code == 0 and len(replay.requests) == 1
