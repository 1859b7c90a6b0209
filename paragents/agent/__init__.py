"""The agent: one per session, running its turns (:mod:`.loop`), asking approval for tool calls
(:mod:`.approval`), compacting its history (:mod:`.compaction`) and building its context
(:mod:`.context`, :mod:`.tokens`). Nothing here imports Textual or ``paragents.sessions``."""

from paragents.agent.loop import STORE_KIND, Agent, Preflight
from paragents.agent.session import SessionReader
from paragents.models import TurnResult

__all__ = ["STORE_KIND", "Agent", "Preflight", "SessionReader", "TurnResult"]
