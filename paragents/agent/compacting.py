"""Compacting a session's history (:class:`Compactor`: summarise, record, put in force) and the
compactions asked for while a turn runs (:class:`CompactionQueue`, run at its next safe point).
The cut, the request and the summary request are :mod:`paragents.agent.compaction` (pure); this is
the part that reads the agent's record and writes the store. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

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
from paragents.models import Message
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
        try:
            cost = request_cost(config, session.model, summary.usage)
            await store.turns.add_usage(
                session.id, None, session.model, summary.usage, estimated=summary.estimated, cost_usd=cost
            )
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
        u = summary.usage
        spend = (getattr(session, "spend", None) or Spend()) + Spend(
            u.prompt_tokens, u.cached_tokens, u.completion_tokens, cost, summary.estimated
        )
        agent.emit(ev.UsageUpdated(session.id, session.usage + u, after, window, spend))
        return CompactionOutcome(
            True, f"compacted: {cut - start} messages summarised", cut - start, before, after
        )


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
