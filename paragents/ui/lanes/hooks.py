"""Lane hooks of the app, kept out of ``app.py``: predicted lane conflicts as inbox (f2) rows and the
inbox refreshed when what is predicted changes (panel titles update in the panel itself), and a new
lane's setup output streamed into the panel it was asked from."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.ui.core.messages import LaneChoice
from paragents.ui.inbox.screen import InboxItem, InboxScreen
from paragents.ui.widgets.lane_ask_bar import LaneAskBar
from paragents.ui.widgets.prediction_bar import prediction_summary
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.setup_log import SetupLog

if TYPE_CHECKING:
    from paragents.ui.app_api import AppAPI


def lane_items(app: AppAPI) -> list[InboxItem]:
    """Return one inbox row per predicted lane conflict shown in some panel (tagged "predicted
    conflict"), under the session of its first lane that has a panel."""
    items: dict[str, InboxItem] = {}
    for sid, panel in app.panels.items():
        for conflict in panel.view.lane_conflicts:
            key = f"lanepred:{conflict.key}"
            if key in items and panel.view.lane != conflict.a:
                continue
            since = app.activity.asked.get(key)
            summary = prediction_summary(conflict)
            items[key] = InboxItem(key, sid, panel.view.name, "predicted conflict", summary, since, conflict)
    return list(items.values())


async def on_event(app: AppAPI, panel: SessionPanel, event: ev.Event) -> None:
    """After a core event reached ``panel``: a change of predicted conflicts refreshes the inbox."""
    if not isinstance(event, ev.LaneConflictsChanged):
        return
    for conflict in event.conflicts:
        app.activity.asked.setdefault(f"lanepred:{conflict.key}", app.clock())
    if isinstance(app.screen, InboxScreen):
        await app.screen.reload()


def begin_setup(app: AppAPI, sid: str | None) -> Callable[[bool, str], None]:
    """Stream the setup output of a lane made from now on into the panel of ``sid`` (a
    :class:`~paragents.ui.widgets.setup_log.SetupLog` above its prompt); return ``end(failed,
    reason)``, which removes the log (or, failed, keeps it and says why) and stops streaming."""
    lanes = app.runtime.lanes
    if sid is None:
        return lambda failed, reason: None
    logs: list[SetupLog] = []

    async def show(lane: str, line: str) -> None:
        panel = app.panels.get(sid)
        if panel is None or not panel.is_attached:
            return
        if not logs or logs[-1].lane != lane:
            logs.append(SetupLog(lane))
            await panel.mount(logs[-1], before=panel.prompt_box)
        logs[-1].write(line)

    async def finish(failed: bool, reason: str) -> None:
        for log in logs:
            if failed:
                log.failed(reason)
            else:
                await log.remove()

    def end(failed: bool, reason: str) -> None:
        lanes.watch_setup(None)
        app.call_later(finish, failed, reason)

    lanes.watch_setup(lambda lane, line: app.call_later(show, lane, line))
    return end


def ask_lane(app: AppAPI, name: str | None, **options: Any) -> bool:
    """``lanes: ask``: when another open session writes in the shared checkout, show the lane question
    in the focused panel (:class:`~paragents.ui.widgets.lane_ask_bar.LaneAskBar`) and return True; its
    answer (:func:`lane_answered`) opens the session in a lane, in the shared checkout, or not at all.
    False: open it now."""
    writers = app.runtime.lanes.lane_question()
    panel = app.active_panel
    if not writers or panel is None:
        return False
    for old in panel.query(LaneAskBar):
        old.remove()
    panel.mount(LaneAskBar(panel.session_id, name, writers, options), before=panel.prompt_box)
    app.refresh_bindings()
    return True


async def lane_answered(app: AppAPI, choice: LaneChoice) -> None:
    """The lane question was answered: remove its bar, then open the session in a lane or in the
    shared checkout (or not: cancel)."""
    panel = app.panels.get(choice.session_id)
    if panel is not None:
        await panel.query(LaneAskBar).remove()
        app.refresh_bindings()
    if choice.choice == "cancel":
        return
    app.run_worker(
        _open(app, choice.name, choice.choice == "lane", dict(choice.options)), group="new-session"
    )


async def _open(app: AppAPI, name: str | None, lane: bool, options: dict[str, Any]) -> None:
    try:
        await app.open_session(name, lane=lane, **options)
    except Exception as exc:  # SessionError: a name taken meanwhile, a lane that cannot be made
        app.show_error(exc)
        return
    view = app.runtime.sessions.get(app.active_sid or "")
    if lane and view is not None and view.lane:
        app.notify("\n".join(view.lane_notes), title="Lane", markup=False, timeout=12)
