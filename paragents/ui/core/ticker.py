"""The repaint ticker: streamed text is flushed into the panels by one timer, not per delta.

Every :data:`TICK_SECONDS` the focused panel repaints (25 Hz), the others every
:data:`BACKGROUND_EVERY` ticks (12.5 Hz), staggered by panel index; panels scrolled out of the grid
are not repainted until they are visible. The timer pauses when nothing is streaming."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.geometry import Region
    from textual.message_pump import MessagePump
    from textual.timer import Timer

    from paragents.ui.widgets.session_panel import SessionPanel

TICK_SECONDS = 0.04
"""Interval of the repaint ticker, in seconds (the focused panel repaints at 1/TICK_SECONDS Hz)."""
BACKGROUND_EVERY = 2
"""Background panels repaint every this many ticks (0.08 s → 12.5 Hz), staggered by panel index;
panels scrolled off screen are not repainted until they are visible (docs/performance.md)."""


class RepaintTicker:
    """Flushes dirty panels of ``panels`` on a paused-when-idle timer of ``owner``; ``active`` returns
    the focused session id, ``shown`` the region of the panel grid on screen."""

    def __init__(
        self,
        owner: MessagePump,
        panels: Mapping[str, SessionPanel],
        active: Callable[[], str | None],
        shown: Callable[[], Region],
    ) -> None:
        self.panels = panels
        self.active = active
        self.shown = shown
        self.stopped = False
        """True once the app quits: no more repaints."""
        self._tick = 0
        self._timer: Timer = owner.set_interval(TICK_SECONDS, self.tick, pause=True)

    def resume(self) -> None:
        """Start ticking (a delta arrived)."""
        self._timer.resume()

    def stop(self) -> None:
        """Stop for good (quitting)."""
        self.stopped = True
        self._timer.pause()

    def tick(self) -> None:
        """Flush the panels due this tick; pause when no panel has anything left to paint."""
        if self.stopped:
            return
        self._tick += 1
        busy = False
        shown = self.shown()
        active = self.active()
        for index, (sid, panel) in enumerate(self.panels.items()):
            if not panel.dirty:
                continue
            busy = True
            if sid != active and not panel.region.overlaps(shown):
                continue  # scrolled off screen: repainted lazily once it is visible again
            if sid == active or (self._tick + index) % BACKGROUND_EVERY == 0:
                panel.flush()
        if not busy:
            self._timer.pause()
