"""Pending approvals as the API sees them: :class:`Approvals` lists them and answers one once.

This is the seam to the approvals engine. Today an ask is the ``PermissionRequested`` event held in
its session's view and answered by resolving its Future in this process; when approvals become rows
in the store, only this file changes (``items`` reads the rows, ``answer`` calls the store's
answer-once function). Both methods run on the Runtime's loop (:class:`~paragents.serve.bridge.RuntimeBridge`
calls them there). Nothing here imports Textual."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paragents import events as ev

if TYPE_CHECKING:
    from paragents.sessions.api import SessionsAPI

WEB_ANSWERS = ("allow_once", "allow_session", "reject_once", "reject_with_note")
"""Answers the API accepts ("always allow" writes permanent rules: the terminal only)."""


class ApiError(Exception):
    """A request the Runtime refused: ``status`` (HTTP) and a readable ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Answered:
    """How an ask was settled: the ``answer``, ``by`` whom and ``at`` (Unix seconds)."""

    answer: str
    by: str
    at: float


def is_destructive(command: str) -> bool:
    """True when a shell command deletes or overwrites files (or cannot be analysed): the page then
    asks for a second tap before allowing it."""
    try:
        from paragents.permissions import special
        from paragents.permissions.shell import parse_command

        parsed = parse_command(command)
        return any(special.destructive(cmd.effective) for cmd in parsed.commands)
    except Exception:
        return True


def request_json(sid: str, name: str, req: ev.PermissionRequested, since: float | None) -> dict[str, Any]:
    """One pending approval as the API shows it (plain strings; the page inserts them as text)."""
    try:
        args = json.loads(req.call.arguments or "{}")
    except ValueError:
        args = {}
    command = args.get("command") if isinstance(args, dict) else None
    preview = req.preview
    return {
        "id": req.request_id,
        "kind": "approval",
        "session_id": sid,
        "session_name": name,
        "tool": req.call.name,
        "summary": req.summary,
        "reason": req.reason,
        "rule": req.rule,
        "suggested_rules": list(req.suggested_rules),
        "command": command if isinstance(command, str) else None,
        "preview": None
        if preview is None
        else {
            "kind": preview.kind,
            "text": preview.text,
            "detail": preview.detail,
            "cwd": preview.cwd,
            "problem": preview.problem,
            "omitted": preview.omitted,
        },
        "destructive": isinstance(command, str) and is_destructive(command),
        "since": since,
    }


class Approvals:
    """The pending approvals of ``runtime``'s open sessions; ``clock`` gives Unix seconds."""

    def __init__(self, runtime: SessionsAPI, clock: Callable[[], float] = time.time) -> None:
        self.runtime = runtime
        self.clock = clock
        self.answered: dict[str, Answered] = {}
        """Asks settled so far (by any client), by request id: a second answer is refused naming it."""
        self.asked_at: dict[str, float] = {}

    def observe(self, event: ev.Event) -> None:
        """Note when asks arrive and how they were settled (an observer of the Runtime's events)."""
        if isinstance(event, ev.PermissionRequested):
            self.asked_at[event.request_id] = self.clock()
        elif isinstance(event, ev.PermissionResolved):
            self.asked_at.pop(event.request_id, None)
            if event.request_id not in self.answered:
                self.answered[event.request_id] = Answered(event.answer, event.by, self.clock())

    async def items(self) -> list[dict[str, Any]]:
        """Pending approvals (answerable here) and conflicts (answered in the terminal), oldest first."""
        items: list[dict[str, Any]] = []
        for sid, view in self.runtime.sessions.items():
            for req in view.pending.values():
                if not req.reply.done():
                    items.append(request_json(sid, view.name, req, self.asked_at.get(req.request_id)))
            for con in view.conflicts.values():
                if not con.reply.done():
                    items.append(
                        {
                            "id": con.conflict_id,
                            "kind": "conflict",
                            "session_id": sid,
                            "session_name": view.name,
                            "summary": con.summary,
                            "since": None,
                        }
                    )
        items.sort(key=lambda i: i["since"] if i["since"] is not None else float("inf"))
        return items

    async def answer(self, request_id: str, answer: str, note: str | None, by: str) -> dict[str, Any]:
        """Settle ``request_id`` with ``answer`` (validated by the caller) once. Raises ApiError 409
        when it was already answered (naming the first answer), 404 when no such ask waits."""
        first = self.answered.get(request_id)
        if first is not None:
            raise ApiError(409, f"already answered: {first.answer} by {first.by}")
        for view in self.runtime.sessions.values():
            req = view.pending.get(request_id)
            if req is None:
                continue
            if req.reply.done():
                raise ApiError(409, "already answered")
            self.answered[request_id] = Answered(answer, by, self.clock())
            payload: Any = {"note": note} if answer == "reject_with_note" else None
            req.reply.set_result((answer, payload))  # type: ignore[arg-type]
            return {"id": request_id, "session_id": view.id, "answer": answer, "by": by}
        raise ApiError(404, f"no pending approval with id {request_id}")
