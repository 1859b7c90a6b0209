"""The memory facet of the session layer (:class:`Memory`): notes (/remember and the ``remember``
tool), /memory, /compact, and the project's decisions every session sees (/decide, /decisions).
Nothing here imports Textual."""

from __future__ import annotations

from typing import Protocol

from paragents.agent.compaction import CompactionOutcome
from paragents.agent.context import load_instructions
from paragents.sessions.core import SessionsCore
from paragents.sessions.mcp import mcp_tokens
from paragents.sessions.notes import MemoryReport
from paragents.store import DecisionRecord, NoteRecord
from paragents.tools.remember import Remember


class Memory(Protocol):
    """What a session remembers, as clients use it (``runtime.memory``)."""

    async def compact(self, sid: str, focus: str | None = None) -> CompactionOutcome: ...
    async def remember(self, sid: str, text: str, project: bool = False) -> NoteRecord: ...
    async def memory(self, sid: str) -> MemoryReport: ...
    async def decide(self, sid: str, text: str) -> DecisionRecord: ...
    async def decisions(self, search: str | None = None) -> list[DecisionRecord]: ...


class MemoryCommands:
    """The :class:`Memory` facet of the sessions of one project (see the module docstring)."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core
        self._register_tools()

    def _register_tools(self) -> None:
        core = self.core

        async def save(sid: str, text: str) -> str:
            view = core.view(sid)
            note = await core.notebook.add(sid, text, project=False, author=f"agent@{view.name}")
            return f"noted (session note {note.id}); it stays in your instructions"

        if "remember" not in core.tools:
            core.tools.register(Remember(save))

    async def compact(self, sid: str, focus: str | None = None) -> CompactionOutcome:
        """Compact the session's history with its own model (``focus`` steers the summary).

        While a turn runs, waits for its next safe point (no tool call in flight). Returns the
        outcome; a failure (``ok=False``, also shown as a Notice) leaves the history unchanged."""
        core = self.core
        await core.loaded_event.wait()
        view = core.writable(sid)
        agent = core.agents[view.id]
        if core.scheduler.is_running(sid):
            return await agent.compactions.request(focus)
        return await agent.compact(focus)

    async def remember(self, sid: str, text: str, project: bool = False) -> NoteRecord:
        """Store a note written by the user: for this session, or for every session of the project
        (``project``). Returns the store's ``NoteRecord``; raises ValueError for empty text."""
        core = self.core
        view = core.view(sid) if project else core.writable(sid)  # a project note is no session's
        note = await core.notebook.add(sid, text, project=project, author=f"user@{view.name}")
        if project:
            for other in core.sessions:
                await core.notebook.refresh(other)
        return note

    async def memory(self, sid: str) -> MemoryReport:
        """Return what the session's agent has in memory: instruction files (with paths), session
        and project notes (with author and time), and the compaction in force."""
        core = self.core
        await core.loaded_event.wait()
        view = core.view(sid)
        await core.notebook.refresh(sid)
        state = core.agents[sid].record.compaction
        return MemoryReport(
            instructions=load_instructions(core.project_dir, view.workdir),
            session_notes=core.notebook.session_notes(sid),
            project_notes=core.notebook.project_notes(sid),
            compaction=f"{state.covered} messages summarised in requests" if state else None,
            mcp_tokens=mcp_tokens(core, sid),
        )

    async def decide(self, sid: str, text: str) -> DecisionRecord:
        """``/decide TEXT``: record a project-wide decision every session sees in its system prompt."""
        return await self.core.team.decide(text, f"user@{self.core.view(sid).name}")

    async def decisions(self, search: str | None = None) -> list[DecisionRecord]:
        """``/decisions [search]``: the project's decisions, oldest first."""
        return await self.core.team.decisions(search)
