"""The ``tool_rows`` table: how each tool call was shown while it ran (its one-line summary, as the
tool or the external agent wrote it, and whether it ran in the sandbox), so a restored transcript
shows the same row as the live one did.

A row is written when a call starts (and again when its summary changes: an ask that then runs, an
agent's new title), with ``after_message``, the session's newest message id then: a call id that a
server reuses in a later request is told apart by it (the row belongs to the occurrence of the id in
the newest assistant message at or before ``after_message``)."""

from __future__ import annotations

from paragents.store.base import StoreBase, now


class ToolRowsMixin(StoreBase):
    """Tool row methods of :class:`paragents.store.Store`."""

    async def add_tool_row(self, session_id: str, call_id: str, summary: str, sandboxed: bool | None) -> None:
        """Keep how call ``call_id`` of the session is shown now (see the module docstring)."""
        await self._write_one(
            "INSERT INTO tool_rows (session_id, call_id, after_message, summary, sandboxed, created_at) "
            "VALUES (?, ?, (SELECT COALESCE(MAX(id), 0) FROM messages WHERE session_id = ?), ?, ?, ?)",
            (session_id, call_id, session_id, summary, None if sandboxed is None else int(sandboxed), now()),
        )

    async def tool_rows(self, session_id: str) -> list[tuple[str, int, str, bool | None]]:
        """Return the session's rows as ``(call_id, after_message, summary, sandboxed)``, oldest first."""
        rows = await self._fetchall(
            "SELECT call_id, after_message, summary, sandboxed FROM tool_rows WHERE session_id = ? "
            "ORDER BY id",
            (session_id,),
        )
        return [(str(r[0]), int(r[1]), str(r[2]), None if r[3] is None else bool(r[3])) for r in rows]
