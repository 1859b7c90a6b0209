"""Compacting a session's history (:class:`Compactor`: summarise, record, put in force) and the
compactions asked for while a turn runs (:class:`CompactionQueue`, run at its next safe point).
The cut, the request and the summary request are :mod:`paragents.agent.compaction` (pure); this is
the part that reads the agent's record and writes the store. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from paragents import events as ev
from paragents.agent.calls import ToolCalls
from paragents.agent.compaction import (
    CompactionError,
    CompactionOutcome,
    CompactionState,
    NothingToCompact,
    first_task,
    summarize,
    upto_message_id,
)
from paragents.agent.session import SessionReader
from paragents.agent.spend import Spend, request_cost
from paragents.agent.tokens import estimate_messages_tokens
from paragents.agent.turn import TurnRecord
from paragents.models import Message, Usage
from paragents.store.records import StoreError

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.llm import ChatClient
    from paragents.store.compactions import CompactionsRepo
    from paragents.store.messages import MessagesRepo
    from paragents.store.sessions import SessionsRepo
    from paragents.store.turns import TurnsRepo


class CompactorStore(Protocol):
    """The store's tables a compaction reads and writes: the summary request's usage (``turns``), the
    messages it covers, its own row (``compactions``) and the session's context size (``sessions``)
    (``paragents.store.Store`` is one)."""

    @property
    def turns(self) -> TurnsRepo: ...
    @property
    def messages(self) -> MessagesRepo: ...
    @property
    def compactions(self) -> CompactionsRepo: ...
    @property
    def sessions(self) -> SessionsRepo: ...


class _Agent(Protocol):
    """What compaction reads of paragents' own agent (:class:`~paragents.agent.loop.Agent`): its
    client, config and system prompt as they are now (a reload or a fan-out replaces them)."""

    session: SessionReader
    record: TurnRecord
    calls: ToolCalls
    client: ChatClient
    config: RuntimeConfig
    system_prompt: Callable[[], str]

    @property
    def store(self) -> CompactorStore: ...
    def emit(self, event: ev.Event) -> None: ...
    def request_messages(self) -> list[Message]: ...


class Compactor:
    """Compacts the history of one :class:`~paragents.agent.loop.Agent` (see the module docstring)."""

    def __init__(self, agent: _Agent) -> None:
        self.agent = agent
        self._lock = asyncio.Lock()

    async def compact(self, focus: str | None = None, *, auto: bool = False) -> CompactionOutcome:
        """Compact the history now (see :meth:`_compact_now`); call it only when
        no tool call is running. Never raises for a failed compaction: it emits a Notice saying why,
        leaves the history and the compaction in force unchanged, and returns ``ok=False`` (``auto``:
        when there is nothing worth compacting, returns quietly without a Notice)."""
        agent = self.agent
        sid = agent.session.id
        async with self._lock:
            try:
                await agent.record.sync()  # never summarise (or record) a stale copy
                return await self._compact_now(focus, auto=auto)
            except StoreError as exc:
                text = f"compaction failed: {exc}; the history is unchanged"
                agent.emit(ev.Notice(sid, text, "error"))
                return CompactionOutcome(False, text)
            except NothingToCompact as exc:
                if auto:
                    return CompactionOutcome(False, str(exc))
                agent.emit(ev.Notice(sid, f"not compacted: {exc}", "info"))
                return CompactionOutcome(False, str(exc))
            except CompactionError as exc:
                text = f"compaction failed: {exc}; the history is unchanged"
                if exc.billed is not None:  # the server answered: its request counts in spend
                    try:
                        await self._bill(*exc.billed)
                    except StoreError as store_exc:
                        text += f" (its usage could not be recorded: {store_exc})"
                agent.emit(ev.Notice(sid, text, "error"))
                return CompactionOutcome(False, text)

    async def _compact_now(self, focus: str | None, *, auto: bool) -> CompactionOutcome:
        """Summarise the older part of the history with the session's own model (see
        :func:`paragents.agent.compaction.summarize`), record it in the store and put it in force for
        the next requests (the history list and the store's messages are not changed). Raises
        CompactionError (nothing changed) when there is nothing to compact, the summary fails or the
        store refuses the record."""
        agent = self.agent
        session, record, store, config = agent.session, agent.record, agent.store, agent.config
        window = session.context_window
        specs = agent.calls.specs()
        before = estimate_messages_tokens(agent.request_messages(), specs)
        history = list(record.history)
        summary = await summarize(
            agent.client,
            model=session.model,
            label=f"{session.name}/compact",
            history=history,
            state=record.compaction,
            system_prompt=agent.system_prompt(),
            specs=specs,
            window=window,
            threshold=config.compact_threshold,
            focus=focus,
            auto=auto,
        )
        start, cut = summary.start, summary.cut
        try:  # the server answered: the request is spent whether or not the summary is kept
            await self._bill(summary.usage, summary.estimated)
        except StoreError as exc:
            raise CompactionError(f"the compaction could not be recorded: {exc}") from None
        grown = self._size_with(CompactionState(summary.text, cut, first_task(history)), specs)
        if grown >= before:  # the summary (with the task it quotes) is no shorter than what it folds
            raise NothingToCompact(
                f"the summary would not make the requests smaller (about {before} tokens now, {grown} "
                "with it), so it was not kept"
            )
        try:
            upto = upto_message_id(await store.messages.load(session.id), history, cut)
            revision = record.revision
            record_id = await store.compactions.add(session.id, upto, summary.text, expect_revision=revision)
            if revision is not None:
                record.revision = revision + 1  # refused above when another process wrote meanwhile
        except StoreError as exc:
            raise CompactionError(f"the compaction could not be recorded: {exc}") from None
        record.compaction = CompactionState(summary.text, cut, first_task(history), record_id)
        after = estimate_messages_tokens(agent.request_messages(), specs)
        await store.sessions.update(session.id, last_prompt_tokens=after)
        agent.emit(ev.Compacted(session.id, cut - start, cut, before, after))
        spend = getattr(session, "spend", None) or Spend()  # the summary request counted in _bill
        agent.emit(ev.UsageUpdated(session.id, session.usage, after, window, spend))
        return CompactionOutcome(
            True, f"compacted: {cut - start} messages summarised", cut - start, before, after
        )

    async def _bill(self, usage: Usage, estimated: bool) -> None:
        """Record one summary request the server answered: its usage row in the store (no turn: it
        counts in the session's and the project's spend, and so against every budget, like a turn's
        request) and the session's new totals (``UsageUpdated``; the context size is unchanged)."""
        agent = self.agent
        session, config = agent.session, agent.config
        cost = request_cost(config, session.model, usage)
        await agent.store.turns.add_usage(
            session.id, None, session.model, usage, estimated=estimated, cost_usd=cost
        )
        # add_usage took the summary request's prompt as the context size: the session's is unchanged
        await agent.store.sessions.update(session.id, last_prompt_tokens=session.context_tokens)
        spend = (getattr(session, "spend", None) or Spend()) + Spend(
            usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, cost, estimated
        )
        total = session.usage + usage
        agent.emit(ev.UsageUpdated(session.id, total, session.context_tokens, session.context_window, spend))

    def _size_with(self, state: CompactionState, specs: list[dict[str, Any]]) -> int:
        """The estimated size of the next request were ``state`` the compaction in force."""
        record = self.agent.record
        kept, record.compaction = record.compaction, state
        try:
            return estimate_messages_tokens(self.agent.request_messages(), specs)
        finally:
            record.compaction = kept


class CompactionQueue:
    """Compactions asked for while a turn runs (``/compact``), run by ``compact`` at the turn's next
    safe point (before its next request, or when it ends), never while a tool call is in flight."""

    def __init__(self, compact: Callable[[str | None], Awaitable[CompactionOutcome]]) -> None:
        self._compact = compact
        self.waiters: list[tuple[str | None, asyncio.Future[CompactionOutcome]]] = []
        """The compactions asked for, with their ``focus`` and the future of their outcome."""

    def request(self, focus: str | None = None) -> asyncio.Future[CompactionOutcome]:
        """Ask for a compaction at the next safe point; return a Future of the outcome."""
        future: asyncio.Future[CompactionOutcome] = asyncio.get_running_loop().create_future()
        self.waiters.append((focus, future))
        return future

    async def run_pending(self) -> None:
        """Run the compactions asked with :meth:`request` (no tool call may be running)."""
        while self.waiters:
            focus, future = self.waiters.pop(0)
            outcome = await self._compact(focus)
            if not future.done():
                future.set_result(outcome)
