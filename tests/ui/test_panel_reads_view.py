"""A session's panel has no second copy of the session's state: it shows what its ``SessionView`` says
(the runtime applies each event to the view before the app routes it to the panel, so the view may be
newer than the event the panel handles), and its bars never show an ask the view has resolved nor
lose one the view still holds."""

from __future__ import annotations

from paragents.events import (
    ModelChanged,
    PermissionAnswer,
    PermissionResolved,
    QueueChanged,
    SessionRenamed,
    SessionStateChanged,
    UsageUpdated,
)
from paragents.models import SessionState, Usage
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.bars import rm_ask
from tests.ui.conftest import SIZE
from tests.ui.feeding import feed, shown_title
from tests.ui.panel_app import PanelApp


async def test_the_title_shows_the_view_even_before_the_panel_handles_the_newer_events() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        older = UsageUpdated("s1", Usage(100, 20, 120), 500, 1000)
        panel.view.apply(older)
        # the runtime applied later events to the view; the UI thread has not routed them yet
        panel.view.apply(SessionRenamed("s1", "renamed"))
        panel.view.apply(ModelChanged("s1", "other-model", 2000))
        panel.view.apply(SessionStateChanged("s1", SessionState.QUEUED, "waiting for a turn slot"))
        panel.view.apply(QueueChanged("s1", (("p1", "next"),)))
        await panel.apply(older)  # the panel handles the older event now
        await pilot.pause()
        title = panel.title_text().plain
        assert "renamed" in title and "other-model" in title and "ctx 25%" in title, title
        assert "queued: waiting for a turn slot" in title and "1 queued" in title, title
        assert shown_title(panel) == title  # what the screen shows


async def test_an_ask_the_view_resolved_gets_no_bar_and_the_next_one_is_not_lost() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        first, second = rm_ask("r1"), rm_ask("r2")
        for event in (first, second):
            panel.view.apply(event)
        first.reply.set_result(PermissionAnswer("allow_once"))  # answered elsewhere (serve, the inbox)
        resolved = PermissionResolved("s1", "r1", "allow_once", "web")
        panel.view.apply(resolved)
        await panel.apply(first)  # the panel sees the first ask only now
        await pilot.pause()
        bar = panel.approval_bar
        assert bar is not None and bar.request is second  # never a bar for the resolved ask
        await panel.apply(second)
        await panel.apply(resolved)
        await pilot.pause()
        assert panel.approval_bar is bar and "1 needs you" in panel.title_text().plain
        await feed(panel, PermissionResolved("s1", "r2", "reject_once", "web"))
        await pilot.pause()
        assert panel.approval_bar is None and "needs you" not in panel.title_text().plain
