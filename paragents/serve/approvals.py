"""Pending approvals as the API sees them: :class:`Approvals` lists them and answers one once.

This is the seam to the approvals engine: every ask is a row of the store's ``approvals`` table.
``items`` lists this process's asks (from the sessions' views, with their previews) and the pending
rows of other processes of the project (``paragents run --wait-approvals``, another TUI, a ``serve
--tui`` tab); ``answer`` goes through ``runtime.approvals.answer_approval``: the first answer wins, from any
process, and a second one is refused naming the first. Both methods run on the Runtime's loop
(:class:`~paragents.serve.bridge.RuntimeBridge` calls them there). Nothing here imports Textual."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.paths import norm_dir
from paragents.permissions import destructive
from paragents.serve.errors import ApiError
from paragents.serve.held import Held, conflict_row_json
from paragents.serve.shown import arguments_of, not_shown, size_of, whole_call

if TYPE_CHECKING:
    from paragents.models import CallPreview
    from paragents.sessions.api import SessionsAPI
    from paragents.store.records.approvals import ApprovalRecord

WEB_ANSWERS = ("allow_once", "allow_session", "reject_once", "reject_with_note")
"""Answers the API accepts ("always allow" writes permanent rules: the terminal only)."""
__all__ = ["ApiError", "Approvals"]


def is_destructive(command: str) -> bool:
    """True when a shell command deletes or overwrites files (or cannot be analysed): the page then
    asks for a second tap before allowing it. The one classifier is
    :func:`paragents.permissions.destructive.command_destructive`."""
    try:
        return destructive.command_destructive(command) is not None
    except Exception:  # never let a parser failure hide the second tap
        return True


def destructive_reason(tool: str, args: dict[str, Any]) -> str | None:
    """Why the call deletes or overwrites files (the page then asks for a second tap on Allow), or
    None: the policy's one classifier, :func:`paragents.permissions.destructive.destructive_reason`
    (the approval bar and the inbox ask it too)."""
    try:
        return destructive.destructive_reason(tool, args)
    except Exception:  # never let a parser failure hide the second tap
        return "the call could not be analysed"


def _preview_json(preview: CallPreview) -> dict[str, Any]:
    return {
        "kind": preview.kind,
        "text": preview.text,
        "detail": preview.detail,
        "cwd": preview.cwd,
        "problem": preview.problem,
        "omitted": preview.omitted,
    }


def _call_json(tool: str, arguments: str | None) -> dict[str, Any]:
    """The fields every ask shows of its call: the whole ``command`` (a string-valued ``command``
    argument, never cut), the call's size and what the second tap needs."""
    args = arguments_of(arguments)
    command = args.get("command")
    reason = destructive_reason(tool, args)
    return {
        "command": command if isinstance(command, str) else None,
        "size": size_of(whole_call(tool, arguments)),
        "destructive": reason is not None,
        "destructive_reason": reason,
    }


def request_json(sid: str, name: str, req: ev.PermissionRequested, since: float | None) -> dict[str, Any]:
    """One pending approval as the API shows it (plain strings; the page inserts them as text).
    ``not_shown`` says how much the bounded preview leaves out ("" when nothing); ``command`` is
    always whole; ``GET /inbox/{id}/call`` gives the whole call."""
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
        **_call_json(req.call.name, req.call.arguments),
        "preview": None if preview is None else _preview_json(preview),
        "not_shown": not_shown(preview),
        "since": since,
    }


ROW_PREVIEW_NOTE = "this ask waits in another process, whose preview is kept cut: open the whole call"
"""What a row's preview says it may leave out (the row keeps the preview as cut text, the call whole)."""


def row_json(row: ApprovalRecord) -> dict[str, Any]:
    """A pending row of another process as the API shows it (same shape as :func:`request_json`).
    The row keeps the whole call; its preview is plain text that may be cut (``omitted`` None:
    unknown), so ``not_shown`` says so unless the whole command is shown."""
    arguments = str(row.call.get("arguments") or "{}")
    shown = _call_json(row.tool, arguments)
    preview = None
    if row.preview:
        preview = {
            "kind": "text",
            "text": row.preview,
            "detail": "",
            "cwd": None,
            "problem": None,
            "omitted": None,
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
        **shown,
        "preview": preview,
        "not_shown": "" if shown["command"] is not None or not row.preview else ROW_PREVIEW_NOTE,
        "since": row.created_at,
        "process": row.pid,
    }


class Approvals:
    """The pending approvals of ``runtime``'s open sessions; ``clock`` gives Unix seconds."""

    def __init__(self, runtime: SessionsAPI, clock: Callable[[], float] = time.time) -> None:
        self.runtime = runtime
        self.clock = clock
        self.asked_at: dict[str, float] = {}
        self.held = Held(runtime)
        """Conflicts and budget / loop-guard pauses (:mod:`paragents.serve.held`)."""

    def observe(self, event: ev.Event) -> None:
        """Note when asks arrive and drop them once settled (an observer of the Runtime's events)."""
        if isinstance(event, ev.PermissionRequested):
            self.asked_at[event.request_id] = self.clock()
        elif isinstance(event, ev.PermissionResolved):
            self.asked_at.pop(event.request_id, None)

    async def items(self, projects: tuple[str, ...]) -> list[dict[str, Any]]:
        """Pending approvals, conflicts and (this process's) budget pauses of ``projects``, oldest
        first: this process's when it serves one of them, and the pending rows (asks and conflicts)
        other processes of those projects wait on."""
        items: list[dict[str, Any]] = []
        if norm_dir(self.runtime.project_dir) in projects:
            items.extend(self._local_items())
        shown = {i["id"] for i in items}
        for project in projects:
            for row in await self.runtime.approvals.pending_approvals(project_dir=Path(project)):
                if row.id not in shown and row.kind == "approval":
                    items.append(row_json(row))  # an ask another process waits on
                elif row.id not in shown and row.kind == "conflict":
                    items.append(conflict_row_json(row))  # answered through the store too
                shown.add(row.id)
        items.sort(key=lambda i: i["since"] if i["since"] is not None else float("inf"))
        return items

    def _local_items(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for sid, view in self.runtime.sessions.items():
            for req in view.pending.values():
                if not req.reply.done():
                    items.append(request_json(sid, view.name, req, self.asked_at.get(req.request_id)))
        return [*items, *self.held.local_items()]

    async def whole(self, request_id: str, projects: tuple[str, ...]) -> dict[str, Any]:
        """The whole call of the pending ask ``request_id`` of one of ``projects``: ``whole`` (as
        :func:`~paragents.serve.shown.whole_call` writes it) and the raw ``arguments``. ApiError 404
        when no such ask waits, 403 for another project's."""
        for view in self.runtime.sessions.values():
            req = view.pending.get(request_id)
            if req is not None and norm_dir(self.runtime.project_dir) in projects:
                return self._whole_json(request_id, req.call.name, req.call.arguments)
        row = await self.runtime.approvals.get_approval(request_id)
        if row is None or row.state != "pending" or row.kind != "approval":
            raise ApiError(404, f"no pending ask with id {request_id}")
        project = await self.project_of(request_id)
        if project not in projects:
            raise ApiError(
                403, f"ask {request_id} is of the project {project}; this credential is not for it"
            )
        return self._whole_json(request_id, row.tool, str(row.call.get("arguments") or ""))

    @staticmethod
    def _whole_json(request_id: str, tool: str, arguments: str) -> dict[str, Any]:
        whole = whole_call(tool, arguments)
        return {
            "id": request_id,
            "tool": tool,
            "whole": whole,
            "size": size_of(whole),
            "arguments": arguments,
        }

    async def project_of(self, request_id: str) -> str | None:
        """The project directory of the ask ``request_id`` (None: no such ask or session)."""
        project = await self.runtime.approvals.project_of(request_id)
        return norm_dir(project) if project is not None else None

    async def answer(
        self, request_id: str, answer: str, note: str | None, by: str, projects: tuple[str, ...]
    ) -> dict[str, Any]:
        """Settle ``request_id`` with ``answer`` (validated by the caller) once, through the store.
        Raises ApiError 403 when the ask is of a project outside ``projects`` (the credential's; the
        message names both), 409 when it was already answered, expired or closed (naming the first
        answer), 404 when no such ask waits, 422 when the ask does not take this answer."""
        project = await self.project_of(request_id)
        if project is not None and project not in projects:
            raise ApiError(
                403,
                f"ask {request_id} is of the project {project}; this credential answers asks of "
                f"{', '.join(projects) or 'no project'} only",
            )
        result = await self.runtime.approvals.answer_approval(request_id, answer, answered_by=by, note=note)
        if result.accepted:
            sid = result.approval.session_id if result.approval is not None else ""
            return {"id": request_id, "session_id": sid, "answer": answer, "by": by}
        status = {"unknown": 404, "invalid": 422}.get(result.status, 409)
        raise ApiError(status, result.message)
