"""The ``notes`` table: memory notes of a project or of one of its sessions."""

from __future__ import annotations

from pathlib import Path

import aiosqlite

from paragents.paths import norm_dir
from paragents.store.base import Repository, now
from paragents.store.records.errors import StoreError
from paragents.store.records.sessions import NoteRecord
from paragents.store.rows import from_row


class NotesRepo(Repository):
    """Memory notes, of :class:`paragents.store.Store` (``store.notes``)."""

    async def add(self, project_dir: Path, text: str, *, session_id: str | None = None, author: str) -> int:
        """Store a memory note for the project (``session_id`` None) or one of its sessions; return its
        id. ``author`` says who wrote it ("user", "agent", a session name...). Raises StoreError for
        empty text."""
        if not text.strip():
            raise StoreError("text: a note cannot be empty")
        return await self._db.insert(
            "INSERT INTO notes (project_dir, session_id, text, author, created_at) VALUES (?, ?, ?, ?, ?)",
            (norm_dir(project_dir), session_id, text, author, now()),
            session_id,
        )

    async def all(self, project_dir: Path, session_id: str | None = None) -> list[NoteRecord]:
        """Return the project's notes, oldest first: the project-wide ones, plus those of
        ``session_id`` when given."""
        rows = await self._db.fetchall(
            "SELECT * FROM notes WHERE project_dir = ? AND (session_id IS NULL OR session_id = ?) "
            "ORDER BY id",
            (norm_dir(project_dir), session_id),
        )
        return [from_row(NoteRecord, r, project_dir=Path(r["project_dir"])) for r in rows]

    async def delete(self, note_id: int) -> bool:
        """Delete a note; return True when it existed."""

        async def work(db: aiosqlite.Connection) -> bool:
            cur = await db.execute("DELETE FROM notes WHERE id = ?", (note_id,))
            return cur.rowcount > 0

        return await self._db.write(work)
