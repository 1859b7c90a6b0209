"""The ``events`` table: things that happened to a session (a conflict...), as JSON."""

from __future__ import annotations

from typing import Any

from paragents.store.base import Repository, now
from paragents.store.rows import json_dicts, to_json


class SessionEventsRepo(Repository):
    """Session events, of :class:`paragents.store.Store` (``store.events``)."""

    async def record(self, session_id: str, kind: str, data: dict[str, Any]) -> int:
        """Record a session event (``kind`` e.g. "conflict", ``data`` a JSON-able dict); return its id.
        Raises StoreError for data that is not JSON-able or an unknown session."""
        return await self._db.insert(
            "INSERT INTO events (session_id, kind, data_json, created_at) VALUES (?, ?, ?, ?)",
            (session_id, kind, to_json(data, "data"), now()),
            session_id,
        )

    async def all(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """Return the session's events (of ``kind`` when given), oldest first, as dicts with keys
        id, session_id, kind, data (dict), created_at."""
        sql = "SELECT * FROM events WHERE session_id = ?"
        params: tuple[Any, ...] = (session_id,)
        if kind is not None:
            sql += " AND kind = ?"
            params += (kind,)
        return json_dicts(await self._db.fetchdicts(sql + " ORDER BY id", params), data="data_json")
