"""Screenshots of the demo cassette played through the real app (headless, no pacing) at two key
moments: an approval and a conflict waiting for the user while the third session is done, and the
end of the run. Deterministic: answers are held until exactly that state is reached."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from paragents import events as ev
from paragents.cassette import report_ok
from paragents.demo.launcher import demo_cassette
from paragents.demo.tui_player import TuiPlayer
from tests.ui.screenshot_paths import export_screenshot, private_root


class HeldTuiPlayer(TuiPlayer):
    """Holds every answer until an approval and a conflict are both pending and 'notes' is done,
    takes a screenshot, then answers (approvals by key presses, conflicts through their Future)."""

    def __init__(self) -> None:
        self.shots: dict[str, str] = {}
        # Private to this run (a fixed /tmp dir is removed by any other checkout's run); screenshots
        # show it under one fixed name, as paths on screen (approval reasons) are part of the snapshot.
        root = private_root()
        # The timeout only catches a hang: the run needs about 10 s of CPU, and with two busy processes
        # on two cores (``--load 2``) it was seen taking 25-55 s.
        super().__init__(demo_cassette(), pace=0, timeout=300, demo=True, on_settled=self._final, root=root)
        self.held: list[Any] = []
        self.changed = asyncio.Event()
        self._released = False

    def deliver_permission(self, event: ev.PermissionRequested, reply: ev.PermissionAnswer) -> None:
        self.held.append(lambda: TuiPlayer.deliver_permission(self, event, reply))
        self._spawn(self._maybe_release())

    def _answer_conflict(self, event: Any) -> None:
        self.held.append(lambda: TuiPlayer._answer_conflict(self, event))
        self._spawn(self._maybe_release())

    async def _maybe_release(self) -> None:
        notes = self.journal.log("notes")
        if self._released or len(self.held) < 2:
            return
        await self.journal.wait_for(lambda: bool(notes.turns) and notes.turns[-1]["status"] == "completed")
        self._released = True
        self.shots["waiting"] = await self.stable_screenshot()
        for release in self.held:
            release()

    async def _final(self, app: Any, pilot: Any, phase: int) -> None:
        self.shots["finished"] = await self.stable_screenshot()

    async def stable_screenshot(self) -> str:
        """Settle until two fully repainted screenshots in a row are equal, then return it.

        Layout and anchored scrolling can take a few refreshes after the last event, and a scrollbar
        can keep a thumb drawn from an earlier frame until something repaints it (seen in about a
        third of runs), so every widget is repainted before each screenshot."""
        shot = await self._repainted_screenshot()
        for _ in range(20):
            again = await self._repainted_screenshot()
            if again == shot:
                return shot
            shot = again
        raise AssertionError("the screen did not settle in 20 refreshes")

    async def _repainted_screenshot(self) -> str:
        await self.settle()
        # A full layout pass first: under load a transcript was sometimes left 2 rows above its bottom
        # after the bars closed (anchored, yet scroll_y 0 of max 2) until the next layout (TODO.md).
        self.app.screen.refresh(layout=True)
        await self.settle()
        for widget in self.app.screen.walk_children():
            widget.refresh()
            for bar in (widget._vertical_scrollbar, widget._horizontal_scrollbar):
                if bar is not None:  # scrollbars are not DOM children: walk_children skips them
                    bar.refresh()
        await self.settle()
        return export_screenshot(self.app, self.root)


async def test_demo_snapshots(snapshot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from paragents.ui.app import ParagentsApp

    init = ParagentsApp.__init__

    def frozen_clock(self: ParagentsApp, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.clock = lambda: 0.0  # ages ("changed 0s ago") do not depend on how loaded the machine is

    monkeypatch.setattr(ParagentsApp, "__init__", frozen_clock)
    player = HeldTuiPlayer()
    report = await player.play()
    assert report_ok(report), report["replay_errors"]
    # Every tool call did what the script says (a workspace shared with another run broke api's edit).
    assert [(s["name"], r["tool"], r["status"]) for s in report["sessions"] for r in s["tool_results"]] == [
        (s["name"], r["tool"], "ok") for s in report["sessions"] for r in s["tool_results"]
    ]
    assert "DEMO" in player.shots["waiting"]
    assert player.shots["waiting"] == snapshot(name="approval_and_conflict_waiting")
    assert player.shots["finished"] == snapshot(name="finished")
