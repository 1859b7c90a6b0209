"""The ``decisions`` and ``session_messages`` tables: project-wide decisions (``/decide``) that every
session of the project sees in its system prompt, and notes one session sends another
(``message_session``), delivered as context at the receiver's next turn."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite

from paragents.paths import norm_dir
from paragents.store.base import Repository, now
from paragents.store.records.decisions import DecisionRecord, SessionMessageRecord
from paragents.store.records.errors import StoreError
from paragents.store.rows import from_row


def _decision(row: sqlite3.Row) -> DecisionRecord:
    return from_row(DecisionRecord, row, project_dir=Path(row["project_dir"]))


class DecisionsRepo(Repository):
    """Project decisions and notes between sessions, of :class:`paragents.store.Store`
    (``store.decisions``)."""

    async def add(self, project_dir: Path, text: str, *, author: str) -> int:
        """Record a project-wide decision; return its id. Raises StoreError for empty text."""
        if not text.strip():
            raise StoreError("text: a decision cannot be empty")
        return await self._db.insert(
            "INSERT INTO decisions (project_dir, text, author, created_at) VALUES (?, ?, ?, ?)",
            (norm_dir(project_dir), text.strip(), author, now()),
            None,
        )

    async def all(self, project_dir: Path, search: str | None = None) -> list[DecisionRecord]:
        """Return the project's decisions, oldest first; ``search`` keeps those whose text or author
        contains it (case-insensitive)."""
        sql = "SELECT * FROM decisions WHERE project_dir = ?"
        params: list[object] = [norm_dir(project_dir)]
        if search:
            sql += " AND (instr(lower(text), lower(?)) > 0 OR instr(lower(author), lower(?)) > 0)"
            params += [search, search]
        rows = await self._db.fetchall(sql + " ORDER BY id", params)
        return [_decision(r) for r in rows]

    async def add_session_message(self, project_dir: Path, to_session: str, from_name: str, text: str) -> int:
        """Store a note for session ``to_session`` from the session named ``from_name``; return its id.
        Raises StoreError for empty text or an unknown session."""
        if not text.strip():
            raise StoreError("text: a note cannot be empty")
        return await self._db.insert(
            "INSERT INTO session_messages (project_dir, to_session, from_name, text, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (norm_dir(project_dir), to_session, from_name, text.strip(), now()),
            to_session,
        )

    async def take_session_messages(self, to_session: str) -> list[SessionMessageRecord]:
        """Mark the notes waiting for ``to_session`` delivered and return them, oldest first (each is
        delivered once, even when two processes ask at the same moment)."""

        async def work(db: aiosqlite.Connection) -> list[SessionMessageRecord]:
            when = now()
            cur = await db.execute(
                "UPDATE session_messages SET delivered_at = ? WHERE to_session = ? AND delivered_at IS NULL "
                "RETURNING *",
                (when, to_session),
            )
            rows = list(await cur.fetchall())
            return sorted((from_row(SessionMessageRecord, r) for r in rows), key=lambda m: m.id)

        return await self._db.write(work)

    async def list_session_messages(self, to_session: str) -> list[SessionMessageRecord]:
        """Return every note sent to ``to_session`` (delivered or not), oldest first."""
        rows = await self._db.fetchall(
            "SELECT * FROM session_messages WHERE to_session = ? ORDER BY id", (to_session,)
        )
        return [from_row(SessionMessageRecord, r) for r in rows]
