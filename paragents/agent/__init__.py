"""The agent: one per session. Its parts: the record of its turns (:mod:`.turn`), its tool calls
(:mod:`.calls`, asking approval through :mod:`.approval`), its compaction (:mod:`.compacting` over
the pure :mod:`.compaction`), built together by :mod:`.parts`; paragents' own agent runs the loop
between them (:mod:`.loop`); an external ACP agent (``paragents.acp``) holds the same parts. Each
part names the store's tables it uses in a small protocol (:class:`~paragents.agent.parts.AgentStore`
gathers them); nothing here imports the Store itself. The session layer sees either through
:class:`~paragents.agent.protocol.SessionAgent`; the agent sees its session through
:class:`~paragents.agent.session.SessionReader`. Nothing here imports Textual or ``paragents.sessions``."""

from paragents.agent.calls import Preflight, ToolCalls
from paragents.agent.loop import Agent
from paragents.agent.protocol import SessionAgent
from paragents.agent.session import SessionReader
from paragents.agent.turn import STORE_KIND, TurnRecord
from paragents.models import TurnResult

__all__ = [
    "STORE_KIND",
    "Agent",
    "Preflight",
    "SessionAgent",
    "SessionReader",
    "ToolCalls",
    "TurnRecord",
    "TurnResult",
]
