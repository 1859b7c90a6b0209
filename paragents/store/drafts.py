"""The ``drafts`` table: what was typed in a session but not sent yet, kept across quits and crashes.

Two parts per session: ``text``, the prompt box's draft (saved by the TUI while typing and at quit),
and ``queued``, the prompts waiting in the session's queue (saved whenever the queue changes). A
restart puts both back into the prompt box (``paragents.sessions.drafts``)."""

from __future__ import annotations

import json

from paragents.store.base import Repository, now


class DraftsRepo(Repository):
    """Unsent drafts and queued prompts, of :class:`paragents.store.Store` (``store.drafts``)."""

    async def save(self, session_id: str, text: str) -> None:
        """Keep ``text`` as the session's unsent draft ("" forgets it)."""
        await self._db.write_one(
            "INSERT INTO drafts (session_id, text, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
            (session_id, text, now()),
        )

    async def save_queued(self, session_id: str, prompts: list[str]) -> None:
        """Keep ``prompts`` (oldest first) as the session's prompts queued but not started."""
        await self._db.write_one(
            "INSERT INTO drafts (session_id, queued, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET queued = excluded.queued, "
            "updated_at = excluded.updated_at",
            (session_id, json.dumps(prompts, ensure_ascii=False), now()),
        )

    async def get(self, session_id: str) -> tuple[str, list[str]]:
        """Return ``(draft text, queued prompts)`` of a session ("" and [] when nothing was kept)."""
        row = await self._db.fetchone("SELECT text, queued FROM drafts WHERE session_id = ?", (session_id,))
        if row is None:
            return "", []
        try:
            queued = json.loads(row["queued"] or "[]")
        except ValueError:
            queued = []
        return str(row["text"] or ""), [str(q) for q in queued if isinstance(q, str) and q]
