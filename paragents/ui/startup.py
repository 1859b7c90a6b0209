"""Startup of the app: the open sessions' panels first, then their transcripts.

:func:`start` mounts every restored panel at once (titles and prompt boxes: one style/layout pass),
opens the first session when there is none and a model is set up, and marks the app ready. After the
first frame :func:`fill_restored` reads every conversation and mounts the transcripts: the panels on
screen first, then the others one per frame, so keys are handled while the rest fills in
(docs/performance.md)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from paragents.ui.core.gc_tuning import freeze_startup_objects
from paragents.ui.core.text import shorten
from paragents.ui.widgets.session_panel import SessionPanel

if TYPE_CHECKING:
    from paragents.ui.app_api import AppAPI

NOTES_APART = 2
"""Up to this many notes of the start (recovery, take-overs) are a toast each; more are one digest."""
NOTE_CHARS = 160
"""A note in the digest is cut to this many characters (``paragents sessions`` has the details)."""
FILL_STEP_SECONDS = 0.04
"""Pause between two transcript-filling steps: a frame (and any key) between them."""


async def start(app: AppAPI) -> None:
    """Restore the open sessions' panels (records only), or open the first session; then ready."""
    views = await app.runtime.restore_views()
    restored = [SessionPanel(view, number, defer_history=True) for number, view in enumerate(views, 1)]
    if restored:
        await app.mount_panels(restored)
    if not app.panels and app.runtime.config.model:
        await app.open_session()
    elif not app.panels:
        await app.show_empty_hint()
    notes = list(app.runtime.notes)
    if len(notes) > NOTES_APART:  # one toast, not a stack of them over the panels
        lines = [f"• {shorten(note, NOTE_CHARS)}" for note in notes]
        app.notify("\n".join(lines), title=f"paragents: {len(notes)} notes from the start", timeout=20)
    else:
        for note in notes:
            app.notify(note, title="paragents", timeout=10)
    if app.active_sid is None and app.panels:
        app.focus_panel(next(iter(app.panels)))
    app.ready = True
    app.update_header()
    if restored:  # after the first frame that shows every panel
        app.call_after_refresh(
            lambda: app.run_worker(fill_restored(app), name="restore transcripts", group="startup-fill")
        )
    if app.tune_gc:
        app.call_after_refresh(freeze_startup_objects)


async def fill_restored(app: AppAPI) -> None:
    """Read the restored sessions' conversations, then mount their transcripts one panel per frame,
    the panels on screen first."""
    try:
        views = await app.runtime.load_restored()
    except Exception as exc:  # StoreError: say so; the panels stay, empty
        app.show_error(exc)
        return
    for view in views:
        panel = app.panels.get(view.id)
        if panel is not None:
            panel.show_history(view.messages, view.history_notes)
    grid = app.grid
    while True:
        pending = [p for p in app.panels.values() if p.transcript.restore_pending]
        if not pending:
            return
        shown = grid.region
        # Every panel on screen at once (one layout pass), then the others one per frame.
        batch = [p for p in pending if p.region.overlaps(shown)] or pending[:1]
        for mounted in [panel.transcript.mount_restored() for panel in batch]:
            if mounted is not None:
                await mounted
        await asyncio.sleep(FILL_STEP_SECONDS)  # a frame (and any key) between two steps
