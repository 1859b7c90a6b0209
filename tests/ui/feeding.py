"""Feed core events to a ``SessionPanel`` as the runtime and the app do: each event is applied to the
panel's ``SessionView`` first (the runtime's ``emit``, the one writer), then routed to the panel."""

from __future__ import annotations

from paragents.events import Event
from paragents.ui.widgets.session_panel import SessionPanel


async def feed(panel: SessionPanel, *events: Event) -> None:
    """Apply each of ``events`` to ``panel.view``, then hand it to ``panel.apply``, in order."""
    for event in events:
        panel.view.apply(event)
        await panel.apply(event)
