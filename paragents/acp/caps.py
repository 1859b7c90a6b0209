"""An external agent's turn at the budget caps: held before its prompt is sent while a cap is reached
(the same bar and answers as paragents' own agent), and stopped (``session/cancel``) when the cost
the agent reports during the turn crosses one (paragents.acp.spending). Nothing here imports Textual."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from acp.schema import PromptResponse

from paragents import events as ev
from paragents.acp.link import CANCEL_WAIT, AgentLink
from paragents.acp.spending import AgentSpending
from paragents.agent.tokens import estimate_text_tokens
from paragents.agent.turn import BUDGET_KIND, CANCELLED_RESULT, TurnRecord
from paragents.models import TurnResult, TurnStatus

if TYPE_CHECKING:
    from paragents.agent.budget import Breach, BudgetMeter
    from paragents.agent.session import SessionReader


class _Turn(Protocol):
    """What the caps use of the :class:`~paragents.acp.agent.AcpAgent` running the turn."""

    session: SessionReader
    budget: BudgetMeter | None
    spending: AgentSpending
    record: TurnRecord
    link: AgentLink

    def emit(self, event: ev.Event) -> None: ...
    async def persist(self, outcome: str = "error", note: str = "") -> None: ...
    async def count_usage(self, response: PromptResponse) -> None: ...


async def hold_at_budget(agent: _Turn, prompt: str) -> Breach | None:
    """Before ``prompt`` is sent: while a budget cap is reached, pause (the same bar and answers as
    paragents' own agent). Return the breach when the user chose to stop, else None."""
    meter = agent.budget
    if meter is None:
        return None
    await agent.spending.settle()  # what the agent reported since its last turn
    while meter.active():
        breach = await meter.check(agent.session.model, estimate_text_tokens(prompt))
        if breach is None:
            return None
        answer = await agent.record.pause(breach)
        if answer == "stop":
            return breach
        if answer == "one_more":
            return None
    return None


async def stop_at_cap(
    agent: _Turn, breach: Breach, prompt_task: asyncio.Future[PromptResponse]
) -> TurnResult:
    """The agent's reported spend crossed a cap during the turn: ``session/cancel``, keep what it did,
    end the turn (``error_kind`` "budget") saying which cap."""
    agent.link.client.cancel_all()
    await agent.link.send_cancel()
    response: PromptResponse | None = None
    try:
        response = await asyncio.wait_for(asyncio.shield(prompt_task), CANCEL_WAIT)
    except (TimeoutError, Exception):
        prompt_task.cancel()
    await agent.persist("cancelled", CANCELLED_RESULT)
    await agent.spending.end()
    if response is not None:
        await agent.count_usage(response)
    text = f"stopped: {breach.reason}; the agent's turn was cancelled (session/cancel)"
    agent.emit(ev.Notice(agent.session.id, text, "error"))
    return await agent.record.finish(TurnStatus.FAILED, text, BUDGET_KIND)
