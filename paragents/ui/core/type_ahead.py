"""Keys typed right after ctrl+n (or ``/new``) belong to the new session: while its panel opens
(a new session is created in the store, its agent built: a fraction of a second, more on a loaded
machine) they are held, then handed to the new panel's prompt in order. Without it they landed in the
previous panel's prompt and Enter sent them there."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import events

if TYPE_CHECKING:
    from textual.app import App

HOLD_LIMIT_S = 10.0
"""Keys are held at most this long (a session that takes longer to open gets them where focus is)."""


class TypeAhead:
    """Holds the keys typed while a new panel opens (see the module docstring). ``passthrough``: keys
    the app's priority bindings act on (ctrl+q, f6, ...), never held."""

    def __init__(self, app: App[None], passthrough: set[str]) -> None:
        self.app = app
        self.passthrough = passthrough
        self.held: list[events.Key | events.Paste] | None = None
        self.deadline = 0.0

    def begin(self) -> None:
        """A new panel is about to open: hold what is typed from now on."""
        if self.held is None:
            self.held = []
        self.deadline = time.monotonic() + HOLD_LIMIT_S

    def hold(self, event: events.Event) -> bool:
        """Keep ``event`` (a key or paste typed while a panel opens); False: let it through."""
        if self.held is None or not isinstance(event, events.Key | events.Paste) or event.is_forwarded:
            return False
        if time.monotonic() > self.deadline:
            self.release()
            return False
        if isinstance(event, events.Key) and event.key in self.passthrough:
            return False
        self.held.append(event)
        return True

    def release(self) -> None:
        """Hand the held keys, in order, to what has focus now (the new panel's prompt)."""
        held, self.held = self.held, None
        target = self.app.focused
        if not held or target is None:
            return
        for event in held:
            if isinstance(event, events.Paste):
                target.post_message(events.Paste(event.text))
            else:
                target.post_message(events.Key(event.key, event.character))
