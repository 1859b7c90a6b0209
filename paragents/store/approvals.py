"""The ``approvals`` table: every pending approval and conflict decision, answerable from any process.

A waiting tool call is a row (``state`` pending). Whoever answers (the TUI, ``paragents approve``, the
HTTP API, a notification action) calls :meth:`ApprovalsMixin.answer_approval`, a compare-and-set on
``state = 'pending'``: the first answer is accepted, any later one is refused with an
:class:`AnswerResult` naming the first (who, when, what). The waiting engine calls
:meth:`ApprovalsMixin.wait_approval`: an answer given through the same ``Store`` object wakes it at
once (an in-process ``asyncio.Event``); an answer written by another process is seen by a poll of the
row every :data:`POLL_INTERVAL` seconds (one indexed primary-key read; no busy loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import aiosqlite

from paragents.store.base import StoreBase, fetchone, now
from paragents.store.connection import pid_alive
from paragents.store.holders import this_host
from paragents.store.records import StoreError, to_json
from paragents.store.sessions import norm_dir

POLL_INTERVAL = 0.25
"""Seconds between re-reads of a pending row by the waiting process (answers from other processes
arrive within this, plus the time the answering process's write takes)."""

APPROVAL_ANSWERS = ("allow_once", "allow_session", "allow_always", "reject_once", "reject_with_note")
"""Answers to a ``kind = 'approval'`` row (``paragents.events.ApprovalAnswer``)."""

CONFLICT_ANSWERS = ("wait", "run_anyway", "skip", "reread")
"""Answers to a ``kind = 'conflict'`` row (``paragents.events.ConflictAnswer``; each row lists the
ones it offers in ``choices``)."""

ApprovalState = Literal["pending", "answered", "expired", "closed"]
AnswerStatus = Literal["accepted", "already_answered", "expired", "closed", "unknown", "invalid"]


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One row of ``approvals``.

    ``id``: the ask's request id (or conflict id), shown by ``paragents inbox``. ``kind``: approval or
    conflict. ``call``: the tool call as ``{"id", "name", "arguments"}``; ``summary`` its one-line
    description; ``reason`` why it asks; ``preview`` what it will do (a command, a diff), plain text;
    ``rules`` the rules "allow always" stores (for an answered row: the rules the answer chose);
    ``choices`` the answers a conflict offers. ``pid``/``host``: the process waiting on it.
    ``expires_at``: after this (unix seconds) no answer is taken (None: never). ``state``: pending,
    answered, expired or closed (the wait ended without an answer: cancelled, process gone...).
    ``answer``/``answered_by``/``answered_at``/``note``: the answer, who gave it, when, and its note
    (the deny note; for a closed row why it was closed)."""

    id: str
    session_id: str
    turn_id: int | None
    kind: str
    tool: str
    call: dict[str, Any]
    summary: str
    reason: str
    preview: str
    rules: tuple[str, ...]
    choices: tuple[str, ...]
    pid: int | None
    host: str | None
    created_at: float
    expires_at: float | None
    state: ApprovalState
    answer: str | None
    answered_by: str | None
    answered_at: float | None
    note: str | None
    session_name: str = ""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ApprovalRecord:
        """Build from a ``SELECT a.*, s.name AS session_name`` row."""
        keys = row.keys()
        return cls(
            id=row["id"],
            session_id=row["session_id"],
            turn_id=row["turn_id"],
            kind=row["kind"],
            tool=row["tool"],
            call=json.loads(row["call_json"] or "{}"),
            summary=row["summary"],
            reason=row["reason"],
            preview=row["preview"],
            rules=tuple(json.loads(row["rules"] or "[]")),
            choices=tuple(json.loads(row["choices"] or "[]")),
            pid=row["pid"],
            host=row["host"],
            created_at=float(row["created_at"]),
            expires_at=row["expires_at"],
            state=row["state"],
            answer=row["answer"],
            answered_by=row["answered_by"],
            answered_at=row["answered_at"],
            note=row["note"],
            session_name=row["session_name"] if "session_name" in keys and row["session_name"] else "",
        )

    @property
    def answers(self) -> tuple[str, ...]:
        """The answers this row accepts."""
        return APPROVAL_ANSWERS if self.kind == "approval" else self.choices

    def waiter_gone(self, host: str | None = None) -> bool:
        """True when the row is pending but the process waiting on it is gone (it crashed): the row is
        shown again when that session is reopened (or closed with a note when its turn cannot go on)."""
        here = host or this_host()
        return self.state == "pending" and self.host == here and not pid_alive(self.pid)

    def describe_answer(self) -> str:
        """One readable phrase: "allow_once by cli (pid 12) at 2026-12-01 05:40:02" (or the closing note)."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.answered_at or self.created_at))
        if self.state == "answered":
            note = f" (note: {self.note})" if self.note else ""
            return f"{self.answer} by {self.answered_by} at {when}{note}"
        if self.state == "expired":
            return f"expired at {when} with no answer"
        if self.state == "closed":
            return f"closed at {when}: {self.note or 'no longer waited on'}"
        return "pending"

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON-able dict (``paragents inbox --json``, the HTTP API)."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "session": self.session_name,
            "kind": self.kind,
            "tool": self.tool,
            "summary": self.summary,
            "reason": self.reason,
            "preview": self.preview,
            "rules": list(self.rules),
            "answers": list(self.answers),
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "state": self.state,
            "waiter_gone": self.waiter_gone(),
            "answer": self.answer,
            "answered_by": self.answered_by,
            "answered_at": self.answered_at,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class AnswerResult:
    """What :meth:`ApprovalsMixin.answer_approval` did. ``status``: accepted; already_answered, expired
    or closed (refused: ``approval`` is the row as it is, naming the first answer); unknown (no such
    id; ``approval`` None); invalid (an answer this row does not take). ``message`` is one readable
    sentence either way."""

    status: AnswerStatus
    message: str
    approval: ApprovalRecord | None = None

    @property
    def accepted(self) -> bool:
        """True when this answer was the one taken."""
        return self.status == "accepted"


_SELECT = "SELECT a.*, s.name AS session_name FROM approvals a JOIN sessions s ON s.id = a.session_id"


class ApprovalsMixin(StoreBase):
    """Approval rows of :class:`paragents.store.Store` (see the module docstring)."""

    _approval_wakers: dict[str, asyncio.Event]

    def _waker(self, approval_id: str) -> asyncio.Event:
        wakers = self.__dict__.setdefault("_approval_wakers", {})
        event = wakers.get(approval_id)
        if event is None:
            event = wakers[approval_id] = asyncio.Event()
        return event

    def _wake(self, approval_id: str) -> None:
        event = self.__dict__.get("_approval_wakers", {}).get(approval_id)
        if event is not None:
            event.set()

    async def add_approval(
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
        await self._insert(
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
        rec = await self.get_approval(approval_id)
        assert rec is not None
        return rec

    async def get_approval(self, approval_id: str) -> ApprovalRecord | None:
        """Return the row ``approval_id``, or None."""
        row = await self._fetchone(_SELECT + " WHERE a.id = ?", (approval_id,))
        return ApprovalRecord.from_row(row) if row else None

    async def list_approvals(
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
        rows = await self._fetchall(
            f"{_SELECT} WHERE {' AND '.join(where)} ORDER BY a.created_at, a.rowid", params
        )
        return [ApprovalRecord.from_row(r) for r in rows]

    async def answer_approval(
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
            rec = found[0] = ApprovalRecord.from_row(row)
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

        status = await self._write(work)
        rec = await self.get_approval(approval_id) if status != "unknown" else None
        if status in ("accepted", "expired"):
            self._wake(approval_id)
        return AnswerResult(status, _answer_message(approval_id, status, answer, rec), rec)

    async def close_approval(self, approval_id: str, note: str, *, state: ApprovalState = "closed") -> bool:
        """End a pending row without an answer (``state`` closed or expired) with ``note`` saying why;
        return False when it was no longer pending (answered first)."""
        rowcount, _ = await self._write_one(
            "UPDATE approvals SET state = ?, note = ?, answered_at = ? WHERE id = ? AND state = 'pending'",
            (state, note, now(), approval_id),
        )
        if rowcount > 0:
            self._wake(approval_id)
        return rowcount > 0

    async def adopt_approval(self, approval_id: str, turn_id: int | None, *, pid: int | None = None) -> None:
        """Make this process (``pid``) the one waiting on a row again (after a restart), in ``turn_id``."""
        await self._write_one(
            "UPDATE approvals SET pid = ?, host = ?, turn_id = ? WHERE id = ?",
            (os.getpid() if pid is None else pid, this_host(), turn_id, approval_id),
        )

    async def wait_approval(self, approval_id: str, *, poll: float = POLL_INTERVAL) -> ApprovalRecord:
        """Return the row once it is no longer pending (answered, expired or closed). Woken at once by
        an answer through this Store object; otherwise the row is re-read every ``poll`` seconds. A row
        past its ``expires_at`` is marked expired here. Raises StoreError when the row is gone."""
        event = self._waker(approval_id)
        try:
            while True:
                event.clear()
                rec = await self.get_approval(approval_id)
                if rec is None:
                    raise StoreError(f"no approval with id {approval_id!r} in {self.path}")
                if rec.state != "pending":
                    return rec
                wait = poll
                if rec.expires_at is not None:
                    left = rec.expires_at - now()
                    if left <= 0:
                        await self.close_approval(approval_id, "no answer before it expired", state="expired")
                        continue
                    wait = min(wait, left)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), wait)
        finally:
            wakers = self.__dict__.get("_approval_wakers", {})
            if wakers.get(approval_id) is event:
                del wakers[approval_id]

    async def engine_processes(self, host: str | None = None) -> list[tuple[int, float]]:
        """The processes on ``host`` (default: this one) that run sessions, as ``(pid, last sign of
        life)``: every session holder (its heartbeat) and every process waiting on a pending row (the
        row's creation). A process these started is a session's tool (paragents.sessions.answerer)."""
        here = host or this_host()
        rows = await self._fetchall(
            "SELECT pid, MAX(heartbeat) FROM session_holders WHERE host = ? GROUP BY pid UNION ALL "
            "SELECT pid, MAX(created_at) FROM approvals WHERE state = 'pending' AND host = ? "
            "AND pid IS NOT NULL GROUP BY pid",
            (here, here),
        )
        seen: dict[int, float] = {}
        for pid, stamp in rows:
            seen[int(pid)] = max(float(stamp), seen.get(int(pid), 0.0))
        return sorted(seen.items())

    async def orphaned_approvals(self, current_pid: int | None = None) -> list[ApprovalRecord]:
        """Rows a crash left behind, oldest first: the process waiting on them (on this host) is gone
        and they are pending, or were answered (by another process, while it was down) for a turn
        that was then interrupted (the answer was never used)."""
        me = os.getpid() if current_pid is None else current_pid
        host = this_host()
        rows = await self._fetchall(
            f"{_SELECT} LEFT JOIN turns t ON t.id = a.turn_id WHERE a.state = 'pending' OR "
            "(a.state = 'answered' AND t.status = 'interrupted') ORDER BY a.created_at, a.rowid"
        )
        recs = [ApprovalRecord.from_row(r) for r in rows]
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
