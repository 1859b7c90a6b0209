"""One session's panel: title line, transcript, inline approval bar and prompt box.

An ask never moves focus: its bar appears above the prompt, which keeps every keystroke; the user
moves to the bar deliberately (the app's ctrl+g, or a click; see ui/widgets/answer_bar.py).

The panel reads the session's state (name, model, state, usage, queue, asks, lane...) from the
runtime's ``SessionView`` it holds (``panel.view``), which the runtime alone writes: it applies each
event to the view before the app routes the event to :meth:`SessionPanel.apply` ("attributes down").
``apply`` does only what is the panel's own: the transcript, which bar to show, focus, the
"waiting for first token" timer; the view may already be newer than the event being handled. The panel
never calls the runtime; user actions go up as messages (paragents.ui.core.messages). Streamed text is
only buffered by ``apply``; the app's ticker calls :meth:`SessionPanel.flush` to repaint at a bounded
rate.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from paragents.events import (
    AgentControlsChanged,
    AgentSessionStale,
    AwaitingReply,
    BudgetPaused,
    BudgetResolved,
    Compacted,
    ConflictDetected,
    ConflictResolved,
    ConversationCleared,
    ConversationLoaded,
    DraftRestored,
    Event,
    MessageAdded,
    ModelChanged,
    Notice,
    PermissionRequested,
    PermissionResolved,
    QueueChanged,
    ReasoningDelta,
    SessionStateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from paragents.models import SessionState, ToolCall, Usage
from paragents.sessions import SessionView
from paragents.sessions.acp import MODEL_PREFIX
from paragents.ui.widgets.agent_stale_bar import AgentStaleBar
from paragents.ui.widgets.answer_bar import AnswerBar, focus_now
from paragents.ui.widgets.approval_bar import ApprovalBar
from paragents.ui.widgets.budget_bar import BudgetBar
from paragents.ui.widgets.conflict_bar import ConflictBar, resolved_line
from paragents.ui.widgets.panel_title import over_window, over_window_notice, title_text
from paragents.ui.widgets.prompt_input import PromptBox
from paragents.ui.widgets.transcript import Transcript, live_summary


class SessionPanel(Vertical):
    """The panel of the session of ``view`` (``panel.view``, read, never written); ``number`` is its
    1-based position (alt+number)."""

    DEFAULT_CSS = """
    SessionPanel { border: round $panel-lighten-2; height: 1fr; width: 1fr; padding: 0; }
    SessionPanel.-active { border: round $accent; }
    SessionPanel > .panel-title { height: 1; padding: 0 1; background: $panel; }
    SessionPanel.-active > .panel-title { background: $accent 30%; }
    SessionPanel > #approval-slot { height: auto; max-height: 55%; overflow-y: auto; }
    SessionPanel > #conflict-slot { height: auto; max-height: 45%; overflow-y: auto; }
    SessionPanel > #budget-slot { height: auto; max-height: 45%; overflow-y: auto; }
    """

    def __init__(self, view: SessionView, number: int, *, defer_history: bool = False) -> None:
        """``view`` is the session's ``SessionView`` (the runtime keeps it current); with
        ``defer_history`` its messages are not shown until the owner calls :meth:`show_history` and
        ``transcript.mount_restored()`` (the app's startup)."""
        super().__init__(id=f"panel-{view.id}")
        self.view = view
        self.number = number
        self.budget_label = ""
        """The title's spend ("$0.03 of $0.05 (60%)"), set by the budget hooks (ui/budgets/hooks.py)."""
        self.awaiting_since: float | None = None
        """When (``clock()``) the pending model request was sent, while no token of it has arrived."""
        self.clock: Callable[[], float] = time.monotonic
        """Seconds for the "waiting for first token" count (tests replace it)."""
        self._wait_timer: Any = None
        self._history = list(view.messages)
        self._notes = list(view.history_notes)
        self.history_shown = not defer_history
        """False while a deferred history waits for :meth:`show_history`."""
        self.transcript = Transcript()
        self.prompt_box = PromptBox(view.id)
        self.prompt_box.agent = self.agent_controls
        self._cancel_noticed = False
        self._draft = view.draft
        """Text typed but not sent last time (put into the prompt box at mount)."""
        self._over_window = over_window(view)
        """The context was larger than the window when last looked at (warned once per crossing)."""
        self._conflicts_seen: dict[str, ConflictDetected] = dict(view.conflicts)
        """The conflicts shown, by id, until resolved (the view drops one before its resolved event)."""

    @property
    def session_id(self) -> str:
        """The id of the panel's session."""
        return self.view.id

    @property
    def agent_controls(self) -> AgentControlsChanged | None:
        """What the session's external ACP agent offers (title: its mode and model; prompt box: its
        commands): the view's, or only the agent's name while it has not started; None without one."""
        view = self.view
        if view.agent_controls is None and view.model.startswith(MODEL_PREFIX):  # not started yet
            return AgentControlsChanged(view.id, view.model.removeprefix(MODEL_PREFIX))
        return view.agent_controls

    def compose(self) -> ComposeResult:
        yield Static(self.title_text(), classes="panel-title")
        yield self.transcript
        yield Vertical(id="approval-slot")
        yield Vertical(id="conflict-slot")
        yield Vertical(id="budget-slot")
        yield self.prompt_box

    async def on_mount(self) -> None:
        self._wait_timer = self.set_interval(1.0, self.refresh_title, pause=True)
        if self.history_shown:  # not deferred: show the stored messages now
            self.transcript.load_history(self._history, notes=self._notes)
            self.prompt_box.remember(self._history)
        self._history = []
        await self.show_queue()
        self.prompt_box.restore_draft(self._draft)
        await self._show_next_ask()
        await self._show_conflict()
        await self._show_budget()
        await self._show_agent_stale()

    def show_history(self, messages: list[Any], notes: Sequence[tuple[int, str, str]] = ()) -> None:
        """Load the session's stored ``messages`` (OpenAI dicts) into a panel built with
        ``defer_history``; they are mounted when the owner calls ``transcript.mount_restored()``.
        ``notes``: how past turns ended (see ``Transcript.load_history``)."""
        self.transcript.load_history(messages, mount=False, notes=notes)
        self.prompt_box.remember(messages)
        self.history_shown = True

    def on_resize(self, event: events.Resize) -> None:
        # The prompt box grows with its text up to a third of the panel, then scrolls.
        self.prompt_box.input.styles.max_height = max(3, event.size.height // 3)

    # --- display -------------------------------------------------------------------------------
    def title_text(self) -> Text:
        """Return the title line (ui/widgets/panel_title.py) of the view as it is now."""
        waited = self.waited_for_first_token()
        controls = self.agent_controls
        return title_text(self.view, self.number, controls, waited=waited, budget_label=self.budget_label)

    def waited_for_first_token(self) -> int | None:
        """Whole seconds the pending model request has waited for its first token (None: not waiting,
        or for less than a second)."""
        if self.awaiting_since is None:
            return None
        waited = int(self.clock() - self.awaiting_since)
        return waited if waited >= 1 else None

    def _set_awaiting(self, waiting: bool) -> None:
        self.awaiting_since = self.clock() if waiting else None
        if self._wait_timer is not None:
            if waiting:
                self._wait_timer.resume()
            else:
                self._wait_timer.pause()

    def refresh_title(self) -> None:
        """Re-render the title line from the view."""
        if self.is_mounted:
            # One fixed row (CSS height: 1): a repaint, never a screen-wide layout pass.
            self.query_one(".panel-title", Static).update(self.title_text(), layout=False)

    def flush(self) -> bool:
        """Repaint buffered streamed text; return True when something was repainted."""
        return self.transcript.flush()

    @property
    def dirty(self) -> bool:
        """True when streamed text waits for :meth:`flush`."""
        return self.transcript.dirty

    async def show_queue(self) -> None:
        """Show the view's queued prompts (those not sent yet marked held) and the title's count."""
        queue = self.view.queue
        await self.prompt_box.set_queue(
            tuple((q.id, q.text) for q in queue), tuple(q.id for q in queue if q.held)
        )
        self.refresh_title()

    async def clear_transcript(self) -> None:
        """Empty the transcript (after /clear) and say so."""
        await self.transcript.reset()
        self.transcript.add_notice("New conversation (the previous one stays in the history).")

    # --- events --------------------------------------------------------------------------------
    async def apply(self, event: Event) -> None:
        """Update the panel for one core event of this session (see paragents.events), which the
        runtime has already applied to the view."""
        t = self.transcript
        if isinstance(event, TextDelta):
            t.append_text(event.text)
            return
        if isinstance(event, ReasoningDelta):
            t.append_reasoning(event.text)
            return
        if isinstance(event, AwaitingReply):
            self._set_awaiting(event.waiting)
        elif isinstance(event, ConflictDetected):
            self._conflicts_seen[event.conflict_id] = event
            await self._show_conflict()
        elif isinstance(event, ConflictResolved):
            seen = self._conflicts_seen.pop(event.conflict_id, None)
            t.add_notice(resolved_line(seen, event.answer, event.by))
            await self._show_conflict()
        elif isinstance(event, BudgetPaused | BudgetResolved):
            await self._show_budget()
        elif isinstance(event, TurnStarted):
            self._cancel_noticed = False
            t.add_user(event.prompt)
        elif isinstance(event, MessageAdded):
            if event.message.get("role") != "user":
                t.add_message(event.message)
        elif isinstance(event, ToolCallStarted):
            t.tool_status(event.call, "running", live_summary(event.summary, event.sandboxed))
        elif isinstance(event, ToolCallFinished):
            t.tool_finished(event.call, event.status, event.output, event.diff)
        elif isinstance(event, PermissionRequested):
            t.tool_status(event.call, "asking", live_summary(event.summary, event.sandboxed))
            await self._show_next_ask()
        elif isinstance(event, PermissionResolved):
            await self._show_next_ask()
        elif isinstance(event, ConversationCleared):  # /clear here, or in the process holding it
            await self.clear_transcript()
            self._say_if_over_window()  # the context is empty again
        elif isinstance(event, DraftRestored):
            self.prompt_box.restore_draft(event.text)
        elif isinstance(event, QueueChanged):
            await self.show_queue()
        elif isinstance(event, TurnFinished):
            self._set_awaiting(False)
            t.end_stream()
            if event.status == "failed":
                kind = f" [{event.error_kind}]" if event.error_kind else ""
                t.add_notice(f"Turn failed{kind}: {event.error or 'unknown error'}", "error")
            elif event.status == "cancelled" and not self._cancel_noticed:
                t.add_notice("Turn cancelled.", "warning")
            self._cancel_noticed = False
            await self.answered()  # asks answered without a resolved event: their bars go
            await self._show_budget()
        elif isinstance(event, Notice):
            t.add_notice(event.text, event.level)
            # the core's own word on a cancel ("cancelled: the partial reply was kept") is the one notice
            self._cancel_noticed = self._cancel_noticed or event.text.startswith("cancelled")
        elif isinstance(event, AgentControlsChanged):
            self.prompt_box.agent = self.agent_controls
        elif isinstance(event, AgentSessionStale):
            await self._show_agent_stale()
        elif isinstance(event, Compacted):
            t.add_notice(
                f"compacted: {event.replaced} messages (above) are summarised in requests; the store "
                f"keeps them all (~{event.tokens_before} -> ~{event.tokens_after} tokens)"
            )
        elif isinstance(event, UsageUpdated | ModelChanged | ConversationLoaded):
            self._say_if_over_window()
        # StreamRetry: the core's Notice that comes with it ("..., retrying in N s") is the one line shown
        self.refresh_title()

    def _say_if_over_window(self) -> None:
        """Warn once in the transcript when the context outgrows the model's window (the title says
        it too, in red, for as long as it lasts); again after it fitted once more."""
        over = over_window(self.view)
        if over and not self._over_window:
            self.transcript.add_notice(over_window_notice(self.view), "warning")
        self._over_window = over

    async def _show_agent_stale(self) -> None:
        """Show (or remove) the bar offering a new agent session (ui/widgets/agent_stale_bar.py)."""
        if not self.is_mounted:
            return
        had_focus = any(bar.has_focus_within for bar in self.query(AgentStaleBar))
        await self.query(AgentStaleBar).remove()
        if self.view.agent_stale:
            await self.mount(AgentStaleBar(self.session_id, self.view.agent_stale), before=self.prompt_box)
        if had_focus:
            self.prompt_box.input.focus()

    # --- approvals -----------------------------------------------------------------------------
    @property
    def bars(self) -> list[AnswerBar]:
        """The bars waiting for an answer in this panel: the approval bar, the conflict bar, the
        budget (or loop-guard) bar, then others mounted in the panel itself (the lane question)."""
        slots = (self.approval_bar, self.conflict_bar, self.budget_bar)
        return [bar for bar in slots if bar is not None] + self.extra_bars

    @property
    def extra_bars(self) -> list[AnswerBar]:
        """Bars mounted directly in the panel (e.g. the lane question of ``lanes: ask``)."""
        return [child for child in self.children if isinstance(child, AnswerBar)]

    def toggle_bar_focus(self) -> bool:
        """Move focus deliberately (the app's ctrl+g): from the prompt to the first bar, from a bar to
        the next one, from the last one back to the prompt. Return False when no bar is shown."""
        bars = self.bars
        if not bars:
            return False
        focused = self.screen.focused
        # Only an armed bar counts as "on a bar": focus can land in an unarmed one by itself (its
        # preview, after the focused queued prompt was removed), and ctrl+g must then arm it.
        inside = next((i for i, bar in enumerate(bars) if bar.armed and focused is not None and
                       (focused is bar or bar in focused.ancestors)), None)  # fmt: skip
        if inside is None:
            bars[0].arm()
        elif inside + 1 < len(bars):
            bars[inside + 1].arm()
        else:  # now: what is typed right after ctrl+g goes to the prompt, not into the bar's editor
            focus_now(self.prompt_box.input)
        return True

    @property
    def approval_bar(self) -> ApprovalBar | None:
        """The approval bar shown now, or None."""
        bars = self.query(ApprovalBar)
        return bars.first() if bars else None

    async def _show_next_ask(self) -> None:
        if not self.is_mounted:
            return
        asks = self.view.open_asks  # the view may be newer than the event handled: no bar for a resolved ask
        current = self.approval_bar
        first = asks[0] if asks else None
        if current is not None and first is not None and current.request.request_id == first.request_id:
            return
        had_focus = current is not None and current.has_focus_within
        slot = self.query_one("#approval-slot", Vertical)
        await slot.remove_children()
        if first is None:
            if had_focus:
                self.prompt_box.input.focus()
            self.refresh_title()
            return
        await slot.mount(ApprovalBar(first, extra_pending=len(asks) - 1))
        if had_focus:  # the answered bar had focus: back to the prompt, never on to the next ask
            self.prompt_box.input.focus()
        self.refresh_title()

    @property
    def conflict_bar(self) -> ConflictBar | None:
        """The conflict bar shown now, or None."""
        bars = self.query(ConflictBar)
        return bars.first() if bars else None

    async def _show_conflict(self) -> None:
        """Show the oldest unanswered conflict in the conflict slot (or empty it)."""
        if not self.is_mounted:
            return
        conflicts = self.view.open_conflicts
        current = self.conflict_bar
        first = conflicts[0] if conflicts else None
        if current is not None and first is not None and current.conflict.conflict_id == first.conflict_id:
            return
        had_focus = current is not None and current.has_focus_within
        slot = self.query_one("#conflict-slot", Vertical)
        await slot.remove_children()
        if first is not None:
            await slot.mount(ConflictBar(first))
        if had_focus:  # the answered bar had focus: back to the prompt, never on to the next one
            self.prompt_box.input.focus()
        self.refresh_title()

    async def answered(self) -> None:
        """An ask or conflict of the session was answered (here or in the inbox; its resolved event may
        come later): show the next unanswered ones, if any."""
        await self._show_next_ask()
        await self._show_conflict()

    @property
    def budget_bar(self) -> BudgetBar | None:
        """The budget (or loop-guard) bar shown now, or None."""
        bars = self.query(BudgetBar)
        return bars.first() if bars else None

    async def _show_budget(self) -> None:
        """Show the bar of the budget or loop-guard pause waiting for an answer (or remove it)."""
        if not self.is_mounted:
            return
        current = self.budget_bar
        pause = self.view.open_pause
        if current is not None and pause is not None and current.pause is pause:
            return
        had_focus = current is not None and current.has_focus_within
        slot = self.query_one("#budget-slot", Vertical)
        await slot.remove_children()
        if pause is not None:
            await slot.mount(BudgetBar(pause))
        if had_focus:
            self.prompt_box.input.focus()
        self.refresh_title()


class Demo(App[None]):
    """Three panels: idle with a conversation, busy streaming a reply, asking to run a command."""

    CSS = "Horizontal > SessionPanel { width: 1fr; }"

    def compose(self) -> ComposeResult:
        from pathlib import Path

        from textual.containers import Horizontal

        def view(sid: str, name: str, **fields: Any) -> SessionView:
            return SessionView(sid, name, "qwen2.5-coder", "default", Path("/work/project"), **fields)

        hello = [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "Hi! **How** can I help?"},
        ]
        idle = view("s1", "idle", usage=Usage(100, 20, 120), context_tokens=2000, messages=hello)
        with Horizontal():
            for number, v in enumerate((idle, view("s2", "busy"), view("s3", "asking")), 1):
                panel = SessionPanel(v, number)
                panel.set_class(number == 1, "-active")
                yield panel

    async def on_mount(self) -> None:
        import asyncio

        panels = {p.session_id: p for p in self.query(SessionPanel)}

        async def feed(panel: SessionPanel, event: Event) -> None:
            panel.view.apply(event)  # what the runtime does before the app routes the event
            await panel.apply(event)

        busy = panels["s2"]
        await feed(busy, SessionStateChanged("s2", SessionState.RUNNING))
        await feed(busy, TurnStarted("s2", "Explain the parser"))
        await feed(busy, TextDelta("s2", "The parser reads the input **line by line** and "))
        busy.flush()
        asking = panels["s3"]
        await feed(asking, SessionStateChanged("s3", SessionState.RUNNING))
        await feed(asking, TurnStarted("s3", "Run the tests"))
        call = ToolCall("c1", "run_command", '{"command": "npm test"}')
        future = asyncio.get_running_loop().create_future()
        ask = PermissionRequested(
            "s3", "r1", call, "run_command npm test", "no rule", ("Bash(npm test)",), future
        )
        await feed(asking, SessionStateChanged("s3", SessionState.WAITING, "run_command npm test"))
        await feed(asking, ask)


if __name__ == "__main__":
    Demo().run()
