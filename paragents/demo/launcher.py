"""``paragents demo``: the TUI on a throwaway sandbox with three scripted sessions.

The demo cassette (``paragents/demo/demo.json``) is played by the same engine as ``paragents
replay`` (real Runtime, store, tools and policy) against the loopback replay server: no model, no
key, no network beyond 127.0.0.1. Workspace, config and state live in a temp dir removed at exit,
so the user's real store and config are untouched. Replies stream at a human pace (the cassette's
``delay`` per network read). The first approval waits for the user (a notice in its panel says
so); later approvals and conflicts are answered by the script after :data:`AUTO_ANSWER_AFTER`
seconds unless the user answers first with the usual keys (a notice says when). Typed prompts are
refused with a notice (the app's ``demo`` flag): the scripted server has no reply for them."""

from __future__ import annotations

import asyncio
import sys
from importlib import resources
from typing import Any

from paragents import events as ev
from paragents.cassette import Cassette, validate_cassette
from paragents.cassette.player import Player
from paragents.ui.app import make_app
from paragents.ui.core.signals import quit_on_signals

AUTO_ANSWER_AFTER = 8.0
"""Seconds an approval (after the first) or a conflict stays on screen before the demo answers it."""
WAIT_FOR_USER = (
    "DEMO: this approval waits for you. Press ctrl+g, then y to allow the edit once or n to deny it "
    "(the scripted session goes on either way)."
)


def demo_cassette() -> Cassette:
    """Load the packaged demo cassette (``paragents/demo/demo.json``)."""
    import json

    text = resources.files("paragents.demo").joinpath("demo.json").read_text("utf-8")
    return validate_cassette(json.loads(text), "paragents/demo/demo.json")


class DemoPlayer(Player):
    """Runs the cassette inside the real, interactive app (``app.run_async``) until the user quits."""

    def __init__(
        self,
        cassette: Cassette,
        *,
        pace: float | None = None,
        auto_answer_after: float = AUTO_ANSWER_AFTER,
        tune_gc: bool = True,
    ) -> None:
        super().__init__(cassette, pace=pace, timeout=3600)
        self.wants_report = False
        self.auto_answer_after = auto_answer_after
        self.tune_gc = tune_gc
        self.app: Any = None
        self.waited_for_user = False
        """True once an approval was left for the user to answer (only the first one is)."""

    async def run_phase(self, runtime: Any, phase: int) -> None:
        """Run the app; drive the sessions from a task once the panels exist."""
        self.app = make_app(runtime, demo=True, tune_gc=self.tune_gc)

        async def drive() -> None:
            while not self.app.ready:
                await asyncio.sleep(0.05)
            await self.drive_phase(runtime, phase)
            self.app.notify(
                "Demo finished: every session is done. Press ctrl+q to quit.", title="DEMO", timeout=30
            )

        self._spawn(drive())
        try:
            await self.run_app(self.app)
        finally:
            await self.app.shutdown_runtime()
            self.runtime_closed = True

    async def run_app(self, app: Any) -> None:
        """Run the interactive app until the user quits (tests drive it with Pilot instead)."""
        remove_signals = quit_on_signals(app)
        try:
            await app.run_async()
        finally:
            remove_signals()

    def _say(self, session_id: str, text: str) -> None:
        """Show ``text`` in the session's transcript (after the event being observed reached the app)
        and as a toast: a conflict or approval bar can leave a small panel no room for the transcript."""
        notice = ev.Notice(session_id, text, "warning")
        asyncio.get_running_loop().call_soon(self.runtime.emit, notice)
        if self.app is not None:
            name = self.journal.names.get(session_id, "")
            timeout = max(self.auto_answer_after, 8.0)
            self.app.notify(
                text.removeprefix("DEMO: "), title=f"DEMO · {name}", timeout=timeout, markup=False
            )

    def _countdown(self) -> str:
        return f"DEMO: the demo will answer in {self.auto_answer_after:g} s, or answer it yourself."

    def deliver_permission(self, event: ev.PermissionRequested, reply: ev.PermissionAnswer) -> None:
        """Leave the first ask to the user; answer later ones after a while unless the user did."""
        if not self.waited_for_user:
            self.waited_for_user = True
            self._say(event.session_id, WAIT_FOR_USER)
            return
        self._say(event.session_id, self._countdown())

        async def later() -> None:
            await asyncio.sleep(self.auto_answer_after)
            if not event.reply.done():
                event.reply.set_result(reply)

        self._spawn(later())

    def _answer_conflict(self, event: Any) -> None:
        self._say(event.session_id, self._countdown())

        async def later() -> None:
            await asyncio.sleep(self.auto_answer_after)
            if not event.reply.done():
                Player._answer_conflict(self, event)

        self._spawn(later())


def run_demo(pace: float | None = None) -> int:
    """Open the demo (``pace``: seconds between streamed chunks, None = the cassette's); return 0."""
    if not sys.stdout.isatty():
        print(
            "paragents demo needs a terminal (try: paragents replay --tui for a headless run)",
            file=sys.stderr,
        )
        return 2
    asyncio.run(DemoPlayer(demo_cassette(), pace=pace).play())
    return 0
