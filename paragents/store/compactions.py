"""Compaction records: the summary that stands for the older part of a conversation in requests.

The messages themselves are never changed: a record says "in requests, every message of this
conversation up to and including ``upto_message_id`` (a ``messages.id``) is replaced by
``summary``". The newest record of the session's current conversation is the one in force.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from paragents.store.base import StoreBase, now
from paragents.store.records import HistoryChanged, StoreError


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """One row of ``compactions``: ``upto_message_id`` is the last stored message the ``summary``
    covers; ``created_at`` is in unix seconds."""

    id: int
    session_id: str
    conversation_id: str
    upto_message_id: int
    summary: str
    created_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> CompactionRecord:
        """Build from a ``SELECT * FROM compactions`` row."""
        return cls(**{k: row[k] for k in row.keys()})  # noqa: SIM118 (sqlite3.Row is not a Mapping)


class CompactionsMixin(StoreBase):
    """Compaction methods of :class:`paragents.store.Store`."""

    async def add_compaction(
        self, session_id: str, upto_message_id: int, summary: str, *, expect_revision: int | None = None
    ) -> int:
        """Record a compaction of the session's current conversation up to ``upto_message_id``;
        return its id (the session's revision grows by one). With ``expect_revision`` it is recorded
        only while the revision is still that number, else :class:`HistoryChanged` is raised. Raises
        StoreError for an empty summary, an unknown session, or a message id that is not in that
        conversation."""
        if not summary.strip():
            raise StoreError("summary: a compaction needs a non-empty summary")
        rowcount, rowid = await self._write_one(
            "INSERT INTO compactions (session_id, conversation_id, upto_message_id, summary, created_at) "
            "SELECT s.id, s.conversation_id, m.id, ?, ? FROM sessions s "
            "JOIN messages m ON m.id = ? AND m.conversation_id = s.conversation_id WHERE s.id = ?"
            " AND (? IS NULL OR s.revision = ?)",
            (summary, now(), int(upto_message_id), session_id, expect_revision, expect_revision),
        )
        if rowcount != 1 or rowid is None:
            if expect_revision is not None:
                row = await self._fetchone("SELECT revision FROM sessions WHERE id = ?", (session_id,))
                if row is not None and int(row[0]) != expect_revision:
                    raise HistoryChanged(session_id, expect_revision, int(row[0]))
            raise StoreError(
                f"no message {upto_message_id} in the current conversation of session {session_id!r}"
            )
        return int(rowid)

    async def latest_compaction(self, session_id: str) -> CompactionRecord | None:
        """Return the newest compaction of the session's current conversation, or None."""
        row = await self._fetchone(
            "SELECT c.* FROM compactions c JOIN sessions s ON s.conversation_id = c.conversation_id "
            "WHERE s.id = ? ORDER BY c.id DESC LIMIT 1",
            (session_id,),
        )
        return CompactionRecord.from_row(row) if row is not None else None

    async def list_compactions(self, session_id: str) -> list[CompactionRecord]:
        """Return every compaction of the session (all conversations), oldest first."""
        rows = await self._fetchall(
            "SELECT * FROM compactions WHERE session_id = ? ORDER BY id", (session_id,)
        )
        return [CompactionRecord.from_row(r) for r in rows]
