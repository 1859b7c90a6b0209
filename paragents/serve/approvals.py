"""Pending approvals as the API sees them: :class:`Approvals` lists them and answers one once.

This is the seam to the approvals engine: every ask is a row of the store's ``approvals`` table.
``items`` lists this process's asks (from the sessions' views, with their previews) and the pending
rows of other processes of the project (``paragents run --wait-approvals``, another TUI, a ``serve
--tui`` tab); ``answer`` goes through ``runtime.answer_approval``: the first answer wins, from any
process, and a second one is refused naming the first. Both methods run on the Runtime's loop
(:class:`~paragents.serve.bridge.RuntimeBridge` calls them there). Nothing here imports Textual."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from paragents import events as ev

if TYPE_CHECKING:
    from paragents.sessions.api import SessionsAPI
    from paragents.store import ApprovalRecord

WEB_ANSWERS = ("allow_once", "allow_session", "reject_once", "reject_with_note")
"""Answers the API accepts ("always allow" writes permanent rules: the terminal only)."""


class ApiError(Exception):
    """A request the Runtime refused: ``status`` (HTTP) and a readable ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def is_destructive(command: str) -> bool:
    """True when a shell command deletes or overwrites files (or cannot be analysed): the page then
    asks for a second tap before allowing it. The one classifier is
    :func:`paragents.permissions.destructive.command_destructive`."""
    from paragents.permissions.destructive import command_destructive

    try:
        return command_destructive(command) is not None
    except Exception:  # never let a parser failure hide the second tap
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


def row_json(row: ApprovalRecord) -> dict[str, Any]:
    """A pending row of another process as the API shows it (same shape as :func:`request_json`)."""
    try:
        args = json.loads(str(row.call.get("arguments") or "{}"))
    except ValueError:
        args = {}
    command = args.get("command") if isinstance(args, dict) else None
    preview = None
    if row.preview:
        preview = {
            "kind": "text",
            "text": row.preview,
            "detail": "",
            "cwd": None,
            "problem": None,
            "omitted": 0,
        }
    return {
        "id": row.id,
        "kind": "approval",
        "session_id": row.session_id,
        "session_name": row.session_name,
        "tool": row.tool,
        "summary": row.summary,
        "reason": row.reason,
        "rule": None,
        "suggested_rules": list(row.rules),
        "command": command if isinstance(command, str) else None,
        "preview": preview,
        "destructive": isinstance(command, str) and is_destructive(command),
        "since": row.created_at,
        "process": row.pid,
    }


class Approvals:
    """The pending approvals of ``runtime``'s open sessions; ``clock`` gives Unix seconds."""

    def __init__(self, runtime: SessionsAPI, clock: Callable[[], float] = time.time) -> None:
        self.runtime = runtime
        self.clock = clock
        self.asked_at: dict[str, float] = {}

    def observe(self, event: ev.Event) -> None:
        """Note when asks arrive and drop them once settled (an observer of the Runtime's events)."""
        if isinstance(event, ev.PermissionRequested):
            self.asked_at[event.request_id] = self.clock()
        elif isinstance(event, ev.PermissionResolved):
            self.asked_at.pop(event.request_id, None)

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
        shown = {i["id"] for i in items}
        for row in await self.runtime.pending_approvals():
            if row.id not in shown and row.kind == "approval":
                items.append(row_json(row))  # an ask another process waits on
        items.sort(key=lambda i: i["since"] if i["since"] is not None else float("inf"))
        return items

    async def answer(self, request_id: str, answer: str, note: str | None, by: str) -> dict[str, Any]:
        """Settle ``request_id`` with ``answer`` (validated by the caller) once, through the store.
        Raises ApiError 409 when it was already answered, expired or closed (naming the first answer),
        404 when no such ask waits, 422 when the ask does not take this answer."""
        result = await self.runtime.answer_approval(request_id, answer, answered_by=by, note=note)
        if result.accepted:
            sid = result.approval.session_id if result.approval is not None else ""
            return {"id": request_id, "session_id": sid, "answer": answer, "by": by}
        status = {"unknown": 404, "invalid": 422}.get(result.status, 409)
        raise ApiError(status, result.message)
