"""The record of a session's turns (:class:`TurnRecord`), held by paragents' own agent
(:class:`~paragents.agent.loop.Agent`) and by an external ACP agent alike.

It keeps the conversation copy the agent works on (``history``, the ``compaction`` in force, the store
``revision`` and newest message id that copy is at) and the running turn (its store id, the messages
it added, the usage it counted), and it is the one way a turn is written: messages appended (a write
refused when another process wrote meanwhile), usage accounted, the session's state moved, the turn
finished or failed (a store that cannot be written, a bug escaping the loop) and held at a budget
pause. Every change the session shows goes out as an event (``emit``); the session itself is read
only. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Protocol

from paragents import events as ev
from paragents.agent.compaction import CompactionState, load_compaction
from paragents.agent.session import SessionReader
from paragents.agent.spend import Spend, request_cost
from paragents.models import Message, SessionState, TurnResult, TurnStatus, Usage
from paragents.store.records import HistoryChanged, StoreError

if TYPE_CHECKING:
    from paragents.agent.budget import Breach, BudgetMeter
    from paragents.config import RuntimeConfig
    from paragents.store.compactions import CompactionsRepo
    from paragents.store.messages import MessagesRepo
    from paragents.store.turns import TurnsRepo

STORE_KIND = "store"
"""``error_kind`` of a turn stopped because the store could not be written (or refused a stale write)."""
BUDGET_KIND = "budget"
"""``error_kind`` of a turn stopped at a budget pause ("stop"); ``paragents run`` exits with 7."""
LOOP_KIND = "loop"
"""``error_kind`` of a turn stopped at a loop-guard pause ("stop"); ``paragents run`` exits with 7."""
CANCELLED_RESULT = "cancelled: the user cancelled the turn before this call finished"
"""The result of a tool call the turn's cancel cut short (the history stays valid)."""


class TurnStore(Protocol):
    """The store's tables the record of the turns writes and reads: the conversation's messages, the
    turns and their usage, the compaction in force (``paragents.store.Store`` is one)."""

    @property
    def messages(self) -> MessagesRepo: ...
    @property
    def turns(self) -> TurnsRepo: ...
    @property
    def compactions(self) -> CompactionsRepo: ...


class TurnRecord:
    """The conversation copy of one session's agent and the record of its running turn (see the
    module docstring). ``config`` is replaced on a config reload; ``budget`` is None without budgets
    (unit tests)."""

    def __init__(
        self,
        *,
        session: SessionReader,
        store: TurnStore,
        config: RuntimeConfig,
        emit: ev.EventSink,
        budget: BudgetMeter | None = None,
        history: list[Message] | None = None,
    ) -> None:
        self.session = session
        self.store = store
        self.config = config
        self.emit = emit
        self.budget = budget
        self.history: list[Message] = list(history or [])
        """The provider-valid messages of the current conversation (no system prompt; incomplete
        replies excluded)."""
        self.compaction: CompactionState | None = None
        """The compaction in force (a summary standing for the oldest history messages), or None."""
        self.revision: int | None = None
        """The store revision of the session's history that ``history`` is up to date with; None
        (never checked) until :meth:`mark_current`. Writes are refused by the store when it moved."""
        self.last_message_id = 0
        """The newest stored message id ``history`` includes (messages after it are new to this copy)."""
        self.turn_id: int | None = None
        """Store id of the running turn, or None between turns."""
        self.added: list[Message] = []
        """The messages the running turn added (as shown: tool results with their outcome)."""
        self.total = Usage()
        """The usage the running turn counted."""

    # -- the conversation copy -------------------------------------------------------------------------
    async def mark_current(self) -> None:
        """Record that ``history`` is up to date with the store now (after loading it)."""
        self.revision, self.last_message_id = await self.store.messages.history_mark(self.session.id)

    async def sync(self) -> int:
        """Reload the history when another process wrote to this session since it was loaded
        (its revision moved): the history, the compaction in force and the messages shown (new
        ones are emitted as MessageAdded, in store order). Returns how many new messages it found."""
        if self.revision is None:
            return 0
        sid = self.session.id
        found = 0
        for _attempt in range(3):
            revision, _newest = await self.store.messages.history_mark(sid)
            if revision == self.revision:
                break
            stored, history = await self.store.messages.load_for_display_and_history(sid)
            self.history = history
            self.compaction = await load_compaction(self.store, sid, history)
            new = [m for m in stored if m.id > self.last_message_id]
            for item in new:
                self.emit(ev.MessageAdded(sid, item.for_display()))
            found += len(new)
            self.last_message_id = max([self.last_message_id, *(m.id for m in stored)])
            self.revision = revision
        if found:
            plural = "" if found == 1 else "s"
            self.emit(
                ev.Notice(
                    sid,
                    f"this session changed in another process: {found} new message{plural} "
                    "loaded before going on",
                    "warning",
                )
            )
        return found

    def written(self, msg_id: int) -> None:
        """Note one history write of this copy (the store's revision grew by one)."""
        self.last_message_id = max(self.last_message_id, msg_id)
        if self.revision is not None:
            self.revision += 1

    # -- the running turn ------------------------------------------------------------------------------
    async def start(self, prompt: str, *, announce: bool = True) -> TurnResult | None:
        """Begin a turn for ``prompt``: catch up with the store, record the turn, move the session to
        RUNNING. Returns None when it began, else how it ended (the store failed; see
        :meth:`store_failed`). ``announce`` False: no ``TurnStarted`` (a prompt refused before sending
        is not shown as sent; it goes back to the prompt box instead)."""
        sid = self.session.id
        self.added, self.total = [], Usage()
        try:
            await self.sync()  # another process may have written since this copy was loaded
            self.turn_id = await self.store.turns.start(sid, prompt)
        except StoreError as exc:
            if announce:
                self.emit(ev.TurnStarted(sid, prompt))
            return await self.store_failed(exc)
        self.set_state(SessionState.RUNNING)
        if announce:
            self.emit(ev.TurnStarted(sid, prompt))
        return None

    def set_state(self, state: SessionState, detail: str = "") -> None:
        """Move the session to ``state`` (``detail``: a short note, e.g. the error)."""
        self.emit(ev.SessionStateChanged(self.session.id, state, detail))

    async def append(self, message: Message, outcome: str | None = None) -> None:
        """Store ``message`` (refused with HistoryChanged when another process wrote meanwhile), then
        add it to the history and the turn's messages and emit it (a tool result with its outcome)."""
        msg_id = await self.store.messages.append(
            self.session.id, message, turn_id=self.turn_id, outcome=outcome, expect_revision=self.revision
        )
        self.written(msg_id)
        self.history.append(message)
        shown = {**message, "outcome": outcome or "ok"} if message.get("role") == "tool" else message
        self.added.append(shown)
        self.emit(ev.MessageAdded(self.session.id, shown))

    async def append_user(self, prompt: Message) -> None:
        """Store the turn's user message; when another process wrote between the turn's start and now,
        catch up once more and store it after what it wrote."""
        try:
            await self.append(prompt)
        except HistoryChanged:  # written between the sync and now: reload once more
            await self.sync()
            await self.append(prompt)

    async def append_result(self, result: Message, outcome: str) -> None:
        """Store a tool call's result; when the session was taken over meanwhile it is still kept,
        right after its call, and the turn stops (HistoryChanged is raised again)."""
        try:
            await self.append(result, outcome)
        except HistoryChanged:  # taken over meanwhile: keep this result, right after its call
            await self.store.messages.append_late_tool_result(
                self.session.id, result, outcome=outcome, turn_id=self.turn_id
            )
            raise

    async def keep_unsent(self, prompt: Message) -> None:
        """Store the turn's user message that was refused before sending (too big for the window):
        kept and shown like a partial reply (marked incomplete), never part of the history sent to
        the model, so no later request carries it or tries to compact it."""
        try:
            await self.append_partial(prompt)
        except HistoryChanged:  # written between the turn's start and now: catch up once more
            await self.sync()
            await self.append_partial(prompt)

    async def append_partial(self, msg: Message) -> None:
        """Store a partial reply (kept, marked incomplete, never sent back) and report it."""
        msg_id = await self.store.messages.append(
            self.session.id, msg, turn_id=self.turn_id, complete=False, expect_revision=self.revision
        )
        self.written(msg_id)
        shown = {**msg, "incomplete": True}
        self.added.append(shown)
        self.emit(ev.MessageAdded(self.session.id, shown))

    async def account(self, usage: Usage, context: int, *, estimated: bool) -> None:
        """Store ``usage`` for the turn (priced at the model's rates), add it to the turn's total and
        emit the session's new totals and the next request's context size."""
        sid = self.session.id
        model = self.session.model
        cost = request_cost(self.config, model, usage)
        await self.store.turns.add_usage(sid, self.turn_id, model, usage, estimated=estimated, cost_usd=cost)
        spend = getattr(self.session, "spend", None) or Spend()
        spend = spend + Spend(
            usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, cost, estimated
        )
        total = self.session.usage + usage
        self.emit(ev.UsageUpdated(sid, total, context, self.session.context_window, spend))
        self.total = self.total + usage

    async def pause(self, breach: Breach) -> ev.BudgetAnswer:
        """Hold the turn at ``breach`` until the user answers (raise the cap, one more, stop)."""
        sid = self.session.id
        reply: asyncio.Future[ev.BudgetAnswer] = asyncio.get_running_loop().create_future()
        if self.budget is not None:
            self.budget.stop_clock()
        self.set_state(SessionState.BUDGET, breach.reason)
        self.emit(
            ev.BudgetPaused(sid, breach.level, breach.kind, breach.spent, breach.cap, breach.reason, reply)
        )
        answer: str = "cancelled"
        try:
            answer = await reply
            return answer
        finally:
            self.emit(ev.BudgetResolved(sid, answer))
            if answer != "stop" and answer != "cancelled":
                if self.budget is not None:
                    self.budget.start_clock()
                self.set_state(SessionState.RUNNING)

    async def finish(
        self,
        status: TurnStatus,
        error: str | None = None,
        kind: str | None = None,
        *,
        question: str | None = None,
    ) -> TurnResult:
        """End the running turn with ``status`` (``error`` and its ``kind`` when it failed;
        ``question`` when the reply ends by asking the user): its row is finished, the session goes
        idle (or failed) and ``TurnFinished`` carries the result."""
        sid = self.session.id
        seconds = self.budget.take_turn_seconds() if self.budget is not None else None
        if self.turn_id is not None:
            try:
                await self.store.turns.finish(self.turn_id, status.value, error, run_seconds=seconds)
            except StoreError as exc:  # the store keeps it and writes it with its next turn or close
                if kind != STORE_KIND:
                    self.emit(ev.Notice(sid, f"the end of this turn could not be saved yet: {exc}", "error"))
        self.turn_id = None
        state = SessionState.FAILED if status is TurnStatus.FAILED else SessionState.IDLE
        self.set_state(state, error or "")
        if question is not None:
            self.emit(ev.QuestionAsked(sid, question))
        result = TurnResult(
            status=status, error=error, error_kind=kind, messages=self.added, usage=self.total
        )
        self.emit(ev.TurnFinished(sid, status.value, error, kind, result))
        return result

    async def store_failed(self, exc: Exception) -> TurnResult:
        """End the turn as failed with ``error_kind`` "store": the store could not be written (a lock
        held too long, a full disk...) or refused a write because another process changed the
        session meanwhile (then the history is reloaded so the next turn starts from the truth)."""
        if isinstance(exc, HistoryChanged):
            text = (
                "another process wrote to this session while this turn ran (it was taken over), so "
                "this turn stopped without writing more; what both wrote is kept in order. Send the "
                "prompt again if it is still needed"
            )
            with contextlib.suppress(StoreError):
                await self.sync()
        else:
            text = str(exc)
            if "nothing more could be saved" not in text:
                text += "; the turn stopped (what was saved before is kept): check the disk and that "
                text += "no other program holds the database, then send the prompt again"
        return await self.finish(TurnStatus.FAILED, text, STORE_KIND)

    async def fail_internal(self, text: str) -> TurnResult:
        """End the running turn as failed with ``error_kind`` "internal" (a bug escaped the loop):
        its turn row is finished and the session shows the failure instead of running forever."""
        self.added, self.total = [], Usage()
        return await self.finish(TurnStatus.FAILED, text, "internal")

    async def fail_on_store(self, exc: Exception) -> TurnResult:
        """End a turn that failed on the store before the agent's turn began it (see
        :meth:`store_failed`)."""
        self.added, self.total = [], Usage()
        return await self.store_failed(exc)
