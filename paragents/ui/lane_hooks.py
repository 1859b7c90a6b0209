"""Lane hooks of the app, kept out of ``app.py``: predicted lane conflicts as inbox (f2) rows and the
inbox refreshed when what is predicted changes (panel titles update in the panel itself)."""

from __future__ import annotations

from typing import Any

from paragents import events as ev


def lane_items(app: Any) -> list[Any]:
    """Return one inbox row per predicted lane conflict shown in some panel (tagged "predicted
    conflict"), under the session of its first lane that has a panel."""
    from paragents.ui.screens.inbox import InboxItem
    from paragents.ui.widgets.prediction_bar import prediction_summary

    items: dict[str, Any] = {}
    for sid, panel in app.panels.items():
        for conflict in getattr(panel, "lane_conflicts", ()):
            key = f"lanepred:{conflict.key}"
            if key in items and panel.lane != conflict.a:
                continue
            since = app.activity.asked.get(key)
            summary = prediction_summary(conflict)
            items[key] = InboxItem(key, sid, panel.name_, "predicted conflict", summary, since, conflict)
    return list(items.values())


async def on_event(app: Any, panel: Any, event: ev.Event) -> None:
    """After a core event reached ``panel``: a change of predicted conflicts refreshes the inbox."""
    if not isinstance(event, ev.LaneConflictsChanged):
        return
    for conflict in event.conflicts:
        app.activity.asked.setdefault(f"lanepred:{conflict.key}", app.clock())
    from paragents.ui.screens.inbox import InboxScreen

    if isinstance(app.screen, InboxScreen):
        await app.screen.reload()
