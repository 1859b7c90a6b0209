"""Drive a ``SessionPanel`` as the runtime and the app do: :func:`feed` applies each event to the
panel's ``SessionView`` first (the runtime's ``emit``, the one writer), then routes it to the panel;
:func:`shown_title` reads the title the panel has rendered (``title_text()`` reads the view now)."""

from __future__ import annotations

from textual.widgets import Static

from paragents.events import Event
from paragents.ui.widgets.session_panel import SessionPanel


async def feed(panel: SessionPanel, *events: Event) -> None:
    """Apply each of ``events`` to ``panel.view``, then hand it to ``panel.apply``, in order."""
    for event in events:
        panel.view.apply(event)
        await panel.apply(event)


def shown_title(panel: SessionPanel) -> str:
    """The title line as the panel last rendered it (it re-renders when it handles an event)."""
    return str(panel.query_one(".panel-title", Static).render())
