"""What the session layer uses of a session's agent: :class:`SessionAgent`.

Two agents implement it, both holding the same parts (a :class:`~paragents.agent.turn.TurnRecord`,
:class:`~paragents.agent.calls.ToolCalls`, a :class:`~paragents.agent.compacting.CompactionQueue`)
and neither inheriting from the other: paragents' own :class:`~paragents.agent.loop.Agent` and an
external ACP agent (``paragents.acp.agent.AcpAgent``). The members are the ones ``paragents.sessions``
calls (measured: the scheduler's turn, restore and reload, ``/clear``, ``/fork``, ``/compact``,
``/memory``, ``/sandbox``, ``/mcp``, takeover, crash recovery). Nothing here imports Textual."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    from paragents.agent.calls import ToolCalls
    from paragents.agent.compacting import CompactionQueue
    from paragents.agent.compaction import CompactionOutcome
    from paragents.agent.turn import TurnRecord
    from paragents.config import RuntimeConfig
    from paragents.llm import ChatClient
    from paragents.models import TurnResult
    from paragents.store.records import ApprovalRecord


class SessionAgent(Protocol):
    """A session's agent as the session layer sees it.

    - ``record``: the conversation copy and the running turn (history, compaction in force, store
      revision, ``turn_id``; ``sync``, ``mark_current``; ``fail_internal``, ``fail_on_store``).
    - ``calls``: its tool calls (the sandbox ``/sandbox`` shows, the session's MCP tools).
    - ``compactions``: ``/compact`` asked while a turn runs, run at its next safe point.
    - ``before_turn`` (may raise ``PromptHeld``), ``run_turn`` (never raises but CancelledError).
    - ``compact``: now, between turns; ``reconfigure``: the reloaded config and client.
    - ``RESUMES_ASKS``: whether an ask a crash left pending is asked again in a new turn.
    """

    RESUMES_ASKS: ClassVar[bool]

    @property
    def record(self) -> TurnRecord: ...
    @property
    def calls(self) -> ToolCalls: ...
    @property
    def compactions(self) -> CompactionQueue: ...

    async def before_turn(self, prompt: str) -> None: ...
    async def run_turn(self, prompt: str, resume: ApprovalRecord | None = None) -> TurnResult: ...
    async def compact(self, focus: str | None = None, *, auto: bool = False) -> CompactionOutcome: ...
    def reconfigure(self, client: ChatClient, config: RuntimeConfig) -> None: ...
