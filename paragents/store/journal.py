"""Side records of sessions: permission decisions (audit), session events, path reservations for the
conflict checker, and memory notes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiosqlite

from paragents.store.base import StoreBase, fetchall, now
from paragents.store.connection import pid_alive
from paragents.store.records import NoteRecord, ReservationRecord, StoreError, to_json
from paragents.store.sessions import norm_dir

ANSWERED_BY = ("policy", "user", "headless")
"""Who settled a permission decision: a rule/mode (policy), the user in the TUI, or headless mode."""


def _unknown_session(exc: StoreError, session_id: str | None) -> StoreError:
    if "FOREIGN KEY" in str(exc):
        return StoreError(f"no session with id {session_id!r} (or no turn with the turn_id given)")
    return exc


class JournalMixin(StoreBase):
    """Audit, event, reservation and note methods of :class:`paragents.store.Store`."""

    async def _insert(self, sql: str, params: tuple[Any, ...], session_id: str | None) -> int:
        async def work(db: aiosqlite.Connection) -> int:
            cur = await db.execute(sql, params)
            assert cur.lastrowid is not None
            return int(cur.lastrowid)

        try:
            return await self._write(work)
        except StoreError as exc:
            raise _unknown_session(exc, session_id) from exc

    async def record_decision(
        self,
        session_id: str,
        *,
        tool: str,
        input: dict[str, Any],
        decision: str,
        reason: str | None,
        rule: str | None,
        scope: str | None,
        answered_by: str,
        answer: str | None = None,
    ) -> int:
        """Record one permission decision and return its id.

        ``tool`` is the Claude Code tool name (Bash, Read, Edit...), ``input`` the tool input dict,
        ``decision`` allow/ask/deny, ``rule`` the matching rule string, ``scope`` where the rule
        came from, ``answered_by`` policy|user|headless, ``answer`` the user's reply to an ask
        (allow_once...). Raises StoreError for a bad ``answered_by``, an input holding an auth
        header/key, or an unknown session."""
        if answered_by not in ANSWERED_BY:
            raise StoreError(f"answered_by: {answered_by!r} is not one of {', '.join(ANSWERED_BY)}")
        return await self._insert(
            "INSERT INTO audit (session_id, tool, input_json, decision, reason, rule, scope, answered_by,"
            " answer, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                tool,
                to_json(input, "input"),
                decision,
                reason,
                rule,
                scope,
                answered_by,
                answer,
                now(),
            ),
            session_id,
        )

    async def recent_decisions(self, session_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """Return the session's last ``limit`` decisions, newest first, as dicts with keys id, tool,
        input (dict), decision, reason, rule, scope, answered_by, answer, created_at."""
        rows = await self._fetchdicts(
            "SELECT * FROM audit WHERE session_id = ? ORDER BY id DESC LIMIT ?", (session_id, int(limit))
        )
        for row in rows:
            row["input"] = json.loads(row.pop("input_json"))
        return rows

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

    async def add_reservation(
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
        ``pid`` is the owning process (used by :meth:`release_dead_reservations`)."""
        return await self._insert(
            "INSERT INTO reservations (session_id, turn_id, path, kind, reason, pid, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, turn_id, path, kind, reason, pid, now()),
            session_id,
        )

    async def release_reservations(self, session_id: str | None = None, turn_id: int | None = None) -> int:
        """Delete the reservations of a session and/or a turn; return how many were released.
        Raises StoreError when neither is given (releasing everything is never what is meant)."""
        if session_id is None and turn_id is None:
            raise StoreError("release_reservations: give session_id or turn_id")
        where: list[str] = []
        params: list[Any] = []
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        if turn_id is not None:
            where.append("turn_id = ?")
            params.append(turn_id)

        async def work(db: aiosqlite.Connection) -> int:
            cur = await db.execute(f"DELETE FROM reservations WHERE {' AND '.join(where)}", params)
            return max(cur.rowcount, 0)

        return await self._write(work)

    async def list_reservations(self, project_dir: Path | None = None) -> list[ReservationRecord]:
        """Return reservations (of sessions in ``project_dir`` when given), oldest first."""
        if project_dir is None:
            rows = await self._fetchall("SELECT * FROM reservations ORDER BY id")
        else:
            rows = await self._fetchall(
                "SELECT r.* FROM reservations r JOIN sessions s ON s.id = r.session_id "
                "WHERE s.project_dir = ? ORDER BY r.id",
                (norm_dir(project_dir),),
            )
        return [ReservationRecord.from_row(r) for r in rows]

    async def release_dead_reservations(self) -> int:
        """Delete reservations whose ``pid`` names no live process; return how many."""

        async def work(db: aiosqlite.Connection) -> int:
            rows = await fetchall(db, "SELECT id, pid FROM reservations WHERE pid IS NOT NULL")
            dead = [r["id"] for r in rows if not pid_alive(r["pid"])]
            for rid in dead:
                await db.execute("DELETE FROM reservations WHERE id = ?", (rid,))
            return len(dead)

        return await self._write(work)

    async def add_note(
        self, project_dir: Path, text: str, *, session_id: str | None = None, author: str
    ) -> int:
        """Store a memory note for the project (``session_id`` None) or one of its sessions; return its
        id. ``author`` says who wrote it ("user", "agent", a session name...). Raises StoreError for
        empty text."""
        if not text.strip():
            raise StoreError("text: a note cannot be empty")
        return await self._insert(
            "INSERT INTO notes (project_dir, session_id, text, author, created_at) VALUES (?, ?, ?, ?, ?)",
            (norm_dir(project_dir), session_id, text, author, now()),
            session_id,
        )

    async def list_notes(self, project_dir: Path, session_id: str | None = None) -> list[NoteRecord]:
        """Return the project's notes, oldest first: the project-wide ones, plus those of
        ``session_id`` when given."""
        rows = await self._fetchall(
            "SELECT * FROM notes WHERE project_dir = ? AND (session_id IS NULL OR session_id = ?) "
            "ORDER BY id",
            (norm_dir(project_dir), session_id),
        )
        return [NoteRecord.from_row(r) for r in rows]

    async def delete_note(self, note_id: int) -> bool:
        """Delete a note; return True when it existed."""

        async def work(db: aiosqlite.Connection) -> bool:
            cur = await db.execute("DELETE FROM notes WHERE id = ?", (note_id,))
            return cur.rowcount > 0

        return await self._write(work)
