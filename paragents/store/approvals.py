"""The ``approvals`` table: every pending approval and conflict decision, answerable from any process.

A waiting tool call is a row (``state`` pending). Whoever answers (the TUI, ``paragents approve``, the
HTTP API, a notification action) calls :meth:`ApprovalsRepo.answer`, a compare-and-set on
``state = 'pending'``: the first answer is accepted, any later one is refused with an
:class:`AnswerResult` naming the first (who, when, what). The waiting engine calls
:meth:`ApprovalsRepo.wait`: an answer given through the same ``Store`` object wakes it at
once (an in-process ``asyncio.Event``); an answer written by another process is seen by a poll of the
row every :data:`POLL_INTERVAL` seconds (one indexed primary-key read; no busy loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import aiosqlite

from paragents.paths import norm_dir
from paragents.store.base import Database, Repository, fetchone, now
from paragents.store.connection import pid_alive, this_host
from paragents.store.records.approvals import AnswerResult, AnswerStatus, ApprovalRecord, ApprovalState
from paragents.store.records.errors import StoreError
from paragents.store.rows import Json, from_row, to_json

POLL_INTERVAL = 0.25
"""Seconds between re-reads of a pending row by the waiting process (answers from other processes
arrive within this, plus the time the answering process's write takes)."""

_SELECT = (
    "SELECT a.*, s.name AS session_name, s.workdir AS session_workdir"
    " FROM approvals a JOIN sessions s ON s.id = a.session_id"
)


def _approval(row: sqlite3.Row) -> ApprovalRecord:
    """Read a ``SELECT a.*, s.name AS session_name, s.workdir AS session_workdir`` row."""
    return from_row(
        ApprovalRecord,
        row,
        call=Json("call_json", {}),
        rules=Json(default=(), into=tuple),
        choices=Json(default=(), into=tuple),
        session_name=row["session_name"] or "",
        session_workdir=row["session_workdir"] or "",
    )


class ApprovalsRepo(Repository):
    """Approval rows of :class:`paragents.store.Store` (``store.approvals``; see the module docstring)."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self._wakers: dict[str, asyncio.Event] = {}

    def _waker(self, approval_id: str) -> asyncio.Event:
        event = self._wakers.get(approval_id)
        if event is None:
            event = self._wakers[approval_id] = asyncio.Event()
        return event

    def _wake(self, approval_id: str) -> None:
        event = self._wakers.get(approval_id)
        if event is not None:
            event.set()

    async def add(
        self,
        approval_id: str,
        session_id: str,
        *,
        kind: Literal["approval", "conflict"],
        tool: str,
        summary: str,
        call: dict[str, Any] | None = None,
        turn_id: int | None = None,
        reason: str = "",
        preview: str = "",
        rules: Sequence[str] = (),
        choices: Sequence[str] = (),
        expires_in: float | None = None,
        pid: int | None = None,
    ) -> ApprovalRecord:
        """Record a pending approval (or conflict decision) waited on by this process (``pid``, default
        ``os.getpid()``) and return it. Raises StoreError for an unknown session or a duplicate id."""
        stamp = now()
        await self._db.insert(
            "INSERT INTO approvals (id, session_id, turn_id, kind, tool, call_json, summary, reason, preview,"
            " rules, choices, pid, host, created_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                approval_id,
                session_id,
                turn_id,
                kind,
                tool,
                to_json(call or {}, "call"),
                summary,
                reason,
                preview,
                to_json(list(rules), "rules"),
                to_json(list(choices), "choices"),
                os.getpid() if pid is None else pid,
                this_host(),
                stamp,
                None if expires_in is None else stamp + expires_in,
            ),
            session_id,
        )
        rec = await self.get(approval_id)
        assert rec is not None
        return rec

    async def get(self, approval_id: str) -> ApprovalRecord | None:
        """Return the row ``approval_id``, or None."""
        row = await self._db.fetchone(_SELECT + " WHERE a.id = ?", (approval_id,))
        return _approval(row) if row else None

    async def find(
        self,
        *,
        state: ApprovalState | None = "pending",
        project_dir: Path | None = None,
        session_id: str | None = None,
    ) -> list[ApprovalRecord]:
        """Return rows (``state`` pending by default; None: every state) of one project and/or one
        session when given, oldest first."""
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if state is not None:
            where.append("a.state = ?")
            params.append(state)
        if project_dir is not None:
            where.append("s.project_dir = ?")
            params.append(norm_dir(project_dir))
        if session_id is not None:
            where.append("a.session_id = ?")
            params.append(session_id)
        rows = await self._db.fetchall(
            f"{_SELECT} WHERE {' AND '.join(where)} ORDER BY a.created_at, a.rowid", params
        )
        return [_approval(r) for r in rows]

    async def answer(
        self,
        approval_id: str,
        answer: str,
        answered_by: str,
        note: str | None = None,
        *,
        rules: Sequence[str] | None = None,
    ) -> AnswerResult:
        """Answer a pending row, once: a compare-and-set on ``state = 'pending'``. ``answer`` is one of
        the row's :attr:`ApprovalRecord.answers`; ``answered_by`` says who ("cli (pid 12)", "user",
        "http: phone"); ``note`` the deny note; ``rules`` the rules an ``allow_always`` stores instead
        of the suggested ones. A second answer is refused (``already_answered``) naming the first; an
        answer after ``expires_at`` marks the row expired and is refused. The process waiting on it
        wakes at once when it shares this Store object, else within :data:`POLL_INTERVAL`."""
        found: list[ApprovalRecord | None] = [None]

        async def work(db: aiosqlite.Connection) -> AnswerStatus:
            row = await fetchone(db, _SELECT + " WHERE a.id = ?", (approval_id,))
            if row is None:
                return "unknown"
            rec = found[0] = _approval(row)
            if rec.state != "pending":
                return "already_answered" if rec.state == "answered" else rec.state
            if answer not in rec.answers:
                return "invalid"
            stamp = now()
            if rec.expires_at is not None and stamp >= rec.expires_at:
                await db.execute(
                    "UPDATE approvals SET state = 'expired', answered_at = ? "
                    "WHERE id = ? AND state = 'pending'",
                    (stamp, approval_id),
                )
                return "expired"
            chosen = rec.rules if rules is None else tuple(rules)
            cur = await db.execute(
                "UPDATE approvals SET state = 'answered', answer = ?, answered_by = ?, answered_at = ?,"
                " note = ?, rules = ? WHERE id = ? AND state = 'pending'",
                (answer, answered_by, stamp, note, to_json(list(chosen), "rules"), approval_id),
            )
            return "accepted" if cur.rowcount == 1 else "already_answered"

        status = await self._db.write(work)
        rec = await self.get(approval_id) if status != "unknown" else None
        if status in ("accepted", "expired"):
            self._wake(approval_id)
        return AnswerResult(status, _answer_message(approval_id, status, answer, rec), rec)

    async def close(self, approval_id: str, note: str, *, state: ApprovalState = "closed") -> bool:
        """End a pending row without an answer (``state`` closed or expired) with ``note`` saying why;
        return False when it was no longer pending (answered first)."""
        rowcount, _ = await self._db.write_one(
            "UPDATE approvals SET state = ?, note = ?, answered_at = ? WHERE id = ? AND state = 'pending'",
            (state, note, now(), approval_id),
        )
        if rowcount > 0:
            self._wake(approval_id)
        return rowcount > 0

    async def adopt(self, approval_id: str, turn_id: int | None, *, pid: int | None = None) -> None:
        """Make this process (``pid``) the one waiting on a row again (after a restart), in ``turn_id``."""
        await self._db.write_one(
            "UPDATE approvals SET pid = ?, host = ?, turn_id = ? WHERE id = ?",
            (os.getpid() if pid is None else pid, this_host(), turn_id, approval_id),
        )

    async def wait(self, approval_id: str, *, poll: float = POLL_INTERVAL) -> ApprovalRecord:
        """Return the row once it is no longer pending (answered, expired or closed). Woken at once by
        an answer through this Store object; otherwise the row is re-read every ``poll`` seconds. A row
        past its ``expires_at`` is marked expired here. Raises StoreError when the row is gone."""
        event = self._waker(approval_id)
        try:
            while True:
                event.clear()
                rec = await self.get(approval_id)
                if rec is None:
                    raise StoreError(f"no approval with id {approval_id!r} in {self.path}")
                if rec.state != "pending":
                    return rec
                wait = poll
                if rec.expires_at is not None:
                    left = rec.expires_at - now()
                    if left <= 0:
                        await self.close(approval_id, "no answer before it expired", state="expired")
                        continue
                    wait = min(wait, left)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), wait)
        finally:
            if self._wakers.get(approval_id) is event:
                del self._wakers[approval_id]

    async def engine_processes(self, host: str | None = None) -> list[tuple[int, float]]:
        """The processes on ``host`` (default: this one) that run sessions, as ``(pid, last sign of
        life)``: every session holder (its heartbeat) and every process waiting on a pending row (the
        row's creation). A process these started is a session's tool (paragents.sessions.answerer)."""
        here = host or this_host()
        rows = await self._db.fetchall(
            "SELECT pid, MAX(heartbeat) FROM session_holders WHERE host = ? GROUP BY pid UNION ALL "
            "SELECT pid, MAX(created_at) FROM approvals WHERE state = 'pending' AND host = ? "
            "AND pid IS NOT NULL GROUP BY pid",
            (here, here),
        )
        seen: dict[int, float] = {}
        for pid, stamp in rows:
            seen[int(pid)] = max(float(stamp), seen.get(int(pid), 0.0))
        return sorted(seen.items())

    async def orphaned(self, current_pid: int | None = None) -> list[ApprovalRecord]:
        """Rows a crash left behind, oldest first: the process waiting on them (on this host) is gone
        and they are pending, or were answered (by another process, while it was down) for a turn
        that was then interrupted (the answer was never used)."""
        me = os.getpid() if current_pid is None else current_pid
        host = this_host()
        rows = await self._db.fetchall(
            f"{_SELECT} LEFT JOIN turns t ON t.id = a.turn_id WHERE a.state = 'pending' OR "
            "(a.state = 'answered' AND t.status = 'interrupted') ORDER BY a.created_at, a.rowid"
        )
        recs = [_approval(r) for r in rows]
        return [r for r in recs if r.pid != me and r.host == host and not pid_alive(r.pid)]


def _answer_message(approval_id: str, status: AnswerStatus, answer: str, rec: ApprovalRecord | None) -> str:
    if rec is None:
        return f"no approval with id {approval_id!r}"
    what = f"{rec.kind} {approval_id} ({rec.summary})"
    if status == "accepted":
        return f"{what}: answered {answer}"
    if status == "invalid":
        return f"{what}: {answer!r} is not an answer it takes (one of: {', '.join(rec.answers)})"
    if status == "already_answered":
        return f"{what} was already answered: {rec.describe_answer()}; this answer was not taken"
    return f"{what} is {rec.state} ({rec.describe_answer()}); this answer was not taken"
