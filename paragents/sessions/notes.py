"""Memory notes of a project (:class:`NoteBook`) and the /memory report (:class:`MemoryReport`).

Session notes belong to one session; project notes are a decision log shared by every session of
the project. Nothing here imports Textual."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paragents.agent.context import InstructionFile

if TYPE_CHECKING:
    from paragents.store.notes import NotesRepo
    from paragents.store.records import NoteRecord


def note_line(note: NoteRecord) -> str:
    """Return one note as shown to the model and in /memory: ``text (author, YYYY-MM-DD HH:MM)``."""
    when = dt.datetime.fromtimestamp(note.created_at).strftime("%Y-%m-%d %H:%M")
    return f"{note.text} ({note.author}, {when})"


class NoteBook:
    """The memory notes of one project, cached per session for the (synchronous) system prompt.

    Session notes belong to one session; project notes (``session_id`` None in the store) are shared
    by every session of the project. Takes the store's notes and the project directory."""

    def __init__(self, notes: NotesRepo, project_dir: Path) -> None:
        self.notes = notes
        self.project_dir = project_dir
        self._cache: dict[str, list[NoteRecord]] = {}

    async def refresh(self, session_id: str) -> list[NoteRecord]:
        """Re-read the notes that apply to ``session_id`` (its own and the project's); return them."""
        notes = await self.notes.all(self.project_dir, session_id)
        self._cache[session_id] = notes
        return notes

    def session_notes(self, session_id: str) -> list[NoteRecord]:
        """Return the cached notes of ``session_id`` only (oldest first)."""
        return [n for n in self._cache.get(session_id, []) if n.session_id == session_id]

    def project_notes(self, session_id: str) -> list[NoteRecord]:
        """Return the cached project-wide notes as seen by ``session_id`` (oldest first)."""
        return [n for n in self._cache.get(session_id, []) if n.session_id is None]

    async def add(self, session_id: str, text: str, *, project: bool, author: str) -> NoteRecord:
        """Store a note (project-wide when ``project``), refresh the cache, return the new note.

        Raises ValueError for empty text (the store's refusal, reworded)."""
        text = text.strip()
        if not text:
            raise ValueError("a note needs some text: /remember [--project] TEXT")
        note_id = await self.notes.add(
            self.project_dir, text, session_id=None if project else session_id, author=author
        )
        notes = await self.refresh(session_id)
        return next(n for n in notes if n.id == note_id)


@dataclass(frozen=True, slots=True)
class MemoryReport:
    """What a session's agent has in memory, for /memory: the instruction files loaded (with their
    paths), the session's notes, the project's notes, and the compaction in force (a readable line,
    or None)."""

    instructions: list[InstructionFile]
    session_notes: list[NoteRecord]
    project_notes: list[NoteRecord]
    compaction: str | None
    mcp_tokens: dict[str, int] = field(default_factory=dict)
    """Estimated tokens the MCP tool schemas add to every request, by server (counted in context %)."""

    def rows(self) -> list[tuple[str, str, str]]:
        """Return ``(kind, where / who, text)`` rows for a table."""
        rows: list[tuple[str, str, str]] = []
        for inst in self.instructions:
            first = inst.text.strip().splitlines()[0] if inst.text.strip() else "(empty)"
            rows.append(("instructions", str(inst.path), f"{len(inst.text)} chars: {first}"))
        for kind, notes in (("session note", self.session_notes), ("project note", self.project_notes)):
            for note in notes:
                when = dt.datetime.fromtimestamp(note.created_at).strftime("%Y-%m-%d %H:%M")
                rows.append((kind, f"{note.author}, {when}", note.text))
        if self.compaction:
            rows.append(("compaction", "store", self.compaction))
        for server, tokens in sorted(self.mcp_tokens.items()):
            rows.append(("mcp tools", server, f"~{tokens} tokens of tool schemas in every request (/mcp)"))
        if not rows:
            rows.append(("(nothing)", "", "no AGENTS.md/CLAUDE.md found, no notes, no compaction"))
        return rows
