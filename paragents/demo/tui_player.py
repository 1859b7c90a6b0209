"""Play a cassette through the real Textual app, headless (``paragents replay --tui``, the demo
snapshot tests): ``make_app(runtime)`` + ``app.run_test()``; approvals are answered by pressing the
approval bar's keys with Pilot (ctrl+g, then y / s / a / n / d), as a user would. Conflicts are
answered through their Future (the conflict UI belongs to another module)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from paragents import events as ev
from paragents.cassette.model import Cassette
from paragents.cassette.player import Player
from paragents.ui.app import make_app
from paragents.ui.widgets.answer_bar import FOCUS_KEY

SIZE = (160, 45)
"""Terminal size (columns, rows) of the headless app."""

_KEYS = {
    "allow_once": "y",
    "allow_session": "s",
    "reject_once": "n",
    "allow_always": "a",
    "reject_with_note": "d",
}


class TuiPlayer(Player):
    """A :class:`Player` whose phases run inside the Textual app (``run_test``, size :data:`SIZE`).

    ``on_settled(app, pilot, phase)``, when given, is awaited at the end of each phase (snapshots)."""

    def __init__(
        self,
        cassette: Cassette,
        *,
        pace: float | None = 0.0,
        timeout: float = 60.0,
        demo: bool = False,
        on_settled: Callable[[Any, Any, int], Awaitable[None]] | None = None,
        root: Path | None = None,
    ) -> None:
        super().__init__(cassette, pace=pace, timeout=timeout, root=root)
        self.demo = demo
        self.on_settled = on_settled
        self.app: Any = None
        self.pilot: Any = None
        self._keys = asyncio.Lock()

    async def wait_ui(self, condition: Callable[[], bool]) -> None:
        """Let the app process messages until ``condition()`` holds (bounded by the replay timeout)."""
        while not condition():
            await self.pilot.pause()
            await asyncio.sleep(0.002)

    async def run_phase(self, runtime: Any, phase: int) -> None:
        """Open the app on ``runtime``, wait until its panels exist, drive the phase, settle."""
        self.app = make_app(runtime, demo=self.demo)
        async with self.app.run_test(size=SIZE) as pilot:
            self.pilot = pilot
            await self.wait_ui(lambda: bool(self.app.ready))
            await self.drive_phase(runtime, phase)
            await self.settle()
            if self.on_settled is not None:
                await self.on_settled(self.app, pilot, phase)

    async def settle(self) -> None:
        """Wait for the app's workers, then flush every panel (streamed text drawn)."""
        await self.app.workers.wait_for_complete()
        await self.pilot.pause()
        for panel in self.app.panels.values():
            panel.flush()
        await self.pilot.pause()

    def deliver_permission(self, event: ev.PermissionRequested, reply: ev.PermissionAnswer) -> None:
        """Answer by pressing the approval bar's key in the session's panel."""
        self._spawn(self._press(event, reply))

    async def _press(self, event: ev.PermissionRequested, reply: ev.PermissionAnswer) -> None:
        answer = reply.kind
        async with self._keys:
            try:
                panel = self.app.panels[event.session_id]
                await self.wait_ui(
                    lambda: (
                        panel.approval_bar is not None
                        and panel.approval_bar.request.request_id == event.request_id
                    )
                )
                self.app.focus_panel(event.session_id)
                bar = panel.approval_bar
                await self.pilot.pause()
                await self.pilot.press(FOCUS_KEY)  # to the bar, as a user would (asks never take focus)
                await self.pilot.pause()
                await self.pilot.press(_KEYS.get(answer, "n"))
                if answer in ("allow_always", "reject_with_note"):
                    field: Any = bar.query_one("#rules" if answer == "allow_always" else "#note")
                    if answer == "allow_always" and reply.rules:
                        field.value = "; ".join(reply.rules)
                    elif answer == "reject_with_note":
                        field.value = reply.note or ""
                    await self.pilot.pause()
                    await self.pilot.press("enter")
                await self.wait_ui(lambda: event.reply.done())
            except Exception as exc:  # the UI could not take the answer: say so, never hang
                self.errors.append(f"the TUI did not take the answer {answer} ({type(exc).__name__}: {exc})")
                if not event.reply.done():
                    event.reply.set_result(reply)
