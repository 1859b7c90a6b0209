"""Memory and context commands of the Runtime: notes, /memory, /compact, /fork and cost.

A mixin of :class:`paragents.runtime.Runtime` (kept apart so the facade stays readable); it uses the
runtime's sessions, agents, scheduler, tools, notebook and config. Nothing here imports Textual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paragents.compaction import CompactionOutcome
from paragents.memory import MemoryReport, load_instructions
from paragents.session_view import SessionError

if TYPE_CHECKING:
    from paragents.runtime import SessionView


class MemoryCommands:
    """The runtime's memory/context commands (see the module docstring)."""

    # Provided by Runtime.
    agents: Any
    notebook: Any
    scheduler: Any
    sessions: Any
    tools: Any
    project_dir: Any
    config: Any

    def _view(self, sid: str) -> SessionView:  # pragma: no cover - Runtime overrides it
        raise NotImplementedError

    async def wait_loaded(self) -> None:  # pragma: no cover - Runtime overrides it
        raise NotImplementedError

    def _register_memory_tools(self) -> None:
        from paragents.tools.remember import Remember

        async def save(sid: str, text: str) -> str:
            view = self._view(sid)
            note = await self.notebook.add(sid, text, project=False, author=f"agent@{view.name}")
            return f"noted (session note {note.id}); it stays in your instructions"

        if "remember" not in self.tools:
            self.tools.register(Remember(save))

    async def compact(self, sid: str, focus: str | None = None) -> CompactionOutcome:
        """Compact the session's history with its own model (``focus`` steers the summary).

        While a turn runs, waits for its next safe point (no tool call in flight). Returns the
        outcome; a failure (``ok=False``, also shown as a Notice) leaves the history unchanged."""
        await self.wait_loaded()
        view = self._view(sid)
        if getattr(view, "read_only", None):
            raise SessionError(view.read_only)
        agent = self.agents[view.id]
        if self.scheduler.is_running(sid):
            return await agent.request_compaction(focus)
        return await agent.compact(focus)

    async def remember(self, sid: str, text: str, project: bool = False) -> Any:
        """Store a note written by the user: for this session, or for every session of the project
        (``project``). Returns the store's ``NoteRecord``; raises ValueError for empty text."""
        view = self._view(sid)
        note = await self.notebook.add(sid, text, project=project, author=f"user@{view.name}")
        if project:
            for other in self.sessions:
                await self.notebook.refresh(other)
        return note

    async def memory(self, sid: str) -> MemoryReport:
        """Return what the session's agent has in memory: instruction files (with paths), session
        and project notes (with author and time), and the compaction in force."""
        await self.wait_loaded()
        view = self._view(sid)
        await self.notebook.refresh(sid)
        state = self.agents[sid].compaction
        return MemoryReport(
            instructions=load_instructions(self.project_dir, view.workdir),
            session_notes=self.notebook.session_notes(sid),
            project_notes=self.notebook.project_notes(sid),
            compaction=f"{state.covered} messages summarised in requests" if state else None,
        )

    async def fork(self, sid: str, name: str | None = None) -> SessionView:
        """Start a new session with a copy of this one's history (and compaction, and session notes);
        return its view. Raises SessionError for a bad or taken name."""
        from paragents.memory import fork_session

        await self.wait_loaded()
        return await fork_session(self, self._view(sid), name)  # type: ignore[arg-type]

    def session_cost(self, sid: str) -> float | None:
        """Return the session's cost in USD from its usage and its model's prices, or None (no prices)."""
        from paragents.tokens import cost_usd

        view = self._view(sid)
        settings = self.config.model_settings(view.model)
        return cost_usd(view.usage, settings.input_price_per_mtok, settings.output_price_per_mtok)
