"""Compaction records: the summary that stands for the older part of a conversation in requests.

The messages themselves are never changed: a record says "in requests, every message of this
conversation up to and including ``upto_message_id`` (a ``messages.id``) is replaced by
``summary``". The newest record of the session's current conversation is the one in force.
"""

from __future__ import annotations

from paragents.store.base import Repository, now
from paragents.store.records.errors import HistoryChanged, StoreError
from paragents.store.records.sessions import CompactionRecord
from paragents.store.rows import from_row


class CompactionsRepo(Repository):
    """Compactions, of :class:`paragents.store.Store` (``store.compactions``)."""

    async def add(
        self, session_id: str, upto_message_id: int, summary: str, *, expect_revision: int | None = None
    ) -> int:
        """Record a compaction of the session's current conversation up to ``upto_message_id``;
        return its id (the session's revision grows by one). With ``expect_revision`` it is recorded
        only while the revision is still that number, else :class:`HistoryChanged` is raised. Raises
        StoreError for an empty summary, an unknown session, or a message id that is not in that
        conversation."""
        if not summary.strip():
            raise StoreError("summary: a compaction needs a non-empty summary")
        rowcount, rowid = await self._db.write_one(
            "INSERT INTO compactions (session_id, conversation_id, upto_message_id, summary, created_at) "
            "SELECT s.id, s.conversation_id, m.id, ?, ? FROM sessions s "
            "JOIN messages m ON m.id = ? AND m.conversation_id = s.conversation_id WHERE s.id = ?"
            " AND (? IS NULL OR s.revision = ?)",
            (summary, now(), int(upto_message_id), session_id, expect_revision, expect_revision),
        )
        if rowcount != 1 or rowid is None:
            if expect_revision is not None:
                row = await self._db.fetchone("SELECT revision FROM sessions WHERE id = ?", (session_id,))
                if row is not None and int(row[0]) != expect_revision:
                    raise HistoryChanged(session_id, expect_revision, int(row[0]))
            raise StoreError(
                f"no message {upto_message_id} in the current conversation of session {session_id!r}"
            )
        return int(rowid)

    async def latest(self, session_id: str) -> CompactionRecord | None:
        """Return the newest compaction of the session's current conversation, or None."""
        row = await self._db.fetchone(
            "SELECT c.* FROM compactions c JOIN sessions s ON s.conversation_id = c.conversation_id "
            "WHERE s.id = ? ORDER BY c.id DESC LIMIT 1",
            (session_id,),
        )
        return from_row(CompactionRecord, row) if row is not None else None

    async def all(self, session_id: str) -> list[CompactionRecord]:
        """Return every compaction of the session (all conversations), oldest first."""
        rows = await self._db.fetchall(
            "SELECT * FROM compactions WHERE session_id = ? ORDER BY id", (session_id,)
        )
        return [from_row(CompactionRecord, r) for r in rows]
