"""The ``events`` table: things that happened to a session (a conflict...), as JSON."""

from __future__ import annotations

import json
from typing import Any

from paragents.store.base import StoreBase, now
from paragents.store.records import to_json


class SessionEventsMixin(StoreBase):
    """Session event methods of :class:`paragents.store.Store`."""

    async def record_event(self, session_id: str, kind: str, data: dict[str, Any]) -> int:
        """Record a session event (``kind`` e.g. "conflict", ``data`` a JSON-able dict); return its id.
        Raises StoreError for data that is not JSON-able or an unknown session."""
        return await self._insert(
            "INSERT INTO events (session_id, kind, data_json, created_at) VALUES (?, ?, ?, ?)",
            (session_id, kind, to_json(data, "data"), now()),
            session_id,
        )

    async def list_events(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """Return the session's events (of ``kind`` when given), oldest first, as dicts with keys
        id, session_id, kind, data (dict), created_at."""
        sql = "SELECT * FROM events WHERE session_id = ?"
        params: tuple[Any, ...] = (session_id,)
        if kind is not None:
            sql += " AND kind = ?"
            params += (kind,)
        rows = await self._fetchdicts(sql + " ORDER BY id", params)
        for row in rows:
            row["data"] = json.loads(row.pop("data_json"))
        return rows
