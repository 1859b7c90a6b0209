"""What an external ACP agent says it spent, counted as its session's spend (:class:`AgentSpending`).

ACP's ``usage_update`` may carry ``cost`` (amount and currency): the cumulative cost of the agent's
own session. Each time it changes, the difference with what was already counted is stored as a usage
row of the session with that cost in USD and no tokens (``store.agent_sessions.add_cost``), so the panel's
title, the overview, ``/budget`` and the budget caps (session, group, project/day) count it exactly
like paragents' own priced usage; the last cumulative amount is kept with the agent session row, so
a reloaded agent session is not counted twice (an amount lower than that means the agent counts
from zero again). Another currency is shown (a note once, then the amount as it changes) and never
counted toward USD caps. During a turn, a changed cost is checked against the caps at once: a cap
crossed ends the turn (``session/cancel``) instead of letting the agent go on spending. Nothing here
imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Protocol

from paragents import events as ev
from paragents.limits import Spend

if TYPE_CHECKING:
    from paragents.acp.updates import TurnLog
    from paragents.agent.budget import Breach, BudgetMeter
    from paragents.agent.session import SessionReader
    from paragents.agent.turn import TurnRecord
    from paragents.store.agent_sessions import AgentSessionsRepo

USD = "USD"


class _Store(Protocol):
    """The store's tables the spending uses (``paragents.store.Store`` is one)."""

    @property
    def agent_sessions(self) -> AgentSessionsRepo: ...


class _Agent(Protocol):
    """What the spending uses of its :class:`~paragents.acp.agent.AcpAgent` (a protocol, so the two
    modules form no import cycle)."""

    log: TurnLog
    session: SessionReader
    budget: BudgetMeter | None
    spec: Any
    record: TurnRecord

    @property
    def store(self) -> _Store: ...
    def emit(self, event: ev.Event) -> None: ...


class AgentSpending:
    """The reported cost of one :class:`~paragents.acp.agent.AcpAgent`'s session (module docstring)."""

    def __init__(self, agent: _Agent) -> None:
        self.agent = agent
        self.counted: float | None = None
        """The cumulative amount already counted (None: not read from the store yet)."""
        self.currencies: set[str] = set()
        """Currencies other than USD already explained in the panel."""
        self.changed = asyncio.Event()
        self._watch: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    @property
    def in_usd(self) -> bool:
        """True when the agent reports its cost in USD (then tokens are not priced again)."""
        cost = self.agent.log.cost
        return cost is not None and cost[1].upper() == USD

    def reported(self) -> None:
        """A ``usage_update`` arrived (``TurnLog.on_usage``). Replayed by ``session/load``: the amount
        is what was spent before, not new. During a turn: counted and checked by the turn's watcher."""
        if self.agent.log.muted and self.agent.log.cost is not None:
            self.counted = self.agent.log.cost[0]
            return
        self.changed.set()

    def new_session(self) -> None:
        """A new agent session began: its cost counts from zero (the old session's last amount is not
        this one's)."""
        self.counted = 0.0
        self.agent.log.cost = None

    async def settle(self) -> None:
        """Count the cost reported since the last call (see the module docstring)."""
        async with self._lock:
            await self._settle()

    async def _settle(self) -> None:
        agent = self.agent
        sid = agent.session.id
        self.changed.clear()
        cost = agent.log.cost
        if cost is None:
            return
        amount, currency = cost
        if self.counted is None:
            self.counted = await agent.store.agent_sessions.get_reported_cost(sid) or 0.0
        delta = amount - self.counted if amount >= self.counted else amount
        if delta <= 0:
            return
        if currency.upper() != USD:
            self.counted = amount
            await agent.store.agent_sessions.set_reported_cost(sid, amount)
            if currency not in self.currencies:
                self.currencies.add(currency)
                text = (
                    f"{agent.spec.name} reports its cost in {currency}: shown here, not counted toward the "
                    "USD budgets (set a token cap to bound it)"
                )
                agent.emit(ev.Notice(sid, text, "warning"))
            agent.emit(ev.Notice(sid, f"agent cost: {amount:.4f} {currency} for its session so far"))
            return
        await agent.store.agent_sessions.add_cost(
            sid, agent.record.turn_id, agent.session.model, delta, amount
        )
        self.counted = amount
        view = agent.session
        spend = (getattr(view, "spend", None) or Spend()) + Spend(usd=delta)
        agent.emit(ev.UsageUpdated(sid, view.usage, view.context_tokens, view.context_window, spend))

    # -- during a turn ---------------------------------------------------------------------------------
    def begin(self) -> asyncio.Future[Breach]:
        """A turn sends its prompt: watch the reported cost; the returned future gets the cap the
        agent's spend crossed during the turn (it never completes otherwise)."""
        crossed: asyncio.Future[Breach] = asyncio.get_running_loop().create_future()
        self._watch = asyncio.create_task(self._watching(crossed))
        return crossed

    async def end(self) -> None:
        """The turn ended: stop watching and count what the agent reported last."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watch
        await self.settle()

    async def _watching(self, crossed: asyncio.Future[Breach]) -> None:
        agent = self.agent
        while True:
            await self.changed.wait()
            await asyncio.shield(self.settle())  # a cancel at the turn's end never half-counts it
            meter = agent.budget
            if meter is None or not meter.active():
                continue
            breach = await meter.check(agent.session.model, 0)
            if breach is not None:
                if not crossed.done():
                    crossed.set_result(breach)
                return
