"""What the user does, kept out of ``app.py``: the key actions (ctrl+n, ctrl+w, f6, alt+number,
PageUp/PageDown, End, alt+z, shift+tab, f2, f3, ctrl+g, Esc, ctrl+q) and which of them the footer
offers, and the prompt box's messages (a prompt sent, a draft to keep, a queued prompt edited, removed
or released). :class:`UserActions` is the base of :class:`~paragents.ui.app.ParagentsApp`, which
holds the state they read (declared here) and the routing, focus and layout."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from textual import work
from textual.actions import SkipAction
from textual.app import App

from paragents.ui.budgets import hooks as budget_hooks
from paragents.ui.core.commands import SlashCommand
from paragents.ui.core.messages import (
    DraftChanged,
    PromptSubmitted,
    QueueEditRequested,
    QueueReleaseRequested,
)
from paragents.ui.core.text import clean
from paragents.ui.inbox.remote import REFRESH as REMOTE_REFRESH
from paragents.ui.inbox.screen import InboxItem, InboxScreen, collect_items
from paragents.ui.lanes import hooks as lane_hooks
from paragents.ui.screens.overview import OverviewScreen, collect_rows
from paragents.ui.widgets.session_panel import SessionPanel

if TYPE_CHECKING:
    from paragents.sessions import SessionsAPI
    from paragents.ui.app_api import AppAPI
    from paragents.ui.core.ticker import RepaintTicker
    from paragents.ui.core.type_ahead import TypeAhead
    from paragents.ui.inbox.remote import RemoteAsks
    from paragents.ui.screens.overview import ActivityLog

MAIN_SCREEN_ACTIONS = {
    "new_session",
    "scroll_transcript",
    "close_session",
    "focus_offset",
    "focus_number",
    "cancel_turn",
    "cycle_mode",
    "inbox",
    "overview",
    "focus_ask",
    "follow_transcript",
    "zoom",
}
"""Actions that only make sense on the main screen (disabled while a modal/setup screen is shown)."""
DEMO_TYPED_PROMPT = (
    "This is the demo: its replies are scripted, so typed prompts are not sent. Answer the asks, try "
    "/overview or /help; run `paragents` (setup connects a model) to chat for real."
)
"""What ``paragents demo`` says when a prompt is typed (the scripted server has no reply for it)."""
QUIT_NOTICE_S = 5.0
"""Seconds the warning of a quit with prompts still queued is shown."""
QUIT_GRACE_S = 2.0
"""How much longer than its notice a second quit still confirms: a toast leaves a moment after its
time (later on a busy machine), and a press while it still shows must quit, never warn again."""


class UserActions(App[None]):
    """The key actions and prompt-box messages of the app (see the module docstring)."""

    runtime: SessionsAPI
    panels: dict[str, SessionPanel]
    active_sid: str | None
    clock: Callable[[], float]
    activity: ActivityLog
    remote_asks: RemoteAsks
    type_ahead: TypeAhead
    _ticker: RepaintTicker
    _quitting: bool
    _quit_confirm_until: float
    _runtime_closed: bool

    @property
    def active_panel(self) -> SessionPanel | None:
        """The focused (highlighted) panel, or None."""
        return self.panels.get(self.active_sid) if self.active_sid else None

    def start_command(self, sid: str | None, command: SlashCommand) -> None:
        raise NotImplementedError

    def focus_panel(self, sid: str) -> None:
        raise NotImplementedError

    def sync_panel(self, sid: str) -> None:
        raise NotImplementedError

    def update_header(self) -> None:
        raise NotImplementedError

    demo: bool

    def show_error(self, exc: Exception) -> None:
        raise NotImplementedError

    # --- the prompt box ----------------------------------------------------------------------
    def on_prompt_submitted(self, message: PromptSubmitted) -> None:
        """Submit a prompt to the runtime (it queues when the session is busy); the demo refuses it."""
        if self.demo:
            self.notify(DEMO_TYPED_PROMPT, title="DEMO", severity="warning", timeout=10, markup=False)
            return
        panel = self.panels.get(message.session_id)
        view = self.runtime.sessions.get(message.session_id)
        try:
            self.runtime.submit(message.session_id, message.text)
        except Exception as exc:  # SessionError and friends carry a readable message
            if panel is not None and view is not None and view.read_only:  # held elsewhere: nothing lost
                panel.prompt_box.keep_unsent(message.text)
                panel.transcript.add_notice(f"Not sent (kept in the box): {view.read_only}", "warning")
                return
            self.show_error(exc)
            return
        if panel is not None:
            panel.transcript.follow()  # sent while scrolled up: show the bottom, where the reply comes

    async def on_draft_changed(self, message: DraftChanged) -> None:
        """Keep a prompt box's unsent text in the store (it comes back next time)."""
        if self.demo or self._runtime_closed:
            return
        try:
            await self.runtime.prompts.save_draft(message.session_id, message.text)
        except Exception as exc:
            self.notify(f"The unsent draft could not be saved: {exc}", severity="warning", markup=False)

    async def save_drafts(self) -> None:
        """Save every prompt box's unsent text now (at quit: typing may not have paused yet)."""
        if self.demo or self._runtime_closed:
            return
        for sid, panel in list(self.panels.items()):
            text = panel.prompt_box.unsaved_draft()
            if text is not None:
                with contextlib.suppress(Exception):
                    await self.runtime.prompts.save_draft(sid, text)

    def on_queue_edit_requested(self, message: QueueEditRequested) -> None:
        """Edit or remove a queued prompt; says so when it already started."""
        if message.text is None:
            ok = self.runtime.prompts.remove_queued(message.session_id, message.prompt_id)
        else:
            ok = self.runtime.prompts.edit_queued(message.session_id, message.prompt_id, message.text)
        if not ok:
            self.notify("That prompt already started (or is gone); it can no longer be changed.")
        self._show_queue(message.session_id)

    def on_queue_release_requested(self, message: QueueReleaseRequested) -> None:
        """Send a held queued prompt (one still queued when paragents stopped)."""
        try:
            ok = self.runtime.prompts.release_queued(message.session_id, message.prompt_id)
        except Exception as exc:  # a session held by another process
            self.show_error(exc)
            return
        if not ok:
            self.notify("That prompt is no longer held (or is gone).")
        self._show_queue(message.session_id)

    def _show_queue(self, sid: str) -> None:
        panel = self.panels.get(sid)
        if panel is not None:
            self.run_worker(panel.show_queue())

    # --- key actions ---------------------------------------------------------------------------
    def action_new_session(self) -> None:
        """Open a new session with default name/model/workdir (ctrl+n); keys typed meanwhile go to it."""
        self.type_ahead.begin()
        self.start_command(self.active_sid, SlashCommand("new"))

    def action_close_session(self) -> None:
        """Close the focused session (ctrl+w)."""
        if self.active_sid is not None:
            self.start_command(self.active_sid, SlashCommand("close"))

    def action_focus_offset(self, offset: int) -> None:
        """Focus the next (+1) or previous (-1) panel, wrapping around."""
        sids = list(self.panels)
        if not sids:
            return
        index = sids.index(self.active_sid) if self.active_sid in sids else 0
        self.focus_panel(sids[(index + offset) % len(sids)])

    def action_scroll_transcript(self, direction: int) -> None:
        """Scroll the focused panel's transcript one page up (-1) or down (+1) while the prompt box
        keeps focus (PageUp/PageDown); scrolling up stops following new output until the bottom is
        reached again."""
        panel = self.active_panel
        if panel is None:
            return
        transcript = panel.transcript
        if direction < 0:
            if transcript.max_scroll_y <= 0:
                return  # it fits its panel: nothing to scroll, and it keeps following what comes
            transcript.release_anchor()
            transcript.scroll_page_up(animate=False)
        else:
            transcript.scroll_page_down(animate=False)

    def action_follow_transcript(self) -> None:
        """End: jump to the bottom of the focused transcript and follow new output again, even while
        the prompt box has focus. When it already follows, End goes on to the prompt box (cursor to
        the end, accept a completion)."""
        panel = self.active_panel
        if panel is None or panel.transcript.following:
            raise SkipAction()
        panel.transcript.follow()

    def action_zoom(self) -> None:
        """Show the focused panel alone (alt+z); alt+z again shows every panel. alt+number and
        alt+arrows move the zoom to another panel."""
        screen = self.screen
        if isinstance(screen.maximized, SessionPanel):
            screen.minimize()
        elif (panel := self.active_panel) is not None:
            screen.maximized = panel
            self.focus_panel(panel.session_id)

    def action_focus_number(self, number: int) -> None:
        """Focus panel ``number`` (1-based), if it exists."""
        sids = list(self.panels)
        if 1 <= number <= len(sids):
            self.focus_panel(sids[number - 1])

    async def action_cycle_mode(self) -> None:
        """Cycle the focused session's permission mode: default -> acceptEdits -> plan -> default
        (shift+tab, as in Claude Code; dontAsk and bypassPermissions only through /mode)."""
        sid = self.active_sid
        if sid is None or sid not in self.runtime.sessions:
            return
        order = ["default", "acceptEdits", "plan"]
        current = self.runtime.sessions[sid].mode
        nxt = order[(order.index(current) + 1) % len(order)] if current in order else "default"
        await self.runtime.controls.set_mode(sid, nxt)
        self.sync_panel(sid)
        self.notify(f"Permission mode: {nxt}", timeout=2)

    def action_inbox(self) -> None:
        """Show every pending approval and conflict, oldest first (F2, /inbox)."""
        # Deferred for start-up time: the fan-out package loads on the first F2, not before the
        # app's first frame (see command_runner's docstring).
        from paragents.ui.fanout import hooks as fanout_hooks

        app = cast("AppAPI", self)

        def extra() -> list[InboxItem]:
            return [*budget_hooks.budget_items(app), *lane_hooks.lane_items(app), *self.remote_asks.items()]

        screen = InboxScreen(
            lambda: collect_items(self.panels, self.activity, extra(), fanout_hooks.group_tags(app)),
            self.clock,
            self.panels,
            lambda event: fanout_hooks.allow_for_group(app, event),
            lambda lane: any(view.lane == lane for view in self.runtime.sessions.values()),
        )
        self.push_screen(screen, self._after_pick)
        self._refresh_remote(screen)
        screen.set_interval(REMOTE_REFRESH, lambda: self._refresh_remote(screen))

    @work(group="remote-asks", exclusive=True, exit_on_error=False)
    async def _refresh_remote(self, screen: InboxScreen) -> None:
        """Re-read the asks other processes wait on; reload the open inbox when they changed (a store
        that cannot be read now is tried again at the next refresh)."""
        local = {
            key for panel in self.panels.values() for key in (*panel.view.pending, *panel.view.conflicts)
        }
        try:
            changed = await self.remote_asks.refresh(local)
        except Exception:
            return
        if changed and screen.is_attached:
            await screen.reload()

    def action_overview(self) -> None:
        """Show one row per session, like top (F3, /overview)."""
        app = cast("AppAPI", self)
        rows = OverviewScreen(
            lambda: collect_rows(self.panels, self.activity, self.runtime, budget_hooks.meters(app).seconds),
            lambda: budget_hooks.overview_notes(app),
            self.runtime.lanes.lane_overview,
            lambda: self.runtime.mcp.mcp_report().summary,
        )
        self.push_screen(rows, self._after_pick)

    def _after_pick(self, sid: str | None) -> None:
        self.update_header()
        if sid:
            self.focus_panel(sid)

    def action_focus_ask(self) -> None:
        """Move focus to the focused panel's approval/conflict bar, to the next one, or back to the
        prompt (ctrl+g): the only key way to a bar, whose answer keys work only then."""
        panel = self.active_panel
        if panel is None or not panel.toggle_bar_focus():
            self.notify("Nothing in this session waits for an answer.", timeout=2)

    def action_cancel_turn(self) -> None:
        """Cancel the focused session's running turn (Esc)."""
        if self.active_sid is not None and not self.runtime.cancel(self.active_sid):
            self.notify("Nothing is running in this session.", timeout=2)

    async def action_quit(self, force: bool = False) -> None:
        """Shut the runtime down (running turns are cancelled, sessions stay open for next time), exit.
        From here on core events are dropped: what they report is saved, and the panels go away.

        Prompts still queued (not started) do not run: they are kept and come back into their queues
        next time, held (not sent), as does unsent text (saved here). While any exist, the first quit
        only warns and names them; a second quit while that notice shows (:data:`QUIT_NOTICE_S`, and
        :data:`QUIT_GRACE_S` after it) quits.
        ``force`` (SIGTERM, SIGHUP: the terminal is going away) quits at once."""
        if self._quitting:
            return
        waiting = [
            (v.name, n) for v in self.runtime.sessions.values() if (n := sum(not q.held for q in v.queue))
        ]  # held prompts (from last time) are not about to be sent: they stay held
        now = self.clock()
        if waiting and not force and now > self._quit_confirm_until:
            window = QUIT_NOTICE_S + QUIT_GRACE_S  # outlives its notice
            self._quit_confirm_until = now + window
            self.runtime.prompts.hold_new_turns(
                True
            )  # what the warning says stays queued is not sent meanwhile
            self.set_timer(window, self._quit_not_confirmed)
            count = sum(n for _, n in waiting)
            names = ", ".join(clean(name) for name, _ in waiting)
            self.notify(
                f"{count} queued prompt{'s' if count != 1 else ''} not sent yet ({names}): "
                f"{'they' if count != 1 else 'it'} will be back in the queue next time, held (not sent). "
                "Press ctrl+q (or /quit) again to quit.",
                severity="warning",
                timeout=QUIT_NOTICE_S,
                markup=False,
            )
            return
        self._quitting = True
        self._ticker.stop()
        await self.save_drafts()
        await self.shutdown_runtime()
        self.exit()

    def _quit_not_confirmed(self) -> None:
        """The quit was not confirmed in time: queued prompts may start again."""
        if not self._quitting and not self._runtime_closed:
            self.runtime.prompts.hold_new_turns(False)

    async def shutdown_runtime(self) -> None:
        """Call ``runtime.shutdown()`` once."""
        if not self._runtime_closed:
            self._runtime_closed = True
            await self.runtime.shutdown()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the main-screen keys while another screen (setup, sessions, ...) is on top."""
        if action in MAIN_SCREEN_ACTIONS and len(self.screen_stack) > 1:
            return False
        if action == "focus_ask":  # in the footer only while the focused panel has something to answer
            panel = self.active_panel
            return panel is not None and bool(panel.bars)
        return True
