"""The prompt box: keys in one burst, pastes, newlines, undo, history, completion, focus."""

from __future__ import annotations

from pathlib import Path

from textual._xterm_parser import XTermParser

from paragents.ui.app import make_app
from tests.ui.conftest import SIZE, wait_until
from tests.ui.fake_runtime import FakeRuntime, FakeView


def feed(app, chunk: str) -> None:
    """Deliver ``chunk`` as one terminal read: parse it and hand every event to the driver at once,
    as the driver's input thread does (no pause between the keys)."""
    driver = app._driver
    for event in XTermParser().feed(chunk):
        driver.process_message(event)


async def test_keys_in_one_burst_submit_each_prompt_as_typed(tmp_path: Path) -> None:
    runtime = FakeRuntime([FakeView("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and bool(app.panels), "startup")
        feed(app, "CCC\rDDD\r")
        await wait_until(pilot, lambda: len(runtime.submitted) >= 2, "two prompts")
        await pilot.pause()
        assert runtime.submitted == [("s1", "CCC"), ("s1", "DDD")]


async def test_editing_keys_in_one_burst_apply_in_order(tmp_path: Path) -> None:
    """Backspace and ctrl+j are bindings of the editor: in a burst they act where they were typed."""
    runtime = FakeRuntime([FakeView("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and bool(app.panels), "startup")
        feed(app, "ab\x7fc\rX\nY\r")
        await wait_until(pilot, lambda: len(runtime.submitted) >= 2, "two prompts")
        await pilot.pause()
        assert runtime.submitted == [("s1", "ac"), ("s1", "X\nY")]
