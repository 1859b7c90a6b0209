"""The parts every session's agent holds, built in one place (:meth:`AgentParts.build`): the record of
its turns (:class:`~paragents.agent.turn.TurnRecord`) and its tool calls
(:class:`~paragents.agent.calls.ToolCalls`), wired to the same session, store tables, config and event
sink. paragents' own :class:`~paragents.agent.loop.Agent` and an external ACP agent
(``paragents.acp.agent.AcpAgent``) both hold the result. :class:`AgentStore` names the store's tables
an agent touches. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paragents import events as ev
from paragents.agent.approval import ApprovalStore
from paragents.agent.calls import Preflight, ToolCalls
from paragents.agent.compacting import CompactorStore
from paragents.agent.session import SessionReader
from paragents.agent.turn import TurnRecord, TurnStore
from paragents.models import Message

if TYPE_CHECKING:
    from paragents.agent.budget import BudgetMeter
    from paragents.config import RuntimeConfig
    from paragents.mcp import SessionMcp
    from paragents.permissions import Policy
    from paragents.tools.execution import Execution
    from paragents.tools.registry import ToolRegistry


class AgentStore(TurnStore, CompactorStore, ApprovalStore, Protocol):
    """The store's tables a session's agent uses (``paragents.store.Store`` is one): its record's
    (``messages``, ``turns``, ``compactions``), its compaction's (and ``sessions``: the context size)
    and its asks' (``approvals``, ``audit``, and ``sessions``: the session's rules)."""


@dataclass(frozen=True, slots=True)
class AgentParts:
    """The record of a session's turns (``record``) and its tool calls (``calls``), wired together;
    build with :meth:`build`."""

    record: TurnRecord
    calls: ToolCalls

    @classmethod
    def build(
        cls,
        *,
        session: SessionReader,
        tools: ToolRegistry,
        policy: Policy,
        store: AgentStore,
        config: RuntimeConfig,
        emit: ev.EventSink,
        history: list[Message] | None = None,
        budget: BudgetMeter | None = None,
        preflight: Preflight | None = None,
        on_read: Callable[[Path, str], None] | None = None,
        on_write: Callable[[Path, str], None] | None = None,
        mcp: SessionMcp | None = None,
        execution: Callable[[], Execution | None] | None = None,
    ) -> AgentParts:
        """The parts of one session's agent: ``session`` (read only), its ``tools`` and ``policy``,
        the ``store``'s tables, the runtime ``config``, the event sink; ``history`` the conversation
        so far, ``budget`` its meter (None: no budgets); ``preflight`` (the conflict checker),
        ``on_read``/``on_write`` (the stale-read hooks), ``mcp`` (its MCP tools) and ``execution``
        (where its calls run when not here) as :class:`~paragents.agent.calls.ToolCalls` takes them."""
        record = TurnRecord(
            session=session, store=store, config=config, emit=emit, budget=budget, history=history
        )
        calls = ToolCalls(
            session=session,
            tools=tools,
            policy=policy,
            store=store,
            config=config,
            emit=emit,
            preflight=preflight,
            on_read=on_read,
            on_write=on_write,
            mcp=mcp,
            execution=execution,
        )
        return cls(record, calls)

    def reconfigure(self, config: RuntimeConfig) -> None:
        """Use ``config`` from now on in both parts (the runtime config was reloaded)."""
        self.record.config = self.calls.config = config
