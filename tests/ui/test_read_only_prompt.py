"""A prompt typed into the panel of a session another live process holds (shown read-only) is not
lost: it stays in the box, and a notice that stays in the panel says who holds the session and how to
take it over (the box was cleared and only a fading toast said why). Real Runtime, real app, a real
live process as the holder."""

from __future__ import annotations

import subprocess
from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.ui.app import make_app
from paragents.ui.widgets.transcript import TextEntry
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started


async def test_a_prompt_for_a_held_session_stays_in_the_box_with_a_notice(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    view = await runtime.lifecycle.new_session("held")
    holder = subprocess.Popen(["sleep", "600"])  # a live process holding the session
    try:
        await runtime.store.holders.acquire(view.id, take_over=True, pid=holder.pid)
        runtime.holds.clear()
        await runtime.shutdown()
        app = make_app(await make_runtime())
        async with app.run_test(size=SIZE) as pilot:
            (panel,) = await started(pilot, app)
            assert panel.view.read_only
            await pilot.press(*"fix the tests", "enter")

            def notes() -> list[str]:
                return [e.text for e in panel.transcript.records if isinstance(e, TextEntry)]

            await wait_until(pilot, lambda: any(n.startswith("Not sent") for n in notes()), "the notice")
            (note,) = [n for n in notes() if n.startswith("Not sent")]
            assert "/takeover" in note and str(holder.pid) in note
            assert panel.prompt_box.input.text == "fix the tests"
            await app.shutdown_runtime()
    finally:
        holder.kill()
        holder.wait()
