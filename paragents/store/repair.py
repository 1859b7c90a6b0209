"""The ``messages`` row as a :class:`StoredMessage`, and a conversation's history repaired inside a
write transaction: shared by the messages repository (``load_history``) and the turns repository
(``recover_interrupted``), so neither repository imports the other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import aiosqlite

from paragents.store.base import fetchall, now
from paragents.store.history import RepairedHistory, repair_history
from paragents.store.records.sessions import StoredMessage
from paragents.store.rows import to_json

COLUMNS = "id, role, message_json, complete, turn_id, created_at, conversation_id, tokens, outcome"
"""The ``messages`` columns :func:`stored_message` reads, in order (``SELECT {COLUMNS} FROM messages``)."""

_SELECT_CONVERSATION = f"SELECT {COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY seq, id"


def stored_message(row: Sequence[Any]) -> StoredMessage:
    """Read a ``messages`` row selected as :data:`COLUMNS`, by position: the one row shape not read
    through :func:`paragents.store.rows.from_row`, because it is the hot one (opening 20 sessions of
    500 messages reads 10,000 rows at startup)."""
    return StoredMessage(
        int(row[0]),
        row[1],
        json.loads(row[2]),
        bool(row[3]),
        row[4],
        float(row[5]),
        row[6],
        row[7],
        row[8],
    )


async def repair_conversation(db: aiosqlite.Connection, conversation_id: str) -> RepairedHistory:
    """Inside a write transaction: repair the conversation's history and persist the synthetic tool
    results it needed (see :func:`paragents.store.history.repair_history`); return the repair."""
    rows = await fetchall(db, _SELECT_CONVERSATION, (conversation_id,))
    repaired = repair_history([stored_message(r) for r in rows])
    stamp = now()
    for anchor, message in repaired.synthetic:
        await db.execute(
            "INSERT INTO messages (session_id, conversation_id, turn_id, seq, role, message_json, complete,"
            " created_at, outcome) SELECT session_id, conversation_id, turn_id, seq, 'tool', ?, 1, ?,"
            " 'interrupted' "
            "FROM messages WHERE id = ?",
            (to_json(message, "message"), stamp, anchor),
        )
    return repaired
