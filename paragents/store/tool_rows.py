"""The ``tool_rows`` table: how each tool call was shown while it ran (its one-line summary, as the
tool or the external agent wrote it, and whether it ran in the sandbox), so a restored transcript
shows the same row as the live one did.

A row is written when a call starts (and again when its summary changes: an ask that then runs, an
agent's new title), with ``after_message``, the session's newest message id then: a call id that a
server reuses in a later request is told apart by it (the row belongs to the occurrence of the id in
the newest assistant message at or before ``after_message``). An external agent's turn is stored when
it ends, after its rows: such a row is written with ``later`` set and belongs to the oldest occurrence
of its call id after ``after_message`` (agents reuse ids across turns too)."""

from __future__ import annotations

from typing import NamedTuple

from paragents.store.base import StoreBase, now


class KeptRow(NamedTuple):
    """One kept row: call ``call_id`` shown as ``summary`` (``sandboxed``: its sandbox tag, None for
    none) when the session's newest message was ``after_message``; ``later``: the message announcing
    the call was stored after it."""

    call_id: str
    after_message: int
    summary: str
    sandboxed: bool | None
    later: bool = False


class ToolRowsMixin(StoreBase):
    """Tool row methods of :class:`paragents.store.Store`."""

    async def add_tool_row(
        self, session_id: str, call_id: str, summary: str, sandboxed: bool | None, later: bool = False
    ) -> None:
        """Keep how call ``call_id`` of the session is shown now (see the module docstring)."""
        await self._write_one(
            "INSERT INTO tool_rows (session_id, call_id, after_message, summary, sandboxed, later, "
            "created_at) VALUES (?, ?, (SELECT COALESCE(MAX(id), 0) FROM messages WHERE session_id = ?), "
            "?, ?, ?, ?)",
            (
                session_id, call_id, session_id, summary,
                None if sandboxed is None else int(sandboxed), int(later), now(),
            ),
        )  # fmt: skip

    async def tool_rows(self, session_id: str) -> list[KeptRow]:
        """Return the session's rows, oldest first."""
        rows = await self._fetchall(
            "SELECT call_id, after_message, summary, sandboxed, later FROM tool_rows WHERE session_id = ? "
            "ORDER BY id",
            (session_id,),
        )
        return [
            KeptRow(str(r[0]), int(r[1]), str(r[2]), None if r[3] is None else bool(r[3]), bool(r[4]))
            for r in rows
        ]
