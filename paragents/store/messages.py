"""Messages of a session's conversations: append, load, and a provider-ready (repaired) history.

Order: by ``seq`` (position in the conversation) then ``id``. Every appended message gets the next
``seq``; a synthetic tool result added by a repair takes the ``seq`` of the message it follows,
so it sorts right after it even when it is written later.
"""

from __future__ import annotations

import json
import os
from typing import Any

import aiosqlite

from paragents.models import Message
from paragents.store.base import Repository, fetchall, now
from paragents.store.connection import pid_alive
from paragents.store.history import repair_history
from paragents.store.records.errors import HistoryChanged, StoreError
from paragents.store.records.sessions import StoredMessage
from paragents.store.repair import COLUMNS, repair_conversation, stored_message
from paragents.store.rows import to_json

_CURRENT = "(SELECT conversation_id FROM sessions WHERE id = ?)"


class MessagesRepo(Repository):
    """Messages of :class:`paragents.store.Store` (``store.messages``) and the history revision."""

    async def append(
        self,
        session_id: str,
        message: Message,
        *,
        turn_id: int | None = None,
        complete: bool = True,
        tokens: int | None = None,
        outcome: str | None = None,
        expect_revision: int | None = None,
    ) -> int:
        """Store one complete OpenAI-format message in the session's current conversation, committed
        before returning; return its id (ids grow in the order messages were appended).

        ``message`` is kept whole (content, tool_calls, tool_call_id, reasoning_content, name...).
        ``complete=False`` marks a partial reply kept after a failure (never sent back to the
        provider). ``tokens`` is its size in tokens when known. ``outcome`` is a tool result's outcome
        (ok, error, denied, cancelled, interrupted, skipped), shown when the transcript is restored.
        Each append bumps the session's revision by one; with ``expect_revision`` the message is
        written only when the revision is still that number, else :class:`HistoryChanged` is raised
        (another process wrote meanwhile: reload first). Raises StoreError when ``message`` has no
        ``role``, is not JSON-serialisable, holds an auth header/key, or the session is unknown."""
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or not message["role"]:
            raise StoreError("message: expected an OpenAI message dict with a 'role' such as 'user'")
        text = to_json(message, "message")
        role = message["role"]

        rowcount, rowid = await self._db.write_one(
            "INSERT INTO messages (session_id, conversation_id, turn_id, seq, role, message_json,"
            " complete, created_at, tokens, outcome) "
            "SELECT s.id, s.conversation_id, ?, COALESCE((SELECT MAX(m.seq) FROM messages m"
            " WHERE m.conversation_id = s.conversation_id), 0) + 1, ?, ?, ?, ?, ?, ? "
            "FROM sessions s WHERE s.id = ? AND (? IS NULL OR s.revision = ?)",
            (
                turn_id,
                role,
                text,
                int(bool(complete)),
                now(),
                tokens,
                outcome if role == "tool" else None,
                session_id,
                expect_revision,
                expect_revision,
            ),
        )
        if rowcount != 1 or rowid is None:
            row = await self._db.fetchone("SELECT revision FROM sessions WHERE id = ?", (session_id,))
            if row is not None and expect_revision is not None:
                raise HistoryChanged(session_id, expect_revision, int(row[0]))
            raise StoreError(f"no session with id {session_id!r} in {self.path}")
        return int(rowid)

    async def append_late_tool_result(
        self, session_id: str, message: Message, *, outcome: str, turn_id: int | None = None
    ) -> int | None:
        """Store a tool result that finished after another process wrote to the conversation: it
        goes right after its call (the call's ``seq``), so it is neither dropped as out of place nor
        replaced by an "interrupted" repair, and the other process's messages keep their order.
        Returns its id, or None when the call is not in the current conversation or already has a
        result (e.g. the other process marked it interrupted first)."""
        call_id = message.get("tool_call_id")
        text = to_json(message, "message")

        async def work(db: aiosqlite.Connection) -> int | None:
            rows = await fetchall(
                db,
                f"SELECT id, seq, role, message_json FROM messages WHERE conversation_id = {_CURRENT}"
                " AND complete = 1 ORDER BY seq, id",
                (session_id,),
            )
            anchor: int | None = None
            for row in rows:
                msg = json.loads(row[3])
                if row[2] == "assistant" and any(
                    isinstance(c, dict) and c.get("id") == call_id for c in msg.get("tool_calls") or []
                ):
                    anchor = int(row[1])
                elif row[2] == "tool" and anchor is not None and msg.get("tool_call_id") == call_id:
                    return None
            if anchor is None:
                return None
            cur = await db.execute(
                "INSERT INTO messages (session_id, conversation_id, turn_id, seq, role, message_json,"
                " complete, created_at, outcome) SELECT id, conversation_id, ?, ?, 'tool', ?, 1, ?, ?"
                " FROM sessions WHERE id = ?",
                (turn_id, anchor, text, now(), outcome, session_id),
            )
            return cur.lastrowid

        return await self._db.write(work)

    async def load(self, session_id: str, conversation_id: str | None = None) -> list[StoredMessage]:
        """Return every stored message of a conversation (default: the session's current one) in
        order, including incomplete replies and repair results, for display. Empty when unknown."""
        if conversation_id is None:
            rows = await self._db.fetchall(
                f"SELECT {COLUMNS} FROM messages WHERE conversation_id = {_CURRENT} ORDER BY seq, id",
                (session_id,),
            )
        else:
            rows = await self._db.fetchall(
                f"SELECT {COLUMNS} FROM messages WHERE session_id = ? AND conversation_id = ?"
                " ORDER BY seq, id",
                (session_id, conversation_id),
            )
        return [stored_message(r) for r in rows]

    async def load_after(self, session_id: str, after_id: int) -> list[StoredMessage]:
        """Return the messages of the session's current conversation stored after message id
        ``after_id`` (ids grow in append order), in conversation order, for display: what another
        process appended since a copy that has messages up to ``after_id`` was read. Only reads."""
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM messages WHERE conversation_id = {_CURRENT} AND id > ? ORDER BY seq, id",
            (session_id, after_id),
        )
        return [stored_message(r) for r in rows]

    async def load_history(self, session_id: str, stored: list[StoredMessage] | None = None) -> list[Message]:
        """Return the current conversation as OpenAI messages ready to send to the provider.

        Incomplete replies are left out; every assistant tool call has a tool result (a missing one
        is added as :data:`~paragents.store.history.INTERRUPTED_RESULT`, outcome ``interrupted``, and
        persisted, so the transcript shows it); no tool result comes without its call. Call it when no tool of
        this session is still running in this process (e.g. before each request of a turn), or the
        running calls would be marked interrupted. While a live *other* process has a running turn in
        this conversation the repair is returned but not persisted. Returns [] for an unknown session.
        ``stored``: the result of :meth:`load` for this session when the caller has it (saves
        reading the conversation twice)."""
        if stored is None:
            stored = await self.load(session_id)
        repaired = repair_history(stored)
        if not repaired.synthetic:
            return repaired.messages

        conversation = stored[0].conversation_id
        running = await self._db.fetchall(
            "SELECT pid FROM turns WHERE conversation_id = ? AND status = 'running'", (conversation,)
        )
        if any(r["pid"] != os.getpid() and pid_alive(r["pid"]) for r in running):
            return repaired.messages  # another live process is mid-turn here: its calls may still finish

        async def work(db: aiosqlite.Connection) -> list[Message]:
            return (await repair_conversation(db, conversation)).messages

        return await self._db.write(work)

    async def load_for_display_and_history(
        self, session_id: str
    ) -> tuple[list[StoredMessage], list[Message]]:
        """Return ``(load(session_id), load_history(session_id))`` reading the conversation
        once when it needs no repair (the common case: opening a session); after a repair the stored
        messages are read again so they include the persisted "interrupted" results."""
        stored = await self.load(session_id)
        repaired = repair_history(stored)
        if not repaired.synthetic:
            return stored, repaired.messages
        history = await self.load_history(session_id, stored)  # persists the repair
        return await self.load(session_id), history

    async def count(
        self, session_id: str, conversation_id: str | None = None, *, all_conversations: bool = False
    ) -> int:
        """Return how many messages are stored in the session's current conversation (or in
        ``conversation_id``, or in all its conversations with ``all_conversations=True``)."""
        params: tuple[Any, ...]
        if all_conversations:
            sql, params = "SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,)
        elif conversation_id is not None:
            sql = "SELECT COUNT(*) FROM messages WHERE session_id = ? AND conversation_id = ?"
            params = (session_id, conversation_id)
        else:
            sql, params = f"SELECT COUNT(*) FROM messages WHERE conversation_id = {_CURRENT}", (session_id,)
        row = await self._db.fetchone(sql, params)
        return int(row[0]) if row else 0

    async def revision(self, session_id: str) -> int:
        """Return the session's history revision (grows with each message, compaction or new
        conversation); 0 for an unknown session."""
        row = await self._db.fetchone("SELECT revision FROM sessions WHERE id = ?", (session_id,))
        return int(row[0]) if row else 0

    async def history_mark(self, session_id: str) -> tuple[int, int]:
        """Return ``(revision, newest message id)`` of the session in one read: what a copy of its
        history loaded now is up to date with ((0, 0) for an unknown session)."""
        row = await self._db.fetchone(
            "SELECT revision, (SELECT COALESCE(MAX(m.id), 0) FROM messages m WHERE m.session_id = s.id) "
            "FROM sessions s WHERE s.id = ?",
            (session_id,),
        )
        return (int(row[0]), int(row[1])) if row else (0, 0)
