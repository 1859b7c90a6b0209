"""The paragents Textual app: one panel per open session, routed core events, keys and commands.

Build it with :func:`make_app` (the CLI and the tests use the same factory). The app is one client of
the core: it calls the ``Runtime`` facade (paragents.sessions) and receives every core event through
the runtime's sink, which posts an :class:`~paragents.ui.core.messages.AgentEvent`; the app routes each
event to the panel of ``event.session_id``. Background work never touches widgets.

Layout: 1 panel fills the screen, 2 split it side by side, 3-4 form a 2x2 grid, 5 and more keep the
2-column grid with half-screen rows and the grid scrolls (alt+number / alt+arrows focus and scroll to
a panel). Streamed deltas of a session that wait in the message queue are joined into one message
(:meth:`ParagentsApp._sink`).

This module keeps routing, focus and layout. Elsewhere: startup and the restored transcripts
(``startup.py``), slash commands (``core/commands.py`` parses, ``command_runner.py`` runs), the
palette's entries (``palette.py``), the repaint ticker (``core/ticker.py``), the bell
(``inbox/bell.py``), GC tuning (``core/gc_tuning.py``); each feature's glue in its own package
(``budgets/``, ``lanes/``, ``fanout/``, ``serve/``, ``eval/``, ``inbox/``: the package layout is in
``paragents/ui/__init__.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.screen import Screen
from textual.widgets import Footer, Header

from paragents.config import ConfigError
from paragents.events import (
    ConflictDetected,
    ConflictResolved,
    Event,
    PermissionRequested,
    PermissionResolved,
    ReasoningDelta,
    SessionStateChanged,
    TextDelta,
    TurnFinished,
)
from paragents.models import SessionState
from paragents.notify import Notifier
from paragents.sessions import Opened, SessionsAPI, SessionView
from paragents.ui import answers, palette, startup
from paragents.ui.app_actions import DEMO_TYPED_PROMPT as DEMO_TYPED_PROMPT
from paragents.ui.app_actions import UserActions
from paragents.ui.app_api import AppAPI
from paragents.ui.budgets import hooks as budget_hooks
from paragents.ui.budgets.hooks import install_notifier
from paragents.ui.command_runner import run_command
from paragents.ui.core.commands import SlashCommand
from paragents.ui.core.gc_tuning import tune_gc
from paragents.ui.core.glyphs import glyphs, use_ascii
from paragents.ui.core.keys import use_alt_digit_keys, use_paste_guard
from paragents.ui.core.messages import (
    AgentEvent,
    Answer,
    CommandRequested,
)
from paragents.ui.core.terminal_gone import drop_output_when_the_terminal_is_gone
from paragents.ui.core.text import clean
from paragents.ui.core.ticker import RepaintTicker
from paragents.ui.core.type_ahead import TypeAhead
from paragents.ui.inbox import bell
from paragents.ui.inbox.remote import RemoteAsks
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.lanes import hooks as lane_hooks
from paragents.ui.screens.overview import ActivityLog
from paragents.ui.screens.setup import SetupScreen
from paragents.ui.widgets.answer_bar import FOCUS_KEY, focus_now
from paragents.ui.widgets.empty_hint import EmptyHint
from paragents.ui.widgets.session_panel import SessionPanel

TOAST_LINE_CHARS = 600
"""A toast line longer than this is cut in its middle (a 10,000-character name made a 47-line toast);
room for an error naming a command and a log path (a lane setup failure: its log path was cut away)."""
TOAST_LINES = 14
"""Most lines a toast shows (the rest are counted)."""


def toast_text(message: str) -> str:
    """``message`` cut to a toast's size: each line to :data:`TOAST_LINE_CHARS` characters (cut in the
    middle, so the end of an error stays), at most :data:`TOAST_LINES` lines."""
    lines = message.split("\n")
    half = TOAST_LINE_CHARS // 2
    cut = [line if len(line) <= TOAST_LINE_CHARS else f"{line[:half]}…{line[-half:]}" for line in lines]
    if len(cut) > TOAST_LINES:
        cut = [*cut[: TOAST_LINES - 1], f"… {len(cut) - TOAST_LINES + 1} more lines"]
    return "\n".join(cut)


class ParagentsApp(UserActions):
    """The TUI. ``runtime`` is the session layer (``SessionsAPI``); ``first_run`` shows setup first."""

    TITLE = "paragents"
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "new_session", "New session", priority=True),
        Binding("ctrl+w", "close_session", "Close session", priority=True),
        Binding("alt+right,f6", "focus_offset(1)", "Next", priority=True),
        Binding("alt+left,shift+f6", "focus_offset(-1)", "Previous", priority=True),
        Binding("escape", "cancel_turn", "Cancel turn"),
        Binding("shift+tab", "cycle_mode", "Mode", priority=True),
        Binding("pageup", "scroll_transcript(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_transcript(1)", "Scroll down", show=False),
        Binding(FOCUS_KEY, "focus_ask", "Answer ask", priority=True),
        Binding("end", "follow_transcript", "Follow", show=False, priority=True),
        Binding("alt+z", "zoom", "Zoom", show=False, priority=True),
        Binding("f2", "inbox", "Inbox", priority=True, show=False),
        Binding("f3", "overview", "Overview", priority=True, show=False),
        *(
            Binding(f"alt+{n}", f"focus_number({n})", f"Session {n}", show=False, priority=True)
            for n in range(1, 10)
        ),
    ]
    ESCAPE_TO_MINIMIZE = False
    """Esc cancels the focused session's turn even while its panel is zoomed (alt+z un-zooms)."""
    ALLOW_IN_MAXIMIZED_VIEW = "Header, Footer"
    """A zoomed panel keeps the header ("n need you") and the footer."""

    def __init__(
        self,
        runtime: SessionsAPI | Opened,
        *,
        first_run: bool = False,
        demo: bool = False,
        tune_gc: bool = False,
    ) -> None:
        use_alt_digit_keys()  # alt+1..9 from tmux/xterm (ESC + digit) focus panels, never type "¡"
        use_paste_guard()  # an ESC inside a bracketed paste stays text (it never sends lines as prompts)
        super().__init__()
        self.opened: Opened | None = runtime if isinstance(runtime, Opened) else None
        """The session layer with its store and chat client, as the composition root opened it (None: a
        ``SessionsAPI`` alone, e.g. a test's stand-in: fan-out and /serve then say they need it)."""
        runtime = runtime.api if isinstance(runtime, Opened) else runtime
        self.runtime: SessionsAPI = runtime
        """The session layer this app drives."""
        self.remote_asks = RemoteAsks(runtime, lambda text: self.notify(text, severity="warning"))
        """Asks other processes wait on, shown in the inbox too (ui/inbox/remote.py)."""
        self.first_run = first_run
        self.panels: dict[str, SessionPanel] = {}
        """Open panels by session id, in panel order."""
        self.active_sid: str | None = None
        """Session id of the focused (highlighted) panel."""
        self.ready = False
        """True once the open sessions were restored (or the first one created)."""
        self._waiting_delta: dict[str, AgentEvent] = {}
        self._grid: Container | None = None
        self._runtime_closed = False
        self._quitting = False
        self._quit_confirm_until = 0.0
        self._routed: set[str] = set()
        self._early: dict[str, list[Event]] = {}
        self.clock = time.time
        """Returns Unix seconds for ages in the inbox/overview (tests fix it)."""
        self.activity = ActivityLog(lambda: self.clock())
        """Last event, running tool and ask arrival times per session (inbox order, overview)."""
        self.demo = demo
        """True for ``paragents demo``: the title says so on screen."""
        self.notifier: Notifier | None = None
        """Notifications of what needs the user (made at mount: ui/budgets/hooks.py)."""
        priority = {
            k.strip()
            for b in self.BINDINGS
            if isinstance(b, Binding) and b.priority
            for k in b.key.split(",")
        }
        self.type_ahead = TypeAhead(self, priority)
        """Keys typed while a new panel opens, handed to it (ui/core/type_ahead.py)."""
        self.tune_gc = tune_gc
        """True when this app owns the process (the CLI): it tunes and, once started, freezes the GC."""
        if demo:
            self.title = "paragents — DEMO: scripted replies, no model, no network"

    # --- setup ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon=glyphs().icon)
        yield Container(id="panels")
        yield Footer()

    @property
    def grid(self) -> Container:
        """The container holding the panels (#panels), looked up once (the ticker needs it 25 times a
        second)."""
        if self._grid is None:
            self._grid = self.query_one("#panels", Container)
        return self._grid

    def on_mount(self) -> None:
        if self.tune_gc:
            tune_gc()
        self.runtime.set_sink(self._sink)
        self._ticker = RepaintTicker(self, self.panels, lambda: self.active_sid, lambda: self.grid.region)
        drop_output_when_the_terminal_is_gone(self._driver)  # a closed terminal never hangs the app
        self.notifier = install_notifier(self)  # ui/budgets/hooks.py
        budget_hooks.install_meters(self)
        self.screen_change_signal.subscribe(self, self._screen_changed)
        if self.first_run:
            self.push_screen(
                SetupScreen(self.runtime.settings.loaded.config, first_run=True), self.setup_closed
            )
        self.run_worker(startup.start(self), name="startup", exclusive=True, group="startup")

    def _screen_changed(self, screen: Screen[Any]) -> None:
        """The main screen's footer shows only while the main screen is on top: a screen over it (the
        lanes, compare, setup ...) has its own keys, and a modal one must not show both footers."""
        main = self.screen_stack[0] if self.screen_stack else None
        if main is not None:
            for footer in main.query(Footer):
                footer.display = screen is main

    def _sink(self, event: Event) -> None:
        """The runtime's event sink: wrap the core event in a Textual message (never touch widgets).

        A delta joins the session's previous delta message while that one still waits in the queue
        (order is kept: any other event of the session ends the joining)."""
        sid = event.session_id
        if isinstance(event, TextDelta | ReasoningDelta):
            waiting = self._waiting_delta.get(sid)
            if waiting is not None and waiting.absorb(event):
                return
            message = AgentEvent(event)
            self._waiting_delta[sid] = message
            self.post_message(message)
            return
        self._waiting_delta.pop(sid, None)
        self.post_message(AgentEvent(event))

    # --- panels --------------------------------------------------------------------------------
    async def mount_panels(self, panels: list[SessionPanel]) -> None:
        """Mount ``panels`` (numbered in order after the open ones) at once: one style/layout pass."""
        self.panels.update((panel.session_id, panel) for panel in panels)
        await self.query("#empty").remove()
        self._relayout()
        await self.grid.mount_all(panels)
        for panel in panels:
            await self._route_to(panel.session_id)

    async def add_panel(self, view: SessionView, *, focus: bool = True) -> SessionPanel:
        """Mount a panel for ``view`` after the others, deliver its waiting events, focus it."""
        panel = SessionPanel(view, len(self.panels) + 1)
        self.panels[view.id] = panel
        await self.query("#empty").remove()
        await self.grid.mount(panel)
        self._relayout()
        await self._route_to(view.id)
        if focus or self.active_sid is None:
            self.focus_panel(view.id)
        return panel

    async def _remove_panel(self, sid: str) -> None:
        panel = self.panels.pop(sid, None)
        self._routed.discard(sid)
        self._early.pop(sid, None)
        if panel is None:
            return
        if self.screen_stack[0].maximized is panel:
            self.screen_stack[0].minimize()
        await panel.remove()
        for number, other in enumerate(self.panels.values(), start=1):
            other.number = number
            other.refresh_title()
        self._relayout()
        if self.active_sid == sid:
            self.active_sid = None
            if self.panels:
                self.focus_panel(next(reversed(self.panels)))
        if not self.panels:
            await self.show_empty_hint()
        self.update_header()

    async def show_empty_hint(self) -> None:
        """Say what to do on the empty main screen: set up a model first, or open a session."""
        if self.runtime.config.model:
            hint = "No open session. ctrl+n opens one; /sessions below (or in ctrl+p) reopens one."
        else:
            hint = "No model is set up yet: type /setup below (or press ctrl+p and choose /setup)."
        await self.query("#empty").remove()
        await self.grid.mount(EmptyHint(hint, id="empty"))

    def _relayout(self) -> None:
        grid = self.grid
        n = len(self.panels)
        # Inline styles, not classes: a class change on the grid restyles every panel's subtree (the
        # CSS could match them), ~0.1-0.3 s per opened or closed panel on a loaded machine; a
        # remove+add of one class restyled 20 restored panels for ~45 s (docs/performance.md).
        columns, grid_rows = (1, 1) if n <= 1 else (2, 1) if n == 2 else (2, 2) if n <= 4 else (2, 0)
        styles = grid.styles
        if (styles.grid_size_columns, styles.grid_size_rows) != (columns, grid_rows):
            styles.grid_size_columns, styles.grid_size_rows = columns, grid_rows
        overflow = "auto" if n > 4 else "hidden"
        if styles.overflow_y != overflow:
            styles.overflow_y = overflow
        rows = max((self.size.height - 2) // 2, 8)
        grid.styles.grid_rows = f"{rows}" if n > 4 else "1fr"

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()

    def focus_panel(self, sid: str) -> None:
        """Highlight the panel of ``sid`` and focus its prompt box (never its approval bar: the user
        moves there deliberately with ctrl+g)."""
        panel = self.panels.get(sid)
        if panel is None:
            return
        self._set_active(sid)
        main = self.screen_stack[0]
        if isinstance(main.maximized, SessionPanel):
            main.maximized = panel  # zoomed: the zoom moves to this panel
        # Focus moves now (not after the queued messages): keys typed right after f6 / alt+N follow
        # it to this panel. Never a bar: an ask is answered only after ctrl+g or a click.
        focus_now(panel.prompt_box.input)
        panel.scroll_visible(animate=False)

    def _set_active(self, sid: str) -> None:
        if sid == self.active_sid:
            return
        for other_sid, panel in self.panels.items():
            panel.set_class(other_sid == sid, "-active")
        self.active_sid = sid
        self.refresh_bindings()

    async def on_event(self, event: events.Event) -> None:
        # Typing or pasting while a transcript has focus (a click in it, e.g. to select text) goes to
        # that panel's prompt box: focus moves before the key is forwarded to the focused widget, so
        # this key and every later one reach the box in order.
        if self.type_ahead.hold(event):  # typed while a new panel opens: it goes there
            event.stop()
            event.prevent_default()
            return
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            typing = isinstance(event, events.Paste) or event.is_printable
            focused = self.focused
            if typing and focused is not None:
                for node in focused.ancestors_with_self:
                    if isinstance(node, SessionPanel):
                        if node.transcript in focused.ancestors_with_self:
                            self.screen.set_focus(node.prompt_box.input, scroll_visible=False)
                        break
        await super().on_event(event)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        for node in event.widget.ancestors_with_self:
            if isinstance(node, SessionPanel):
                self._set_active(node.session_id)
                return

    # --- events from the core ------------------------------------------------------------------
    async def on_agent_event(self, message: AgentEvent) -> None:
        """Route a core event to its panel; start the repaint ticker for streamed text.

        Events of a session whose panel is not mounted yet (a /fork's notice, a new session's first
        events) wait for it (:meth:`_route_to`); events after quitting started are dropped (the core
        has saved everything; the panels are being torn down)."""
        event = message.event
        sid = event.session_id
        if self._waiting_delta.get(sid) is message:
            del self._waiting_delta[sid]  # handled: later deltas start a new message
        if self._quitting:
            return
        panel = self.panels.get(sid)
        if panel is None or sid not in self._routed:
            if panel is not None or sid in self.runtime.sessions:
                self._early.setdefault(sid, []).append(event)
            return
        await self._deliver(panel, event)

    async def _route_to(self, sid: str) -> None:
        """Deliver the events that waited for the (now mounted) panel of ``sid``, in order, then route
        its events straight to it. Events arriving meanwhile join the end of the wait list."""
        waiting = self._early.setdefault(sid, [])
        while waiting and not self._quitting:
            panel = self.panels.get(sid)
            if panel is None:
                break
            await self._deliver(panel, waiting.pop(0))
        self._early.pop(sid, None)
        if sid in self.panels:
            self._routed.add(sid)

    async def _deliver(self, panel: SessionPanel, event: Event) -> None:
        if not panel.is_attached:
            return
        self.activity.observe(event)
        await panel.apply(event)
        if isinstance(event, TextDelta | ReasoningDelta):
            self._ticker.resume()
        elif isinstance(event, SessionStateChanged | PermissionRequested | PermissionResolved | TurnFinished):
            self.update_header()
        if isinstance(event, PermissionRequested | PermissionResolved | ConflictDetected | ConflictResolved):
            self.update_header()
            self.refresh_bindings()
            if isinstance(self.screen, InboxScreen):
                await self.screen.reload()
        await budget_hooks.on_event(self, panel, event)
        await lane_hooks.on_event(self, panel, event)
        if (
            self.notifier is None  # the notifier (notify settings) rings itself
            and isinstance(event, PermissionRequested | ConflictDetected)
            and event.session_id != self.active_sid
        ):
            notify = self.runtime.settings.loaded.config.notify
            bell.ring(self, panel.view.name, enabled=bool(getattr(notify, "enabled", notify)))

    def update_header(self) -> None:
        """Say in the header how many sessions are open, running and waiting for the user."""
        panels = list(self.panels.values())
        running = sum(p.view.state in (SessionState.RUNNING, SessionState.WAITING) for p in panels)
        asks = sum(len(p.view.open_asks) + len(p.view.open_conflicts) for p in panels)
        asks += budget_hooks.paused_count(self)  # sessions held at a budget or the loop guard
        parts = [f"{len(panels)} session{'s' if len(panels) != 1 else ''}", f"{running} running"]
        if asks:
            parts.append(f"{glyphs().warn} {asks} need{'s' if asks == 1 else ''} you")
        today = budget_hooks.today_text(self)  # the project's spend today (every process)
        if today:
            parts.append(today)
        self.sub_title = f" {glyphs().sep} ".join(parts)

    def on_unmount(self) -> None:
        """Give the terminal its own title back (the notifier set "paragents · n need you")."""
        budget_hooks.restore_title(self)

    # --- user actions --------------------------------------------------------------------------
    def show_error(self, exc: Exception) -> None:
        """Show a readable error (its message, as plain text) for 8 seconds."""
        self.notify(str(exc), severity="error", timeout=8)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Show a toast. Unlike Textual's default, the message is plain text unless ``markup=True``
        is passed here: messages carry error texts, paths, session and model names (untrusted).
        Control sequences are removed in any case, and a toast stays small (:func:`toast_text`)."""
        super().notify(
            toast_text(clean(message)), title=clean(title), severity=severity, timeout=timeout, markup=markup
        )

    def action_help_quit(self) -> None:
        """ctrl+c: say how to quit (Textual's own message is markup, and toasts here are plain text)."""
        self.notify("Press ctrl+q to quit the app.", title="Do you want to quit?")

    async def on_answer(self, message: Answer) -> None:
        """A bar's answer, in a panel or the inbox (``paragents.ui.answers`` acts on it)."""
        message.stop()
        await answers.handle(self, message.choice)
        self.update_header()
        self.refresh_bindings()

    def on_command_requested(self, message: CommandRequested) -> None:
        """Run a slash command typed in a panel's prompt box (or the empty screen's command line)."""
        if message.command.name == "new":
            self.type_ahead.begin()
        self.start_command(message.session_id or None, message.command)

    def start_command(self, sid: str | None, command: SlashCommand) -> None:
        """Run ``command`` for ``sid`` in a worker (keys, the palette, the prompt box)."""
        self.run_worker(self.run_command(sid, command), group="commands")

    async def run_command(self, sid: str | None, command: SlashCommand) -> None:
        """Run ``command`` for session ``sid`` (the panel it was typed in); errors become notifications
        (see :func:`paragents.ui.command_runner.run_command`)."""
        try:
            await run_command(self, sid, command)
        finally:
            if command.name == "new":  # refused before a panel opened: the keys held go where focus is
                self.type_ahead.release()

    async def open_session(
        self, name: str | None = None, *, model: str | None = None, workdir: Path | None = None, **lane: Any
    ) -> None:
        """Open a new session in the runtime and show its panel, focused (/new, ctrl+n); ``lane``:
        ``lane``/``base`` for a session in its own git worktree (/new --lane). With ``lanes: ask``
        and another session writing in the checkout, the focused panel asks first (and this returns)."""
        self.type_ahead.begin()
        try:
            if "lane" not in lane and lane_hooks.ask_lane(self, name, model=model, workdir=workdir, **lane):
                return
            end_setup = lane_hooks.begin_setup(self, self.active_sid)  # a lane's setup streams in
            try:
                view = await self.runtime.lifecycle.new_session(name, model=model, workdir=workdir, **lane)
            except Exception:
                end_setup(True, "setup failed: the lane was removed (the output is kept, see the message)")
                raise
            end_setup(False, "")
            await self.add_panel(view)
            self.update_header()
        finally:
            self.type_ahead.release()  # what was typed meanwhile goes to the new panel's prompt

    async def close_session(self, sid: str) -> None:
        """Close ``sid`` in the runtime (cancels its turn; it stays in /sessions) and drop its panel."""
        await self.runtime.lifecycle.close_session(sid)
        await self._remove_panel(sid)

    def show_screen(self, screen: Screen[Any], callback: Callable[[Any], None] | None = None) -> None:
        """Push ``screen``; ``callback`` gets what it is dismissed with."""
        self.push_screen(screen, callback)

    def setup_closed(self, saved: bool | None) -> None:
        """The setup screen closed: reload the config it saved, or show the empty screen's hint."""
        if saved:
            self.run_worker(self._reload_config(), group="config")
        elif not self.panels and self.ready:
            self.run_worker(self.show_empty_hint(), group="config")

    async def _reload_config(self) -> None:
        try:
            await self.runtime.settings.reload_config()
        except ConfigError as exc:
            self.show_error(exc)
            return
        self.notify("Configuration saved and reloaded.")
        self.sync_panels()  # a new context window or model for open sessions
        if not self.panels and self.runtime.config.model:
            await self.open_session()

    def sync_panel(self, sid: str) -> None:
        """Show the runtime's view of ``sid`` (name, model, mode, context) in its panel's title (after a
        change that emits no event, e.g. a reloaded config's context window)."""
        panel = self.panels.get(sid)
        if panel is not None:
            panel.refresh_title()

    def sync_panels(self) -> None:
        """:meth:`sync_panel` for every open panel."""
        for sid in self.panels:
            self.sync_panel(sid)

    def session_picked(self, sid: str | None) -> None:
        """The sessions screen closed with ``sid`` chosen (or None): reopen or focus it."""
        if sid:
            self.run_worker(self.reopen(sid), group="commands")

    async def reopen(self, sid: str) -> None:
        """Focus ``sid``'s panel, or reopen the stored session in a new panel."""
        if sid in self.panels:
            self.focus_panel(sid)
            return
        try:
            view = await self.runtime.lifecycle.reopen_session(sid)
        except Exception as exc:
            self.show_error(exc)
            return
        await self.add_panel(view)
        self.update_header()
        if view.read_only:  # held by another live process
            self.notify(view.read_only, severity="warning", timeout=12)

    # --- command palette -----------------------------------------------------------------------
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's system commands plus one entry per slash command (``palette.py``)."""
        yield from super().get_system_commands(screen)
        yield from palette.slash_commands(self)


def make_app(
    runtime: SessionsAPI | Opened, *, first_run: bool = False, demo: bool = False, tune_gc: bool = False
) -> ParagentsApp:
    """Build the TUI for ``runtime``: the session layer as :func:`paragents.sessions.open_sessions`
    opened it (the CLI: fan-out and /serve get its store and chat client), or a ``SessionsAPI`` alone
    (tests, the demo, the eval's view of a target); the CLI and the tests call this.

    ``first_run`` (no config file exists yet) shows the setup screen before the main screen;
    ``demo`` says DEMO in the title; ``tune_gc`` (the CLI: the app owns the process) applies
    :func:`~paragents.ui.core.gc_tuning.tune_gc` at mount and ``gc.freeze()`` once started. The app
    shuts the runtime down when the user quits (ctrl+q, /quit)."""
    api = runtime.api if isinstance(runtime, Opened) else runtime
    use_ascii(api.settings.loaded.config.ascii_glyphs)
    return ParagentsApp(runtime, first_run=first_run, demo=demo, tune_gc=tune_gc)


def _check(app: ParagentsApp) -> AppAPI:
    """mypy: the app offers the whole :class:`~paragents.ui.app_api.AppAPI`."""
    return app
