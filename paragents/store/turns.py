"""Turns (one prompt and the agent's work on it), token usage, and recovery after a crash."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import aiosqlite

from paragents.models import SessionState, TurnStatus, Usage
from paragents.store.base import Database, Repository, fetchone, now
from paragents.store.connection import pid_alive
from paragents.store.records.errors import StoreError
from paragents.store.records.sessions import TurnRecord
from paragents.store.repair import repair_conversation
from paragents.store.rows import from_row

INTERRUPTED = "interrupted"
"""Turn status of a turn whose process stopped before it finished (found at startup)."""

FINISHED_STATUSES = (*(s.value for s in TurnStatus), INTERRUPTED)
"""Statuses :meth:`TurnsRepo.finish` accepts."""

_STATE_AFTER = {
    TurnStatus.COMPLETED.value: SessionState.IDLE,
    TurnStatus.CANCELLED.value: SessionState.IDLE,
    TurnStatus.FAILED.value: SessionState.FAILED,
    INTERRUPTED: SessionState.INTERRUPTED,
}


class TurnsRepo(Repository):
    """Turns, token usage and crash recovery, of :class:`paragents.store.Store` (``store.turns``)."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.unfinished: dict[int, tuple[str, str | None]] = {}
        """Turns whose :meth:`finish` could not be written (turn id -> status, error): written by
        the next :meth:`start` or by ``Store.close``, so no turn row is left running."""

    async def start(self, session_id: str, prompt: str, *, pid: int | None = None) -> int:
        """Record a turn as running in the session's current conversation and return its id.

        Also sets the session's state to ``running`` and its ``pid`` (default: this process).
        Raises StoreError for an unknown session."""
        owner = os.getpid() if pid is None else pid
        await self.flush_unfinished()

        async def work(db: aiosqlite.Connection) -> int:
            row = await fetchone(db, "SELECT conversation_id FROM sessions WHERE id = ?", (session_id,))
            if row is None:
                raise StoreError(f"no session with id {session_id!r} in {self.path}")
            stamp = now()
            cur = await db.execute(
                "INSERT INTO turns (session_id, conversation_id, prompt, status, started_at, pid) "
                "VALUES (?, ?, ?, 'running', ?, ?)",
                (session_id, row[0], prompt, stamp, owner),
            )
            await db.execute(
                "UPDATE sessions SET state = ?, pid = ?, updated_at = ? WHERE id = ?",
                (SessionState.RUNNING.value, owner, stamp, session_id),
            )
            assert cur.lastrowid is not None
            return int(cur.lastrowid)

        return await self._db.write(work)

    async def finish(
        self, turn_id: int, status: str, error: str | None = None, *, run_seconds: float | None = None
    ) -> None:
        """Mark a turn finished with ``status`` (completed, failed, cancelled or interrupted) and
        an optional ``error`` text. The session's state becomes idle (completed/cancelled), failed
        or interrupted, its pid is cleared, and the turn's reservations are released. ``run_seconds``
        is the wall-clock time the turn ran, pauses excluded (the wall-clock budgets count it).
        Raises StoreError for an unknown turn or status; when the write itself fails (a lock held
        too long) the finish is kept in :attr:`unfinished` and written by the next
        :meth:`start` or ``Store.close``, then the StoreError is raised."""
        status = str(status)
        if status not in FINISHED_STATUSES:
            raise StoreError(f"status: {status!r} is not one of {', '.join(FINISHED_STATUSES)}")

        async def work(db: aiosqlite.Connection) -> None:
            row = await fetchone(db, "SELECT session_id FROM turns WHERE id = ?", (turn_id,))
            if row is None:
                raise StoreError(f"no turn with id {turn_id} in {self.path}")
            stamp = now()
            await db.execute(
                "UPDATE turns SET status = ?, error = ?, finished_at = ?, run_seconds = ? WHERE id = ?",
                (status, error, stamp, run_seconds, turn_id),
            )
            await db.execute(
                "UPDATE sessions SET state = ?, pid = NULL, updated_at = ? WHERE id = ?",
                (_STATE_AFTER[status].value, stamp, row[0]),
            )
            await db.execute("DELETE FROM reservations WHERE turn_id = ?", (turn_id,))

        try:
            await self._db.write(work)
        except StoreError as exc:
            if "no turn with id" not in str(exc):
                self.unfinished[turn_id] = (status, error)
            raise
        self.unfinished.pop(turn_id, None)

    async def flush_unfinished(self) -> None:
        """Write the turn finishes that failed earlier (see :meth:`finish`); raises StoreError
        when the store still cannot be written (they stay kept)."""
        for turn_id, (status, error) in list(self.unfinished.items()):
            await self.finish(turn_id, status, error)

    async def get(self, turn_id: int) -> TurnRecord | None:
        """Return the turn with id ``turn_id``, or None."""
        row = await self._db.fetchone("SELECT * FROM turns WHERE id = ?", (turn_id,))
        return from_row(TurnRecord, row) if row else None

    async def all(self, session_id: str, statuses: Sequence[str] = ()) -> list[TurnRecord]:
        """Return the session's turns, oldest first (only those in ``statuses`` when given)."""
        if statuses:
            marks = ", ".join("?" for _ in statuses)
            sql = f"SELECT * FROM turns WHERE session_id = ? AND status IN ({marks}) ORDER BY id"
            rows = await self._db.fetchall(sql, (session_id, *statuses))
        else:
            rows = await self._db.fetchall(
                "SELECT * FROM turns WHERE session_id = ? ORDER BY id", (session_id,)
            )
        return [from_row(TurnRecord, r) for r in rows]

    async def recover_interrupted(self, current_pid: int) -> list[str]:
        """At startup: find turns still ``running`` whose process is gone, and clean up after them.

        A turn is orphaned when its pid is not ``current_pid`` and ``os.kill(pid, 0)`` finds no
        process. Each becomes ``interrupted``; its session's state becomes ``interrupted`` (pid
        cleared); its conversation's unanswered tool calls get synthetic "interrupted" results; its
        reservations are released. Sessions left ``running``/``waiting`` (or ``queued``) by a process
        that is gone, with no such turn, become ``interrupted`` (``idle`` for queued). Returns one
        readable note per affected session (empty when none)."""
        rows = await self._db.fetchall(
            "SELECT t.id, t.pid, t.started_at, t.session_id, t.conversation_id, s.name, s.project_dir "
            "FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.status = 'running' ORDER BY t.id"
        )
        orphans = [r for r in rows if r["pid"] != current_pid and not pid_alive(r["pid"])]
        busy = await self._db.fetchall(
            "SELECT id, name, project_dir, state, pid FROM sessions "
            "WHERE state IN ('running', 'waiting', 'queued', 'budget', 'paused')"
        )
        stale = [r for r in busy if r["pid"] != current_pid and not pid_alive(r["pid"])]
        if not orphans and not stale:
            return []

        async def work(db: aiosqlite.Connection) -> list[str]:
            notes: dict[str, str] = {}
            stamp = now()
            for r in orphans:
                cur = await db.execute(
                    "UPDATE turns SET status = 'interrupted', finished_at = ?, error = ? "
                    "WHERE id = ? AND status = 'running'",
                    (stamp, f"the process (pid {r['pid']}) stopped during this turn", r["id"]),
                )
                if cur.rowcount != 1:
                    continue  # another process recovered it first
                await db.execute(
                    "UPDATE sessions SET state = ?, pid = NULL, updated_at = ? WHERE id = ?",
                    (SessionState.INTERRUPTED.value, stamp, r["session_id"]),
                )
                await db.execute("DELETE FROM reservations WHERE turn_id = ?", (r["id"],))
                repaired = 0
                if r["conversation_id"]:
                    repaired = len((await repair_conversation(db, r["conversation_id"])).synthetic)
                started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["started_at"]))
                note = (
                    f"session {r['name']!r} ({r['project_dir']}): the turn started {started} was "
                    f"interrupted when process {r['pid']} stopped"
                )
                if repaired:
                    plural = "" if repaired == 1 else "s"
                    note += f"; {repaired} unfinished tool call{plural} marked interrupted"
                notes[r["session_id"]] = note
            for r in stale:
                if r["id"] in notes:
                    continue
                state = SessionState.IDLE if r["state"] == "queued" else SessionState.INTERRUPTED
                cur = await db.execute(
                    "UPDATE sessions SET state = ?, pid = NULL, updated_at = ? WHERE id = ? AND state = ?",
                    (state.value, stamp, r["id"], r["state"]),
                )
                if cur.rowcount == 1:
                    notes[r["id"]] = (
                        f"session {r['name']!r} ({r['project_dir']}) was {r['state']} when its process "
                        f"stopped; it is now {state.value}"
                    )
            return list(notes.values())

        return await self._db.write(work)

    async def add_usage(
        self,
        session_id: str,
        turn_id: int | None,
        model: str,
        usage: Usage,
        *,
        estimated: bool = False,
        cost_usd: float | None = None,
    ) -> None:
        """Record the token usage of one request (``estimated`` when counted locally, not reported
        by the server; ``cost_usd`` its price at ``model``'s prices, None when unpriced) and, in the
        same transaction, add it to the session's totals and set its ``last_prompt_tokens`` to
        ``usage.prompt_tokens``. Raises StoreError for an unknown session."""

        async def work(db: aiosqlite.Connection) -> None:
            stamp = now()
            cur = await db.execute(
                "UPDATE sessions SET prompt_tokens = prompt_tokens + ?, completion_tokens = "
                "completion_tokens + ?, total_tokens = total_tokens + ?, last_prompt_tokens = ?, "
                "updated_at = ? WHERE id = ?",
                (
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    usage.total_tokens,
                    usage.prompt_tokens,
                    stamp,
                    session_id,
                ),
            )
            if cur.rowcount != 1:
                raise StoreError(f"no session with id {session_id!r} in {self.path}")
            await db.execute(
                "INSERT INTO usage (session_id, turn_id, model, prompt_tokens, completion_tokens,"
                " total_tokens, estimated, created_at, cached_tokens, cost_usd)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    turn_id,
                    model,
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    usage.total_tokens,
                    int(estimated),
                    stamp,
                    usage.cached_tokens,
                    cost_usd,
                ),
            )

        await self._db.write(work)

    async def list_usage(self, session_id: str) -> list[dict[str, object]]:
        """Return the session's per-request usage rows, oldest first, as dicts (column names as keys,
        ``estimated`` as bool)."""
        rows = await self._db.fetchdicts(
            "SELECT * FROM usage WHERE session_id = ? ORDER BY id", (session_id,)
        )
        return [{**r, "estimated": bool(r["estimated"])} for r in rows]

    async def usage_by_model(
        self, *, session_id: str | None = None, project_dir: str | None = None, since: float | None = None
    ) -> dict[str, Usage]:
        """Return the usage recorded per model (tokens), of one session and/or of every session of one
        project, from ``since`` (epoch seconds) on; what every process wrote counts (the budgets)."""
        where: list[str] = ["1 = 1"]
        params: list[object] = []
        if session_id is not None:
            where.append("u.session_id = ?")
            params.append(session_id)
        if project_dir is not None:
            where.append("s.project_dir = ?")
            params.append(project_dir)
        if since is not None:
            where.append("u.created_at >= ?")
            params.append(since)
        rows = await self._db.fetchdicts(
            "SELECT u.model AS model, SUM(u.prompt_tokens) AS p, SUM(u.completion_tokens) AS c,"
            " SUM(u.total_tokens) AS t FROM usage u JOIN sessions s ON s.id = u.session_id"
            f" WHERE {' AND '.join(where)} GROUP BY u.model",
            tuple(params),
        )
        return {str(r["model"]): Usage(int(r["p"]), int(r["c"]), int(r["t"])) for r in rows}
