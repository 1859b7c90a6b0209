"""Session holders: one live writer per session.

A process that opens a session for writing takes its ``session_holders`` row (pid, host, started_at,
heartbeat) in one transaction. Another process finds the row and may take it only when the holder
is gone: its pid is dead (or a zombie) on this host, or now belongs to a process that started at
another time than the one recorded (a reused pid), or its heartbeat is older than
:data:`STALE_AFTER` seconds;
or when the user confirms a take-over (``take_over=True``). The holder renews its heartbeat every
:data:`HEARTBEAT_INTERVAL` seconds and learns there when it lost the session.
"""

from __future__ import annotations

import os
import sqlite3

import aiosqlite

from paragents.store.base import Repository, fetchone, now
from paragents.store.connection import pid_alive, process_start, this_host
from paragents.store.records.errors import SessionHeld, StoreError
from paragents.store.records.sessions import HolderRecord
from paragents.store.rows import from_row

HEARTBEAT_INTERVAL = 15.0
"""Seconds between a holder's heartbeats."""

STALE_AFTER = 120.0
"""A holder whose heartbeat is older than this many seconds is taken as gone (a stopped or hung
process, or one on another host whose pid cannot be checked)."""


def holder_gone(holder: HolderRecord, *, host: str, stamp: float, stale_after: float) -> bool:
    """Return True when ``holder`` can be taken over without asking: on this host its pid is dead, a
    zombie, or a process started at another time than the one recorded (the pid was reused); or its
    heartbeat is older than ``stale_after`` seconds."""
    if holder.host == host:
        if not pid_alive(holder.pid):
            return True
        if holder.proc_start is not None and process_start(holder.pid) not in (None, holder.proc_start):
            return True
    return stamp - holder.heartbeat > stale_after


def _holder(row: sqlite3.Row | None) -> HolderRecord | None:
    return None if row is None else from_row(HolderRecord, row)


_SELECT = (
    "SELECT session_id, pid, host, started_at, heartbeat, proc_start FROM session_holders "
    "WHERE session_id = ?"
)


class HoldersRepo(Repository):
    """Session holders of :class:`paragents.store.Store` (``store.holders``)."""

    async def acquire(
        self,
        session_id: str,
        *,
        take_over: bool = False,
        pid: int | None = None,
        stale_after: float | None = None,
    ) -> HolderRecord | None:
        """Make this process (``pid``, default ``os.getpid()``) the session's one writer.

        Returns None when the session was free or already ours, or the previous holder when it was
        taken over (it was gone, or ``take_over`` was given). Raises :class:`SessionHeld` when a live
        other process holds it and ``take_over`` is False; StoreError for an unknown session."""
        owner = os.getpid() if pid is None else pid
        host = this_host()
        limit = STALE_AFTER if stale_after is None else stale_after

        async def work(db: aiosqlite.Connection) -> HolderRecord | None:
            if await fetchone(db, "SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is None:
                raise StoreError(f"no session with id {session_id!r} in {self.path}")
            stamp = now()
            held = _holder(await fetchone(db, _SELECT, (session_id,)))
            mine = held is not None and held.pid == owner and held.host == host
            if (
                held is not None
                and not mine
                and not take_over
                and not holder_gone(held, host=host, stamp=stamp, stale_after=limit)
            ):
                raise SessionHeld(held)
            if mine:
                await db.execute(
                    "UPDATE session_holders SET heartbeat = ? WHERE session_id = ?", (stamp, session_id)
                )
                return None
            await db.execute(
                "INSERT OR REPLACE INTO session_holders "
                "(session_id, pid, host, started_at, heartbeat, proc_start) VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, owner, host, stamp, stamp, process_start(owner)),
            )
            return held

        try:
            return await self._db.write(work)
        except SessionHeld as exc:
            row = await self._db.fetchone("SELECT name FROM sessions WHERE id = ?", (session_id,))
            raise SessionHeld(exc.holder, row[0] if row else None) from None

    async def get(self, session_id: str) -> HolderRecord | None:
        """Return the session's holder row, or None when no process holds it."""
        return _holder(await self._db.fetchone(_SELECT, (session_id,)))

    async def live(self, session_id: str, *, stale_after: float | None = None) -> HolderRecord | None:
        """Return the session's holder while it is a live process (see :func:`holder_gone`), else
        None: no process holds it, or the one recorded is gone (the session is free to take). Only reads."""
        held = await self.get(session_id)
        limit = STALE_AFTER if stale_after is None else stale_after
        if held is None or holder_gone(held, host=this_host(), stamp=now(), stale_after=limit):
            return None
        return held

    async def renew(self, session_ids: list[str], *, pid: int | None = None) -> list[str]:
        """Renew this process's heartbeat on ``session_ids``; return those it no longer holds (another
        process took them over, or the row is gone)."""
        if not session_ids:
            return []
        owner = os.getpid() if pid is None else pid
        host = this_host()

        async def work(db: aiosqlite.Connection) -> list[str]:
            lost: list[str] = []
            stamp = now()
            for sid in session_ids:
                cur = await db.execute(
                    "UPDATE session_holders SET heartbeat = ? WHERE session_id = ? AND pid = ? AND host = ?",
                    (stamp, sid, owner, host),
                )
                if cur.rowcount != 1:
                    lost.append(sid)
            return lost

        return await self._db.write(work)

    async def release(self, session_id: str, *, pid: int | None = None) -> bool:
        """Give up this process's hold on the session; return True when it held it."""
        owner = os.getpid() if pid is None else pid
        rowcount, _ = await self._db.write_one(
            "DELETE FROM session_holders WHERE session_id = ? AND pid = ? AND host = ?",
            (session_id, owner, this_host()),
        )
        return rowcount > 0
