"""Issue 30 item 6: while a lane's verify command runs, the Lanes screen says so and for how long
(a command that prints nothing for a minute looked like nothing happened), and says how it ended."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import pytest
from textual.app import App
from textual.widgets import Log, Static

import paragents.ui.lanes.screen as lanes_screen
from paragents.lanes.bring_back import LaneState
from paragents.lanes.review import LaneReview
from paragents.store.records import VerifyRecord
from paragents.ui.lanes.screen import LanesScreen
from tests.ui.bars import plain
from tests.ui.conftest import wait_until


class HeldVerify:
    """Lane actions whose verify runs until the test lets it finish (it prints one line first)."""

    verify_command = "uv run pytest -q"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.finish = asyncio.Event()

    async def verify(self, name: str, on_output: Any = None) -> VerifyRecord:
        if on_output is not None:
            on_output("collecting ...")
        self.started.set()
        await self.finish.wait()
        return VerifyRecord(1, self.verify_command, "c" * 40, "t" * 40, 0, "3 passed", 0.0)


class Host(App[None]):
    def __init__(self, actions: HeldVerify) -> None:
        super().__init__()
        self.actions = actions

    def on_mount(self) -> None:
        state = LaneState("a" * 40, "t" * 40, "t" * 40)
        review = LaneReview("api", "api  paragents/api  clean", state.head, state=state, target="main")
        self.push_screen(LanesScreen([review], actions=self.actions))


async def test_a_running_verify_says_so_and_for_how_long(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(
        lanes_screen, "time", types.SimpleNamespace(monotonic=lambda: clock[0]), raising=False
    )
    actions = HeldVerify()
    app = Host(actions)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LanesScreen), "the Lanes screen")
        screen = app.screen
        assert isinstance(screen, LanesScreen)
        body = screen.query_one("#lane-body", Static)
        log = screen.query_one("#verify-log", Log)
        await pilot.press("v")
        await wait_until(pilot, actions.started.is_set, "the verify to start")
        # the screen says it before the command starts: no wait for output
        assert "verify running: `uv run pytest -q` for 0s" in plain(body)
        assert log.border_title == "verify running in lane api · 0s"
        clock[0] += 42
        screen._tick()  # the once-a-second timer's work, run at a known time
        assert "for 42s" in plain(body)
        assert log.border_title == "verify running in lane api · 42s"
        actions.finish.set()
        await wait_until(pilot, lambda: screen.reviews[0].verify is not None, "the verify result")
        await wait_until(pilot, lambda: "verify running" not in plain(body), "the running line to go")
        assert "passed on" in plain(body)
        assert log.border_title == "verify in lane api: exit 0"
