"""The attention signal of a background session that starts waiting: terminal bell and an OSC 9
desktop notification, when the config's ``notify`` is on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paragents.ui.inbox.screen import notification_sequence

if TYPE_CHECKING:
    from textual.app import App


def ring(app: App[Any], name: str, *, enabled: bool) -> None:
    """Ring the bell and send an OSC 9 notification "paragents: ``name`` needs you" if ``enabled``."""
    if not enabled:
        return
    app.bell()
    # Textual has no public way to write an escape sequence to the terminal: the driver is the one
    # place that writes to it (None in headless tests before the app runs).
    driver = app._driver
    if driver is not None:
        driver.write(notification_sequence(f"paragents: {name} needs you"))
