"""Records of the ``approvals`` table: a pending ask or conflict decision (:class:`ApprovalRecord`)
and what an answer to it did (:class:`AnswerResult`); see :mod:`paragents.store.approvals`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

from paragents.store.connection import pid_alive, this_host

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
    (the deny note; for a closed row why it was closed). ``session_name``/``session_workdir``: the
    session's name and working directory (from its ``sessions`` row: where its commands run)."""

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
    session_workdir: str = ""

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
    """What :meth:`ApprovalsRepo.answer` did. ``status``: accepted; already_answered, expired
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
