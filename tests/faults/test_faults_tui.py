"""The real TUI (Pilot) fed hostile text: a 1 MB pasted prompt, and model output with wide characters,
emoji and terminal control sequences (clear screen, OSC 52 clipboard, bare CR). The screen must
show no raw escape, the layout must keep its size and the app must still answer keys."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual import events

from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions.runtime import Runtime
from paragents.ui.app import make_app
from paragents.ui.widgets.transcript import AssistantBlock
from tests.faults.tally import record
from tests.patience import HANG_GUARD_S
from tests.ui.conftest import SIZE, wait_until

NASTY = (
    "wide 漢字テスト and emoji 🎉👩‍👩‍👧 here\n"
    "\x1b[2J\x1b[Hscreen cleared? \x1b]52;c;cGFyYWdlbnRz\x07clipboard set? "
    "\x1b]0;evil title\x07title? progress 10%\r100%\n"
    "\x1b[31mred\x1b[0m \x9b2J \x07bell \x1bPdcs\x1b\\ end\n" + "長" * 3000 + "\n" + "w" * 5000
)
PROMPT = "p" * (1024 * 1024)


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as server:
        yield server


async def test_huge_paste_and_control_sequences_render_safely(replay: ReplayServer, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    # a window the 1 MB prompt fits in: a prompt bigger than the window is refused before sending
    overrides = {"base_url": replay.base_url, "model": "m", "default_context_window": 10_000_000}
    rt = await Runtime.create(project, cli_overrides=overrides, db_path=tmp_path / "db.sqlite")
    replay.add(ScriptedResponse.from_message(NASTY, chunk_size=50))
    app = make_app(rt)
    ok = False
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "first panel")
            (panel,) = app.panels.values()
            size_before = panel.size
            box = panel.prompt_box.input
            box.focus()
            box.post_message(events.Paste(PROMPT))
            await wait_until(pilot, lambda: len(box.value) == len(PROMPT), "the paste lands in the prompt")
            await pilot.press("enter")
            view = rt.sessions[panel.session_id]
            await wait_until(
                pilot, lambda: view.last_result is not None, "the turn ends", timeout=HANG_GUARD_S
            )
            await wait_until(pilot, lambda: not panel.transcript.dirty, "the transcript is painted")
            await pilot.pause()
            assert view.last_result is not None and view.last_result.status.value == "completed"
            assert replay.requests[0].body_json["messages"][-1]["content"] == PROMPT

            svg = app.export_screenshot()
            for raw in ("\x1b", "\x07", "\x9b", "\r"):
                assert raw not in svg, f"raw {raw!r} reached the screen"
            assert "evil title" not in app.title and "evil" not in (app.sub_title or "")
            block = panel.transcript.query(AssistantBlock).last()
            panel.transcript.scroll_to_widget(block, top=True, animate=False)
            await pilot.pause()
            shown = app.export_screenshot().replace("&#160;", " ")
            for raw in ("\x1b", "\x07", "\x9b", "\r"):
                assert raw not in shown, f"raw {raw!r} reached the screen"
            assert "screen cleared?" in shown and "clipboard set?" in shown and "漢字テスト" in shown
            assert panel.size == size_before, "the panel kept its size"

            # still responsive: a new session opens and the prompt takes keys
            await pilot.press("ctrl+n")
            await wait_until(pilot, lambda: len(app.panels) == 2, "a second panel")
            second = list(app.panels.values())[1]
            await pilot.press(*"ok")
            await wait_until(pilot, lambda: second.prompt_box.input.value == "ok", "typing works")
            ok = True
            await app.shutdown_runtime()
    finally:
        record("tui: 1 MB paste + control sequences", recovered=ok)
        if not ok:
            await rt.shutdown()
