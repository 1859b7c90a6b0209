"""The live state of one open session (:class:`SessionView`) and :class:`SessionError`.

:meth:`SessionView.apply` is the one writer of a session's state: the runtime calls it with every
event it emits, before any client sees the event, so the agent and the lifecycle code change a
session only by emitting events. Clients read the view. Nothing here imports Textual."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from paragents import events as ev
from paragents.limits import Budget, Spend
from paragents.models import Message, SessionState, TurnResult, Usage
from paragents.scheduler import QueuedPrompt


class SessionError(Exception):
    """A runtime command could not be done (bad session name, unknown session...). ``str()`` is readable."""


@dataclass
class SessionView:
    """Live state of one open session, written only by :meth:`apply` (clients and the agent read it).

    ``messages`` is the current conversation for display (OpenAI-shaped, system prompt excluded; a
    partial reply kept after a failure carries ``"incomplete": True``). ``queue`` holds prompts not yet
    started. ``pending`` maps request ids to unanswered permission asks. Token counts are in tokens."""

    id: str
    name: str
    model: str
    mode: str
    workdir: Path
    state: SessionState = SessionState.IDLE
    usage: Usage = field(default_factory=Usage)
    context_tokens: int = 0
    context_window: int = 8192
    queue: list[QueuedPrompt] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    pending: dict[str, ev.PermissionRequested] = field(default_factory=dict)
    conflicts: dict[str, ev.ConflictDetected] = field(default_factory=dict)
    """Unanswered conflicts (paragents.conflicts) by conflict id, oldest first."""
    waiting_on: str | None = None
    """What a held tool call waits on (the holder session's name, or a path), else None."""
    session_rules: list[str] = field(default_factory=list)
    last_result: TurnResult | None = None
    """How the last turn ended (set by its ``TurnFinished``), or None before the first one."""
    sandbox_mode: str | None = None
    """The session's ``/sandbox`` mode (off/auto/required), or None for the config's ``sandbox.mode``."""
    sandbox_root: Path | None = None
    """The sandbox's writable root (e.g. a lane's worktree), or None for ``workdir``."""
    lane: str | None = None
    """The name of the lane (a git worktree, paragents.lanes) the session works in, or None."""
    lane_env: dict[str, str] = field(default_factory=dict)
    """Environment for the lane's commands (its ports), empty without a lane."""
    lane_notes: list[str] = field(default_factory=list)
    """What making the session's lane said (shown once by the client that made it)."""
    lane_conflicts: tuple[ev.PredictedConflict, ...] = ()
    """Conflicts predicted for the session's lane right now (not dismissed)."""
    lane_where: str | None = None
    """Where the session's lane runs when not on this machine ("container ..."), else None."""
    lane_state: str = "ready"
    """Whether that lane answers: "ready" or "unreachable" (its turn pauses)."""
    budget: Budget | None = None
    """The session's own budget set with ``/budget session`` (None: the config's ``budgets.session``)."""
    budget_pause: ev.BudgetPaused | None = None
    """The budget or loop-guard pause holding the turn, or None."""
    spend: Spend = field(default_factory=Spend)
    """What the session spent: tokens (prompt, cached, completion) and money priced per request."""
    question: str | None = None
    """The question the last turn ended with (needs you: question) until a prompt is sent, or None;
    after a restart read back from the conversation (sessions/opening.py ``restored_question``)."""
    history_notes: list[tuple[int, str, str]] = field(default_factory=list)
    """How past turns ended when not completed: ``(n, text, level)`` shown after ``messages[:n]``."""
    draft: str = ""
    """Text typed but not sent when the session was last open (``DraftRestored``), for its prompt box."""
    agent_controls: ev.AgentControlsChanged | None = None
    """What the session's external ACP agent offers (commands, current mode and model), when it runs one."""
    read_only: str | None = None
    """Set when another live process holds the session (one writer per session): why it is shown
    read-only here and how to take it over; None when this process holds it."""
    agent_stale: str | None = None
    """Set when the session's external ACP agent cannot continue the stored conversation (see
    ``ev.AgentSessionStale``): the panel offers to start a new agent session; None otherwise."""
    state_detail: str = ""
    """The short note of the last state change (``SessionStateChanged.detail``: why a prompt is
    QUEUED, an error summary...), "" when none."""

    @property
    def open_asks(self) -> list[ev.PermissionRequested]:
        """The asks of ``pending`` still waiting for an answer, oldest first (one answered, here or in
        another client, stays in ``pending`` until its ``PermissionResolved``)."""
        return [ask for ask in self.pending.values() if not ask.reply.done()]

    @property
    def open_conflicts(self) -> list[ev.ConflictDetected]:
        """The conflicts of ``conflicts`` still waiting for an answer, oldest first."""
        return [conflict for conflict in self.conflicts.values() if not conflict.reply.done()]

    @property
    def open_pause(self) -> ev.BudgetPaused | None:
        """``budget_pause`` while it waits for an answer, else None."""
        pause = self.budget_pause
        return pause if pause is not None and not pause.reply.done() else None

    def apply(self, event: ev.Event) -> None:
        """Update the view from one of its session's events (events that change nothing are ignored)."""
        match event:
            case ev.SessionStateChanged(state=state, detail=detail, waiting_on=waiting_on):
                self.state = SessionState(state)
                self.state_detail = detail
                self.waiting_on = waiting_on
            case ev.PermissionRequested(request_id=request_id):
                self.pending[request_id] = event
            case ev.PermissionResolved(request_id=request_id):
                self.pending.pop(request_id, None)
            case ev.ConflictDetected(conflict_id=conflict_id):
                self.conflicts[conflict_id] = event
            case ev.ConflictResolved(conflict_id=conflict_id):
                self.conflicts.pop(conflict_id, None)
            case ev.MessageAdded(message=message):
                self.messages.append(message)
            case ev.DraftRestored(text=text):
                self.draft = text
            case ev.QueueChanged(prompts=prompts, held=held):
                self.queue = [QueuedPrompt(pid, text, held=pid in held) for pid, text in prompts]
            case ev.UsageUpdated(total=total, context_tokens=context_tokens, context_window=window):
                self.usage = total
                self.context_tokens = context_tokens
                self.context_window = window
                if event.spend is not None:
                    self.spend = event.spend
            case ev.QuestionAsked(text=text):
                self.question = text
            case ev.TurnStarted():
                self.question = None
            case ev.TurnFinished(result=result):
                if result is not None:
                    self.last_result = result
            case ev.BudgetPaused():
                self.budget_pause = event
            case ev.BudgetResolved():
                self.budget_pause = None
            case ev.BudgetChanged(budget=budget):
                self.budget = budget
            case ev.SessionRenamed(name=name):
                self.name = name
            case ev.ModelChanged(model=model, context_window=window):
                self.model = model
                self.context_window = window
            case ev.ModeChanged(mode=mode):
                self.mode = mode
            case ev.SandboxChanged(mode=mode):
                self.sandbox_mode = mode
            case ev.LanePlaceChanged(where=where, state=state):
                self.lane_where = where
                self.lane_state = state
            case ev.LaneAttached(lane=lane, path=path, env=env, notes=notes):
                self.lane = lane
                self.sandbox_root = Path(path)
                self.lane_env = dict(env)
                self.lane_notes = list(notes)
            case ev.LaneConflictsChanged(conflicts=conflicts):
                self.lane_conflicts = conflicts
            case ev.SessionRulesChanged(rules=rules):
                self.session_rules = list(rules)
            case ev.AgentSessionStale(reason=reason):
                self.agent_stale = reason
            case ev.ReadOnlyChanged(reason=reason, state=state):
                self.read_only = reason
                if state is not None:
                    self.state, self.state_detail = state, ""
            case ev.ConversationLoaded(messages=messages, context_tokens=context_tokens, notes=notes):
                self.messages = list(messages)
                self.history_notes = list(notes)
                if context_tokens is not None:
                    self.context_tokens = context_tokens
            case ev.AgentControlsChanged():
                self.agent_controls = event
            case ev.ConversationCleared():
                self.messages = []
                self.context_tokens = 0
