"""The ``reservations`` table: paths a session's turn holds, for the conflict checker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiosqlite

from paragents.paths import norm_dir
from paragents.store.base import Repository, fetchall, now
from paragents.store.connection import pid_alive
from paragents.store.records.errors import StoreError
from paragents.store.records.sessions import ReservationRecord
from paragents.store.rows import from_row


class ReservationsRepo(Repository):
    """Path reservations, of :class:`paragents.store.Store` (``store.reservations``)."""

    async def add(
        self,
        session_id: str,
        path: str,
        kind: str,
        *,
        turn_id: int | None = None,
        reason: str | None = None,
        pid: int | None = None,
    ) -> int:
        """Reserve ``path`` (a file path or resource name) for a session's turn; return the id.
        ``pid`` is the owning process (used by :meth:`release_dead`)."""
        return await self._db.insert(
            "INSERT INTO reservations (session_id, turn_id, path, kind, reason, pid, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, turn_id, path, kind, reason, pid, now()),
            session_id,
        )

    async def release(
        self, session_id: str | None = None, turn_id: int | None = None, keep_kind: str | None = None
    ) -> int:
        """Delete the reservations of a session and/or a turn (except those of kind ``keep_kind``);
        return how many were released. Raises StoreError when neither is given (releasing everything
        is never what is meant)."""
        if session_id is None and turn_id is None:
            raise StoreError("reservations.release: give session_id or turn_id")
        where: list[str] = []
        params: list[Any] = []
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        if turn_id is not None:
            where.append("turn_id = ?")
            params.append(turn_id)
        if keep_kind is not None:
            where.append("kind != ?")
            params.append(keep_kind)

        async def work(db: aiosqlite.Connection) -> int:
            cur = await db.execute(f"DELETE FROM reservations WHERE {' AND '.join(where)}", params)
            return max(cur.rowcount, 0)

        return await self._db.write(work)

    async def all(self, project_dir: Path | None = None) -> list[ReservationRecord]:
        """Return reservations (of sessions in ``project_dir`` when given), oldest first."""
        if project_dir is None:
            rows = await self._db.fetchall("SELECT * FROM reservations ORDER BY id")
        else:
            rows = await self._db.fetchall(
                "SELECT r.* FROM reservations r JOIN sessions s ON s.id = r.session_id "
                "WHERE s.project_dir = ? ORDER BY r.id",
                (norm_dir(project_dir),),
            )
        return [from_row(ReservationRecord, r) for r in rows]

    async def release_dead(self) -> int:
        """Delete reservations whose ``pid`` names no live process; return how many."""

        async def work(db: aiosqlite.Connection) -> int:
            rows = await fetchall(db, "SELECT id, pid FROM reservations WHERE pid IS NOT NULL")
            dead = [r["id"] for r in rows if not pid_alive(r["pid"])]
            for rid in dead:
                await db.execute("DELETE FROM reservations WHERE id = ?", (rid,))
            return len(dead)

        return await self._db.write(work)
