"""Sessions and their conversations: create, find, list, update, ``/clear``."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiosqlite

from paragents.models import SessionState, Usage
from paragents.paths import norm_dir
from paragents.store.base import Repository, fetchone, now
from paragents.store.records.errors import StoreError
from paragents.store.records.sessions import ConversationRecord, SessionRecord
from paragents.store.rows import Json, from_row, to_json

__all__ = ["UPDATABLE", "SessionsRepo", "insert_conversation", "norm_dir"]


def _check_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StoreError("name: a session name must be a non-empty string")
    return value.strip()


def _check_text(field: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, str) or not value:
            raise StoreError(f"{field}: expected a non-empty string, got {value!r}")
        return value

    return check


def _check_state(value: Any) -> str:
    try:
        return SessionState(value).value
    except ValueError:
        known = ", ".join(s.value for s in SessionState)
        raise StoreError(f"state: {value!r} is not a session state (known: {known})") from None


def _check_int(field: str, *, optional: bool = False, minimum: int = 0) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise StoreError(f"{field}: expected an integer >= {minimum}, got {value!r}")
        return value

    return check


def _check_bool(value: Any) -> int:
    if not isinstance(value, bool):
        raise StoreError(f"is_open: expected True or False, got {value!r}")
    return int(value)


def _check_rules(value: Any) -> str:
    if not isinstance(value, list | tuple) or not all(isinstance(r, str) for r in value):
        raise StoreError("session_rules: expected a list of rule strings such as 'Bash(ls *)'")
    return to_json(list(value), "session_rules")


UPDATABLE: dict[str, Callable[[Any], Any]] = {
    "name": _check_name,
    "model": _check_text("model"),
    "mode": _check_text("mode"),
    "state": _check_state,
    "is_open": _check_bool,
    "position": _check_int("position"),
    "pid": _check_int("pid", optional=True, minimum=1),
    "last_prompt_tokens": _check_int("last_prompt_tokens"),
    "session_rules": _check_rules,
}
"""Fields :meth:`SessionsRepo.update` accepts, with their validators (value -> column value)."""


async def insert_conversation(db: aiosqlite.Connection, session_id: str) -> str:
    """Inside a transaction: create a conversation of ``session_id``, make it current, return its id."""
    conv = uuid.uuid4().hex
    stamp = now()
    await db.execute(
        "INSERT INTO conversations (id, session_id, created_at, title) VALUES (?, ?, ?, NULL)",
        (conv, session_id, stamp),
    )
    await db.execute(
        "UPDATE sessions SET conversation_id = ?, updated_at = ? WHERE id = ?", (conv, stamp, session_id)
    )
    return conv


def _rules(value: Any) -> tuple[str, ...]:
    return tuple(str(r) for r in value) if isinstance(value, list) else ()


def _session(row: sqlite3.Row) -> SessionRecord:
    """Read a ``SELECT * FROM sessions`` row. Unknown states read as ``idle``."""
    try:
        state = SessionState(row["state"])
    except ValueError:
        state = SessionState.IDLE
    return from_row(
        SessionRecord,
        row,
        project_dir=Path(row["project_dir"]),
        workdir=Path(row["workdir"]),
        state=state,
        is_open=bool(row["is_open"]),
        conversation_id=row["conversation_id"] or "",
        usage=Usage(int(row["prompt_tokens"]), int(row["completion_tokens"]), int(row["total_tokens"])),
        session_rules=Json(default=[], into=_rules),
    )


class SessionsRepo(Repository):
    """Sessions and their conversations, of :class:`paragents.store.Store` (``store.sessions``)."""

    async def create(
        self, *, name: str, project_dir: Path, workdir: Path, model: str, mode: str = "default"
    ) -> SessionRecord:
        """Create an open session (placed after the project's other open panels) with its first
        conversation, state ``idle``; return it.

        ``project_dir``/``workdir`` are stored resolved and absolute. Raises StoreError when the
        project already has a session called ``name``, or when a field is empty."""
        name = _check_name(name)
        _check_text("model")(model)
        _check_text("mode")(mode)
        project = norm_dir(project_dir)
        session_id = uuid.uuid4().hex

        async def work(db: aiosqlite.Connection) -> None:
            if await fetchone(
                db, "SELECT 1 FROM sessions WHERE project_dir = ? AND name = ?", (project, name)
            ):
                raise StoreError(
                    f"a session named {name!r} already exists in {project}; pick another name "
                    "or reopen that session"
                )
            row = await fetchone(
                db,
                "SELECT COALESCE(MAX(position) + 1, 0) FROM sessions WHERE project_dir = ? AND is_open = 1",
                (project,),
            )
            position = int(row[0]) if row else 0
            stamp = now()
            await db.execute(
                "INSERT INTO sessions (id, name, project_dir, workdir, model, mode, state, is_open, position,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'idle', 1, ?, ?, ?)",
                (session_id, name, project, norm_dir(workdir), model, mode, position, stamp, stamp),
            )
            await insert_conversation(db, session_id)

        await self._db.write(work)
        return await self._require(session_id)

    async def _require(self, session_id: str) -> SessionRecord:
        record = await self.get(session_id)
        if record is None:
            raise StoreError(f"no session with id {session_id!r} in {self.path}")
        return record

    async def get(self, session_id: str) -> SessionRecord | None:
        """Return the session with id ``session_id`` (uuid4 hex), or None."""
        row = await self._db.fetchone("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return _session(row) if row else None

    async def find(self, project_dir: Path, name: str) -> SessionRecord | None:
        """Return the session called ``name`` in ``project_dir``, or None."""
        row = await self._db.fetchone(
            "SELECT * FROM sessions WHERE project_dir = ? AND name = ?", (norm_dir(project_dir), name)
        )
        return _session(row) if row else None

    async def all(self, project_dir: Path | None = None, *, open_only: bool = False) -> list[SessionRecord]:
        """Return sessions (of ``project_dir`` when given): open ones first, ordered by ``position``,
        then the others, most recently updated first. ``open_only`` leaves out closed panels."""
        where: list[str] = []
        params: list[Any] = []
        if project_dir is not None:
            where.append("project_dir = ?")
            params.append(norm_dir(project_dir))
        if open_only:
            where.append("is_open = 1")
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = await self._db.fetchall(
            f"SELECT * FROM sessions {clause} ORDER BY is_open DESC, "
            "CASE WHEN is_open = 1 THEN position END, updated_at DESC, created_at",
            params,
        )
        return [_session(r) for r in rows]

    async def update(self, session_id: str, **fields: Any) -> SessionRecord:
        """Change fields of a session and return the updated record (``updated_at`` is set to now).

        Allowed fields: name, model, mode, state (a SessionState or its value), is_open (bool),
        position (int >= 0), pid (int or None), last_prompt_tokens (int >= 0), session_rules
        (list of rule strings). Raises StoreError for another field, a bad value, an unknown
        session or a name already used in the project."""
        unknown = sorted(set(fields) - set(UPDATABLE))
        if unknown:
            raise StoreError(
                f"sessions.update: cannot change {', '.join(unknown)} (allowed: {', '.join(UPDATABLE)})"
            )
        values = {key: UPDATABLE[key](value) for key, value in fields.items()}

        async def work(db: aiosqlite.Connection) -> None:
            row = await fetchone(db, "SELECT project_dir FROM sessions WHERE id = ?", (session_id,))
            if row is None:
                raise StoreError(f"no session with id {session_id!r} in {self.path}")
            if "name" in values and await fetchone(
                db,
                "SELECT 1 FROM sessions WHERE project_dir = ? AND name = ? AND id <> ?",
                (row[0], values["name"], session_id),
            ):
                raise StoreError(
                    f"a session named {values['name']!r} already exists in {row[0]}; pick another name"
                )
            assignments = ", ".join(f"{key} = ?" for key in values)
            sets = f"{assignments}, updated_at = ?" if values else "updated_at = ?"
            await db.execute(
                f"UPDATE sessions SET {sets} WHERE id = ?", (*values.values(), now(), session_id)
            )

        await self._db.write(work)
        return await self._require(session_id)

    async def new_conversation(self, session_id: str) -> str:
        """Start a new, empty conversation for the session (``/clear``), make it current and return
        its id; the old one stays in history. Raises StoreError for an unknown session."""

        async def work(db: aiosqlite.Connection) -> str:
            if await fetchone(db, "SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is None:
                raise StoreError(f"no session with id {session_id!r} in {self.path}")
            return await insert_conversation(db, session_id)

        return await self._db.write(work)

    async def set_conversation_title(self, conversation_id: str, title: str | None) -> None:
        """Set (or clear with None) the title shown for a conversation in history."""

        async def work(db: aiosqlite.Connection) -> None:
            await db.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id))

        await self._db.write(work)

    async def conversations(self, session_id: str) -> list[ConversationRecord]:
        """Return the session's conversations, oldest first, with message counts and which is current."""
        rows = await self._db.fetchall(
            "SELECT c.id, c.session_id, c.created_at, c.title, "
            "(SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS message_count, "
            "(c.id = s.conversation_id) AS is_current "
            "FROM conversations c JOIN sessions s ON s.id = c.session_id "
            "WHERE c.session_id = ? ORDER BY c.created_at, c.rowid",
            (session_id,),
        )
        return [from_row(ConversationRecord, r, is_current=bool(r["is_current"])) for r in rows]

    async def state(self, session_id: str) -> str | None:
        """Return a session's stored state ('idle', 'running', ...), or None for an unknown id."""
        row = await self._db.fetchone("SELECT state FROM sessions WHERE id = ?", (session_id,))
        return str(row[0]) if row else None
