"""Core events: the one path by which the engine tells its clients (TUI, headless run, replay) what happened.

Every event is a frozen dataclass carrying the ``session_id`` it belongs to. The engine calls an
``EventSink`` (a plain callable); the TUI turns each event into a Textual Message, the headless
runner prints it. Events are produced in order per session.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from paragents.limits import Spend
from paragents.models import CallPreview, Message, SessionState, ToolCall, TurnResult, Usage

ApprovalAnswer = Literal["allow_once", "allow_session", "allow_always", "reject_once", "reject_with_note"]
"""Answers to a permission ask (names follow the Agent Client Protocol, plus a session scope)."""

_RULES_KINDS = frozenset({"allow_always"})
_NOTE_KINDS = frozenset({"reject_once", "reject_with_note"})


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """A client's answer to a permission ask: what a :class:`PermissionRequested`'s ``reply`` carries.

    - ``kind``: one of :data:`ApprovalAnswer` (the Agent Client Protocol's option kinds, plus a
      session scope).
    - ``rules``: ``allow_always`` only: the rules to store as the user edited them (empty: the rules
      the policy suggested).
    - ``note``: ``reject_with_note``: the note the model is told; ``reject_once``: why it was refused
      (optional; shown to the model after "denied").
    - ``headless``: ``reject_once`` only: refused because nobody was there to ask (``paragents run``
      without a terminal, a headless fan-out, a replay with no scripted answer); audited as such.

    A field the kind does not take raises ValueError (a client's bug, never the user's input)."""

    kind: ApprovalAnswer
    note: str | None = None
    rules: tuple[str, ...] = ()
    headless: bool = False

    def __post_init__(self) -> None:
        if self.rules and self.kind not in _RULES_KINDS:
            raise ValueError(f"a {self.kind} answer carries no rules")
        if self.note is not None and self.kind not in _NOTE_KINDS:
            raise ValueError(f"a {self.kind} answer carries no note")
        if self.headless and self.kind != "reject_once":
            raise ValueError(f"a {self.kind} answer is not a headless refusal")

    @property
    def answered_by(self) -> str:
        """Who gave it, as the approvals row and the audit say: "headless" or "user"."""
        return "headless" if self.headless else "user"


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all core events. ``session_id`` is the session's store id."""

    session_id: str


@dataclass(frozen=True, slots=True)
class SessionStateChanged(Event):
    """The session moved to ``state``; ``detail`` is a short human note (e.g. an error summary).
    ``waiting_on``: in state WAITING on a conflict, what a held tool call waits on (the holder
    session's name, or a path); None otherwise (``detail`` then says "waiting on X" too)."""

    state: SessionState
    detail: str = ""
    waiting_on: str | None = None


@dataclass(frozen=True, slots=True)
class QueueChanged(Event):
    """The session's queue of not-yet-started prompts is now ``prompts`` (list of (prompt_id, text));
    ``held`` names those that wait to be released (queued when paragents stopped, not sent)."""

    prompts: tuple[tuple[str, str], ...]
    held: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DraftRestored(Event):
    """What was typed in the session's prompt box but not sent when it was last open goes back into
    it as ``text``, not sent (paragents.sessions.drafts); ``queued`` prompts still queued then are
    back in the queue, held (a ``QueueChanged`` shows them)."""

    text: str
    queued: int = 0


@dataclass(frozen=True, slots=True)
class TurnStarted(Event):
    """A turn began for ``prompt`` (the user text)."""

    prompt: str


@dataclass(frozen=True, slots=True)
class MessageAdded(Event):
    """A complete message was appended to the history (and stored). ``message`` is OpenAI-shaped."""

    message: Message


@dataclass(frozen=True, slots=True)
class TextDelta(Event):
    """A piece of answer text arrived from the model; ``pieces`` > 1 when a consumer joined that many
    consecutive deltas of one session into this one (the TUI does while they wait in its queue)."""

    text: str
    pieces: int = 1


@dataclass(frozen=True, slots=True)
class AwaitingReply(Event):
    """``waiting`` True: a model request was sent and nothing of its reply has arrived yet (clients show
    how long, e.g. "waiting for first token, 12 s"); False: the first text, reasoning or tool-call
    token arrived, or the request ended without one."""

    waiting: bool


@dataclass(frozen=True, slots=True)
class ReasoningDelta(Event):
    """A piece of reasoning (thinking) text arrived from the model; ``pieces`` as in :class:`TextDelta`."""

    text: str
    pieces: int = 1


@dataclass(frozen=True, slots=True)
class StreamRetry(Event):
    """The request failed and will be retried after ``delay`` seconds; ``reason`` is readable."""

    reason: str
    delay: float
    attempt: int


@dataclass(frozen=True, slots=True)
class ToolCallStarted(Event):
    """A tool call is about to run (after permission). ``summary`` is a one-line argument summary;
    ``sandboxed`` says whether a command runs in the sandbox (None: not a command)."""

    call: ToolCall
    summary: str
    sandboxed: bool | None = None


@dataclass(frozen=True, slots=True)
class ToolCallFinished(Event):
    """A tool call ended. ``status`` is ok/error/denied/cancelled; ``output`` is the text sent back to
    the model; ``diff`` is a unified diff for edits (or None); ``sandboxed`` says whether a command
    ran in the sandbox (None: not a command, or it did not run)."""

    call: ToolCall
    status: Literal["ok", "error", "denied", "cancelled", "skipped"]
    output: str
    diff: str | None = None
    sandboxed: bool | None = None


@dataclass(frozen=True, slots=True)
class PermissionRequested(Event):
    """A tool call needs the user's answer. The UI shows it inline and resolves ``reply``.

    - ``request_id``: unique id of this ask.
    - ``call``: the tool call; ``summary``: one-line description of the exact call.
    - ``reason``: why it asks (which rule or default).
    - ``suggested_rules``: the rules "always allow" would store (editable by the user).
    - ``reply``: a Future the client resolves with its :class:`PermissionAnswer` (the kind, with
      the note of ``reject_with_note`` or the edited rules of ``allow_always``).
    - ``sandboxed``: whether the command would run in the sandbox (None: not a command).
    - ``preview``: what the call will do (diff, new content, command and its directory), computed
      without running it; None when the tool has nothing to show.
    - ``rule`` / ``rule_scope``: the rule that made it ask and where it came from, or None when no
      rule matched (the default or the mode decided).
    - ``agent_options``: an external ACP agent's own permission options as ``(kind, name)``
      (``allow_once``, ``allow_always``, ``reject_once``, ``reject_always``): the answers are shown
      with the agent's names; empty for paragents' own tools.
    """

    request_id: str
    call: ToolCall
    summary: str
    reason: str
    suggested_rules: tuple[str, ...]
    reply: asyncio.Future[PermissionAnswer] = field(compare=False, repr=False)
    preview: CallPreview | None = None
    rule: str | None = None
    rule_scope: str | None = None
    sandboxed: bool | None = None
    agent_options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class PermissionResolved(Event):
    """The ask ``request_id`` was answered with ``answer`` (by ``by``: "user", "policy", "headless")."""

    request_id: str
    answer: str
    by: str = "user"


ConflictAnswer = Literal["wait", "run_anyway", "skip", "reread"]
"""Answers to a conflict: hold the call until the holder releases, run it anyway, skip it (the model is
told why), or (stale reads) tell the model the file changed and give it the new content."""

ConflictKind = Literal["reservation", "stale_read", "resource", "unknown_targets"]
"""Why a call conflicts: another session reserved an overlapping path, the file changed since this
session read it, another session uses the same named resource, or a command's write targets cannot be
known while another session holds a reservation."""


@dataclass(frozen=True, slots=True)
class ConflictDetected(Event):
    """A tool call was held by the conflict checker (paragents.conflicts); the UI asks and resolves ``reply``.

    - ``conflict_id``: unique id of this conflict; ``call``/``summary``: the held tool call.
    - ``kind``: see :data:`ConflictKind`; ``path``: the contested path (or ``resource:NAME``).
    - ``holder``: name of the session holding it; for a stale read, the session of this process that
      changed the file ("" when the change came from elsewhere, and for unknown holders);
      ``holder_reason``: what the holder is doing (its call summary), may be "".
    - ``since``: when the holder took it (Unix time, seconds); for a stale read, when ``holder``
      wrote the file, or (no holder) when this session read it.
    - ``diff``: unified diff of what changed on disk (stale reads), else None.
    - ``choices``: the answers offered (subset of :data:`ConflictAnswer`).
    - ``reply``: a Future resolved with one of ``choices``.
    - ``others``: names of the other sessions that also read or wrote the file (stale reads).
    """

    conflict_id: str
    call: ToolCall
    summary: str
    kind: ConflictKind
    path: str
    holder: str
    holder_reason: str
    since: float
    diff: str | None
    choices: tuple[ConflictAnswer, ...]
    reply: asyncio.Future[ConflictAnswer] = field(compare=False, repr=False)
    others: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ConflictResolved(Event):
    """The conflict ``conflict_id`` ended with ``answer`` (by ``by``: "user", "auto" when the holder
    released by itself, "unattended" when nobody could answer, "cancelled")."""

    conflict_id: str
    answer: str
    by: str = "user"


@dataclass(frozen=True, slots=True)
class UsageUpdated(Event):
    """Token totals changed. ``total`` is the session's cumulative usage; ``context_tokens`` the
    size (tokens) of the next request's context; ``context_window`` the model's window (tokens)."""

    total: Usage
    context_tokens: int
    context_window: int
    spend: Spend | None = None
    """The session's cumulative spend (tokens and money priced per request), when known."""


@dataclass(frozen=True, slots=True)
class QuestionAsked(Event):
    """The turn ended with a question to the user (``paragents.agent.question``): the session needs
    the user ("needs you: question") until a prompt is sent. ``text`` is the question paragraph."""

    text: str


@dataclass(frozen=True, slots=True)
class TurnFinished(Event):
    """A turn ended with ``status`` (completed/failed/cancelled); ``error`` is a readable message or None;
    ``error_kind`` a short machine kind (auth, not_found, rate_limit, protocol, connection, ...)."""

    status: Literal["completed", "failed", "cancelled"]
    error: str | None = None
    error_kind: str | None = None
    result: TurnResult | None = field(default=None, compare=False, repr=False)
    """The whole outcome (the messages the turn added, its usage); the view keeps it as ``last_result``."""


BudgetAnswer = Literal["retry", "one_more", "stop"]
"""Answers to a budget pause: check again (after raising the cap), send one more request, stop the turn."""


@dataclass(frozen=True, slots=True)
class BudgetPaused(Event):
    """A turn is held before its next model request (the session is in state BUDGET): ``level`` is
    "session", "project_day", "group" or "loop" (the loop guard); ``kind`` the cap reached ("usd",
    "tokens", "seconds", "identical_calls", "idle_requests"); ``spent`` / ``cap`` as shown ("$2.00");
    ``reason`` one readable line. ``reply`` is resolved with a :data:`BudgetAnswer`. ``pause_id``
    names this pause (an answer from ``paragents serve`` names it, so a later pause is not answered
    by it)."""

    level: str
    kind: str
    spent: str
    cap: str
    reason: str
    reply: asyncio.Future[BudgetAnswer] = field(compare=False, repr=False)
    pause_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


@dataclass(frozen=True, slots=True)
class BudgetResolved(Event):
    """The budget pause of the session ended with ``answer`` (or "cancelled" with the turn)."""

    answer: str


@dataclass(frozen=True, slots=True)
class BudgetChanged(Event):
    """The session's own budget (``/budget session``) is now ``budget`` (a ``paragents.limits.Budget``,
    None: the config's default)."""

    budget: Any


@dataclass(frozen=True, slots=True)
class Notice(Event):
    """A readable note for the session's transcript (level info/warning/error)."""

    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True, slots=True)
class Compacted(Event):
    """The session's history was compacted: in requests, a summary now stands for the first
    ``covered`` history messages (``replaced`` of them newly folded by this compaction). The store and
    the transcript keep every message. ``tokens_before`` / ``tokens_after``: estimated request size."""

    replaced: int
    covered: int
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True, slots=True)
class SessionRenamed(Event):
    """The session is now called ``name``."""

    name: str


@dataclass(frozen=True, slots=True)
class ModelChanged(Event):
    """The session's next requests use ``model``, whose context window is ``context_window`` tokens."""

    model: str
    context_window: int


@dataclass(frozen=True, slots=True)
class ModeChanged(Event):
    """The session's permission mode is now ``mode``."""

    mode: str


@dataclass(frozen=True, slots=True)
class SandboxChanged(Event):
    """The session's ``/sandbox`` mode is now ``mode`` (off/auto/required)."""

    mode: str


@dataclass(frozen=True, slots=True)
class LaneAttached(Event):
    """The session works in lane ``lane``: its worktree ``path`` is the working directory and the
    sandbox's writable root; ``env`` (PARAGENTS_PORT, PORT...) goes to its commands."""

    lane: str
    path: str
    env: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    """What making the lane said (where it is, its ports, "the main checkout has uncommitted changes")."""


@dataclass(frozen=True, slots=True)
class LanePlaceChanged(Event):
    """Where the session's lane runs and whether it answers (a lane on a remote backend,
    docs/remote.md): ``where`` ("container paragents-3f2a-api (unix:///...)"), ``state`` "ready" or
    "unreachable" (its tool calls fail at once and the session pauses), ``note`` what happened (it
    was recreated from its last fetched snapshot, it answers again...)."""

    lane: str
    where: str
    state: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class PredictedConflict:
    """A conflict predicted between lane ``a`` and ``b`` (another lane, or the base branch ``b`` when
    ``against_base``) in ``files``, before either merged. ``key`` changes when the prediction does."""

    key: str
    a: str
    b: str
    files: tuple[str, ...]
    against_base: bool = False

    def other(self, lane: str) -> str:
        """The side that is not ``lane`` ("its base main" for a base-branch conflict)."""
        if self.against_base:
            return f"its base {self.b}"
        return self.b if self.a == lane else self.a

    def describe(self) -> str:
        """The full text: "api conflicts with web in src/app.py, src/b.py"."""
        return f"{self.a} conflicts with {self.other(self.a)} in {', '.join(self.files)}"

    def title(self, lane: str) -> str:
        """The short text of lane ``lane``'s panel title: "conflicts with web in src/app.py (+1)"."""
        more = f" (+{len(self.files) - 1})" if len(self.files) > 1 else ""
        return f"conflicts with {self.other(lane)} in {self.files[0] if self.files else '?'}{more}"


@dataclass(frozen=True, slots=True)
class LaneConflictsChanged(Event):
    """The conflicts now predicted for the session's lane ``lane`` (dismissed ones left out); empty
    when none holds any more."""

    lane: str
    conflicts: tuple[PredictedConflict, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionRulesChanged(Event):
    """The session's "allow for this session" rules are now ``rules``."""

    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReadOnlyChanged(Event):
    """``reason`` set: another live process holds the session, so it is read-only here (why, and how
    to take it over); None: this process holds it. ``state``: the holder's state, when known."""

    reason: str | None
    state: SessionState | None = None


@dataclass(frozen=True, slots=True)
class ConversationLoaded(Event):
    """The conversation shown is ``messages`` (read from the store, or copied by a fork), replacing
    what was shown; ``context_tokens`` the size of the next request when known (else unchanged).
    ``notes``: how past turns ended when not completed, ``(n, text, level)`` to show after the
    first ``n`` messages (a restored transcript says a turn failed, was cancelled or interrupted)."""

    messages: tuple[Message, ...]
    context_tokens: int | None = None
    notes: tuple[tuple[int, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ConversationCleared(Event):
    """``/clear``: a new, empty conversation started (the old one stays in the store)."""


@dataclass(frozen=True, slots=True)
class AgentControlsChanged(Event):
    """What the session's external ACP agent offers changed (``paragents.acp.controls``): its slash
    ``commands`` ((name, description) pairs, plain text from the agent), the name of its current
    ``mode`` and ``model`` (None: it has none). ``agent``: its name, to mark its commands."""

    agent: str
    commands: tuple[tuple[str, str], ...] = ()
    mode: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class AgentSessionStale(Event):
    """An external ACP agent cannot continue the stored conversation (no ``session/load`` nor
    ``session/resume``): ``reason`` says so and how to start a new agent session (the transcript is
    read-only for it until then); None: a new agent session began (paragents.acp.agent)."""

    reason: str | None


EventSink = Callable[[Event], None]
"""A callable the engine calls with every event; it must not block (schedule work instead)."""
