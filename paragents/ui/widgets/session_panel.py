"""One session's panel: title line, transcript, inline approval bar and prompt box.

An ask never moves focus: its bar appears above the prompt, which keeps every keystroke; the user
moves to the bar deliberately (the app's ctrl+g, or a click; see ui/widgets/answer_bar.py).

The panel keeps a copy of the session's displayed state (name, model, state, usage, queue, pending
asks), seeded from the runtime's ``SessionView`` and updated by :meth:`SessionPanel.apply` with core
events routed by the app ("attributes down"). It never calls the runtime; user actions go up as
messages (paragents.ui.core.messages). Streamed text is only buffered by ``apply``; the app's ticker calls
:meth:`SessionPanel.flush` to repaint at a bounded rate.
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
    ConversationLoaded,
    DraftRestored,
    Event,
    LaneAttached,
    LaneConflictsChanged,
    MessageAdded,
    ModeChanged,
    ModelChanged,
    Notice,
    PermissionRequested,
    PermissionResolved,
    PredictedConflict,
    QueueChanged,
    ReasoningDelta,
    SessionRenamed,
    SessionStateChanged,
    StreamRetry,
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
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.text import clean, shorten
from paragents.ui.widgets.agent_stale_bar import AgentStaleBar
from paragents.ui.widgets.answer_bar import AnswerBar
from paragents.ui.widgets.approval_bar import ApprovalBar
from paragents.ui.widgets.budget_bar import BudgetBar, pause_title
from paragents.ui.widgets.conflict_bar import ConflictBar
from paragents.ui.widgets.prompt_input import PromptBox
from paragents.ui.widgets.transcript import Transcript, live_summary

STATE_STYLES = {
    SessionState.IDLE: "green",
    SessionState.QUEUED: "yellow",
    SessionState.RUNNING: "bold cyan",
    SessionState.WAITING: "bold yellow",
    SessionState.BUDGET: "bold red",
    SessionState.PAUSED: "bold magenta",
    SessionState.FAILED: "bold red",
    SessionState.INTERRUPTED: "red",
    SessionState.CLOSED: "dim",
}


def format_tokens(count: int) -> str:
    """Return a token count in short form: 950 → "950", 12 345 → "12.3k", 2 500 000 → "2.5M"."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


class SessionPanel(Vertical):
    """The panel of session ``session_id``; ``number`` is its 1-based position (alt+number)."""

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
        """``view`` is the session's ``SessionView`` (read once: events keep the panel current); with
        ``defer_history`` its messages are not shown until the owner calls :meth:`show_history` and
        ``transcript.mount_restored()`` (the app's startup)."""
        super().__init__(id=f"panel-{view.id}")
        self.session_id: str = view.id
        self.number = number
        self.name_: str = view.name
        self.model: str = view.model
        self.mode: str = view.mode
        self.state: SessionState = SessionState(view.state)
        self.usage: Usage = view.usage
        self.context_tokens: int = view.context_tokens
        self.context_window: int = view.context_window
        self.queue: tuple[tuple[str, str], ...] = tuple((q.id, q.text) for q in view.queue)
        self.queue_held: tuple[str, ...] = tuple(q.id for q in view.queue if q.held)
        """Ids of the queued prompts held (still queued when paragents stopped; not sent yet)."""
        self.pending: dict[str, PermissionRequested] = dict(view.pending)
        """Unanswered asks by request_id, oldest first."""
        self.conflicts: dict[str, ConflictDetected] = dict(view.conflicts)
        """Unanswered conflicts by conflict_id, oldest first (paragents.conflicts)."""
        pause = getattr(view, "budget_pause", None)
        self.budget_pause: BudgetPaused | None = (
            pause if pause is not None and not pause.reply.done() else None
        )
        """The budget or loop-guard pause waiting for an answer (its bar shows), or None."""
        self.waiting_on: str | None = view.waiting_on
        self.queued_because = ""
        """Why the session's prompt waits for its turn (state QUEUED), as the core said."""
        self.lane: str | None = view.lane
        """The lane (git worktree) the session works in, or None."""
        self.lane_conflicts: tuple[PredictedConflict, ...] = view.lane_conflicts
        """Conflicts predicted for the session's lane (the title names the first; the inbox lists them)."""
        """What a held call waits on (holder session or path), shown in the title."""
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
        self.prompt_box = PromptBox(self.session_id)
        self.agent_controls: AgentControlsChanged | None = getattr(view, "agent_controls", None)
        if self.agent_controls is None and view.model.startswith(MODEL_PREFIX):  # not started yet
            self.agent_controls = AgentControlsChanged(view.id, view.model.removeprefix(MODEL_PREFIX))
        """What the session's external ACP agent offers (title: its mode and model; prompt box: its
        commands), or None."""
        self.prompt_box.agent = self.agent_controls
        self._cancel_noticed = False
        self._draft = view.draft
        """Text typed but not sent last time (put into the prompt box at mount)."""
        self.agent_stale: str | None = getattr(view, "agent_stale", None)
        """Why the session's external agent cannot continue the transcript (its bar shows), or None."""

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
        await self.prompt_box.set_queue(self.queue, self.queue_held)
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
        """Return the title line: number, name, model, state, mode, tokens, context %, queue, asks."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{self.number} ", style="bold reverse")
        text.append(" ")
        sep = f" {glyphs().sep} "
        text.append(shorten(self.name_, 40), style="bold")
        text.append(sep)
        text.append(shorten(self.model or "(no model)", 40))
        if self.agent_controls is not None and self.agent_controls.model:
            text.append(f" ({shorten(self.agent_controls.model, 30)})")
        text.append(sep)
        waited = self.waited_for_first_token()
        if self.state is SessionState.WAITING and self.waiting_on:
            text.append(f"waiting on {shorten(self.waiting_on, 40)}", style=STATE_STYLES[self.state])
        elif waited is not None and self.state is SessionState.RUNNING:
            text.append(f"waiting for first token, {waited} s", style=STATE_STYLES[self.state])
        elif self.state is SessionState.QUEUED and self.queued_because:
            text.append(f"queued: {shorten(self.queued_because, 80)}", style=STATE_STYLES[self.state])
        elif self.state is SessionState.BUDGET and self.budget_pause is not None:
            text.append(pause_title(self.budget_pause), style=STATE_STYLES[self.state])
        else:
            text.append(self.state.value, style=STATE_STYLES.get(self.state, ""))
        if self.agent_controls is not None and self.agent_controls.mode:  # an ACP agent's own mode
            agent, mode = shorten(self.agent_controls.agent, 20), shorten(self.agent_controls.mode, 24)
            text.append(f"{sep}{agent} mode {mode}", style="bold")
        if self.lane_conflicts and self.lane:
            more = f" +{len(self.lane_conflicts) - 1}" if len(self.lane_conflicts) > 1 else ""
            said = shorten(clean(self.lane_conflicts[0].title(self.lane)), 48)
            text.append(f"{sep}{glyphs().warn} {said}{more}", style="bold red")
        text.append(f"{sep}{clean(self.mode)}")
        if self.usage.total_tokens or self.agent_controls is None:  # an agent that reports none: no "0 tok"
            text.append(f"{sep}{format_tokens(self.usage.total_tokens)} tok")
        if self.context_window > 0:
            pct = round(100 * self.context_tokens / self.context_window)
            text.append(f"{sep}ctx {pct}%", style="bold red" if pct >= 80 else "")
        if budget := getattr(self, "budget_label", ""):
            text.append(f"{sep}{budget}", style="bold red" if self.state is SessionState.BUDGET else "")
        if self.queue:
            text.append(f"{sep}{len(self.queue)} queued", style="yellow")
        asks = len(self.pending) + len(self.conflicts) + (self.budget_pause is not None)
        if asks:
            text.append(f"{sep}{glyphs().warn} {asks} needs you", style="bold yellow")
        return text

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
        """Re-render the title line from the panel's fields."""
        if self.is_mounted:
            # One fixed row (CSS height: 1): a repaint, never a screen-wide layout pass.
            self.query_one(".panel-title", Static).update(self.title_text(), layout=False)

    def sync(self, view: SessionView) -> None:
        """Copy name, model, mode and context size from a ``SessionView`` (after rename/model/mode,
        /clear and /reload)."""
        self.name_, self.model, self.mode = view.name, view.model, view.mode
        self.context_tokens, self.context_window = view.context_tokens, view.context_window
        self.refresh_title()

    def flush(self) -> bool:
        """Repaint buffered streamed text; return True when something was repainted."""
        return self.transcript.flush()

    @property
    def dirty(self) -> bool:
        """True when streamed text waits for :meth:`flush`."""
        return self.transcript.dirty

    async def apply_queue(self, prompts: tuple[tuple[str, str], ...], held: tuple[str, ...] = ()) -> None:
        """Show ``prompts`` ((prompt_id, text) pairs; ``held``: ids not sent yet) as the session's queue."""
        self.queue, self.queue_held = prompts, held
        await self.prompt_box.set_queue(prompts, held)
        self.refresh_title()

    async def clear_transcript(self) -> None:
        """Empty the transcript (after /clear) and say so."""
        await self.transcript.reset()
        self.transcript.add_notice("New conversation (the previous one stays in the history).")

    # --- events --------------------------------------------------------------------------------
    async def apply(self, event: Event) -> None:
        """Update the panel for one core event of this session (see paragents.events)."""
        t = self.transcript
        if isinstance(event, TextDelta):
            t.append_text(event.text)
            return
        if isinstance(event, ReasoningDelta):
            t.append_reasoning(event.text)
            return
        if isinstance(event, AwaitingReply):
            self._set_awaiting(event.waiting)
        elif isinstance(event, SessionStateChanged):
            self.state = SessionState(event.state)
            self.waiting_on = event.waiting_on if self.state is SessionState.WAITING else None
            self.queued_because = event.detail if self.state is SessionState.QUEUED else ""
        elif isinstance(event, ConflictDetected):
            self.conflicts[event.conflict_id] = event
            await self._show_conflict()
        elif isinstance(event, ConflictResolved):
            self.conflicts.pop(event.conflict_id, None)
            await self._show_conflict()
        elif isinstance(event, BudgetPaused):
            self.budget_pause = event
            await self._show_budget()
        elif isinstance(event, BudgetResolved):
            self.budget_pause = None
            await self._show_budget()
        elif isinstance(event, LaneConflictsChanged):
            self.lane, self.lane_conflicts = event.lane, event.conflicts
        elif isinstance(event, LaneAttached):
            self.lane = event.lane
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
            self.pending[event.request_id] = event
            t.tool_status(event.call, "asking", live_summary(event.summary, event.sandboxed))
            await self._show_next_ask()
        elif isinstance(event, PermissionResolved):
            self.pending.pop(event.request_id, None)
            await self._show_next_ask()
        elif isinstance(event, DraftRestored):
            self.prompt_box.restore_draft(event.text)
        elif isinstance(event, QueueChanged):
            self.queue, self.queue_held = tuple(event.prompts), tuple(event.held)
            await self.prompt_box.set_queue(self.queue, self.queue_held)
        elif isinstance(event, UsageUpdated):
            self.usage = event.total
            self.context_tokens, self.context_window = event.context_tokens, event.context_window
        elif isinstance(event, ConversationLoaded) and event.context_tokens is not None:
            self.context_tokens = event.context_tokens  # a fork's copied history (before its first turn)
        elif isinstance(event, StreamRetry):
            pass  # the core's Notice that comes with it ("..., retrying in N s") is the one line shown
        elif isinstance(event, TurnFinished):
            self._set_awaiting(False)
            t.end_stream()
            if event.status == "failed":
                kind = f" [{event.error_kind}]" if event.error_kind else ""
                t.add_notice(f"Turn failed{kind}: {event.error or 'unknown error'}", "error")
            elif event.status == "cancelled" and not self._cancel_noticed:
                t.add_notice("Turn cancelled.", "warning")
            self._cancel_noticed = False
            self.pending = {k: v for k, v in self.pending.items() if not v.reply.done()}
            await self._show_next_ask()
            self.conflicts = {k: v for k, v in self.conflicts.items() if not v.reply.done()}
            await self._show_conflict()
            if self.budget_pause is not None and self.budget_pause.reply.done():
                self.budget_pause = None
                await self._show_budget()
        elif isinstance(event, Notice):
            t.add_notice(event.text, event.level)
            # the core's own word on a cancel ("cancelled: the partial reply was kept") is the one notice
            self._cancel_noticed = self._cancel_noticed or event.text.startswith("cancelled")
        elif isinstance(event, SessionRenamed):
            self.name_ = event.name
        elif isinstance(event, ModelChanged):
            self.model, self.context_window = event.model, event.context_window
        elif isinstance(event, ModeChanged):
            self.mode = event.mode
        elif isinstance(event, AgentControlsChanged):
            self.agent_controls = self.prompt_box.agent = event
        elif isinstance(event, AgentSessionStale):
            self.agent_stale = event.reason
            await self._show_agent_stale()
        elif isinstance(event, Compacted):
            t.add_notice(
                f"compacted: {event.replaced} messages (above) are summarised in requests; the store "
                f"keeps them all (~{event.tokens_before} -> ~{event.tokens_after} tokens)"
            )
        self.refresh_title()

    async def _show_agent_stale(self) -> None:
        """Show (or remove) the bar offering a new agent session (ui/widgets/agent_stale_bar.py)."""
        if not self.is_mounted:
            return
        had_focus = any(bar.has_focus_within for bar in self.query(AgentStaleBar))
        await self.query(AgentStaleBar).remove()
        if self.agent_stale:
            await self.mount(AgentStaleBar(self.session_id, self.agent_stale), before=self.prompt_box)
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
        inside = next((i for i, bar in enumerate(bars) if focused is not None and
                       (focused is bar or bar in focused.ancestors)), None)  # fmt: skip
        if inside is None:
            bars[0].arm()
        elif inside + 1 < len(bars):
            bars[inside + 1].arm()
        else:
            self.prompt_box.input.focus()
        return True

    @property
    def approval_bar(self) -> ApprovalBar | None:
        """The approval bar shown now, or None."""
        bars = self.query(ApprovalBar)
        return bars.first() if bars else None

    async def _show_next_ask(self) -> None:
        if not self.is_mounted:
            return
        self.pending = {k: v for k, v in self.pending.items() if not v.reply.done()}
        current = self.approval_bar
        first = next(iter(self.pending.values()), None)
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
        await slot.mount(ApprovalBar(first, extra_pending=len(self.pending) - 1))
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
        self.conflicts = {k: v for k, v in self.conflicts.items() if not v.reply.done()}
        current = self.conflict_bar
        first = next(iter(self.conflicts.values()), None)
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

    async def conflict_answered(self, conflict_id: str) -> None:
        """The conflict ``conflict_id`` was answered (here or in the inbox): show the next one."""
        self.conflicts.pop(conflict_id, None)
        await self._show_conflict()

    async def ask_answered(self, request_id: str) -> None:
        """The ask ``request_id`` was answered (here or in the inbox): show the next one, if any."""
        self.pending.pop(request_id, None)
        await self._show_next_ask()

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
        pause = self.budget_pause
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
        busy = panels["s2"]
        await busy.apply(SessionStateChanged("s2", SessionState.RUNNING))
        await busy.apply(TurnStarted("s2", "Explain the parser"))
        await busy.apply(TextDelta("s2", "The parser reads the input **line by line** and "))
        busy.flush()
        asking = panels["s3"]
        await asking.apply(SessionStateChanged("s3", SessionState.RUNNING))
        await asking.apply(TurnStarted("s3", "Run the tests"))
        call = ToolCall("c1", "run_command", '{"command": "npm test"}')
        future = asyncio.get_running_loop().create_future()
        ask = PermissionRequested(
            "s3", "r1", call, "run_command npm test", "no rule", ("Bash(npm test)",), future
        )
        await asking.apply(SessionStateChanged("s3", SessionState.WAITING, "run_command npm test"))
        await asking.apply(ask)


if __name__ == "__main__":
    Demo().run()
