"""Conflicts and budget / loop-guard pauses as the API sees them: listed in ``GET /inbox`` beside the
asks and answered with the answers the terminal's bars offer.

- A **conflict** (a call held by the conflict checker) is a row of the store's ``approvals`` table
  (kind ``conflict``): ``POST /conflicts/{id}/answer`` answers the row once (compare-and-set, the
  first answer wins whichever process or client gives it) with one of the conflict's own choices
  (wait, run anyway, skip, re-read first); the checker of the process that waits on it wakes and the
  terminal's bar goes.
- A **pause** (``BudgetPaused``: a budget reached, or the loop guard) lives in this process only (it
  is not in the store): ``POST /pauses/{id}/answer`` answers it through ``runtime.budgets
  .answer_pause`` (raise the cap to a value, allow one more request, stop; the loop guard: go on,
  stop), naming the exact pause, so an answer to a pause that ended, or to an earlier pause of the
  same session, is refused. Another process's pause is not seen here: it is answered in that
  process's terminal.

Every answer records who gave it (the row's ``answered_by``; a pause's ``budget_answer`` event).
Both run on the Runtime's loop (:class:`~paragents.serve.bridge.RuntimeBridge` calls them there).
Nothing here imports Textual."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents.paths import norm_dir
from paragents.serve.errors import ApiError
from paragents.sessions.budgets import PAUSE_ANSWERS
from paragents.sessions.view import SessionError

if TYPE_CHECKING:
    from paragents import events as ev
    from paragents.sessions.api import SessionsAPI
    from paragents.store.records.approvals import ApprovalRecord

CONFLICT_ANSWERS = ("wait", "run_anyway", "skip", "reread")
"""Answers a conflict may take (each conflict offers some of them: ``choices``)."""
OTHER_PROCESS_PAUSES = "a budget pause of another paragents process is answered in that process's terminal"


def conflict_json(sid: str, name: str, con: ev.ConflictDetected) -> dict[str, Any]:
    """One conflict of this process as the API shows it (plain strings; the page inserts them as text)."""
    return {
        "id": con.conflict_id,
        "kind": "conflict",
        "session_id": sid,
        "session_name": name,
        "tool": con.call.name,
        "summary": con.summary,
        "conflict_kind": con.kind,
        "path": con.path,
        "holder": con.holder,
        "holder_reason": con.holder_reason,
        "diff": con.diff,
        "choices": list(con.choices),
        "since": con.since,
    }


def conflict_row_json(row: ApprovalRecord) -> dict[str, Any]:
    """A pending conflict row another process waits on (same shape; what the row keeps)."""
    return {
        "id": row.id,
        "kind": "conflict",
        "session_id": row.session_id,
        "session_name": row.session_name,
        "tool": row.tool,
        "summary": row.summary,
        "conflict_kind": None,
        "path": None,
        "holder": None,
        "holder_reason": row.reason,
        "diff": row.preview or None,
        "choices": [c for c in row.answers if c in CONFLICT_ANSWERS],
        "since": row.created_at,
        "process": row.pid,
    }


def pause_json(sid: str, name: str, pause: ev.BudgetPaused) -> dict[str, Any]:
    """One budget or loop-guard pause of this process as the API shows it."""
    loop = pause.level == "loop"
    return {
        "id": pause.pause_id,
        "kind": "pause",
        "session_id": sid,
        "session_name": name,
        "summary": pause.reason,
        "level": pause.level,
        "cap_kind": pause.kind,
        "spent": pause.spent,
        "cap": pause.cap,
        "choices": ["one_more", "stop"] if loop else list(PAUSE_ANSWERS),
        "since": None,
    }


class Held:
    """Conflicts and pauses of ``runtime`` (listing and answering them)."""

    def __init__(self, runtime: SessionsAPI) -> None:
        self.runtime = runtime

    def local_items(self) -> list[dict[str, Any]]:
        """This process's open conflicts and pauses (the caller checks the project)."""
        items: list[dict[str, Any]] = []
        for sid, view in self.runtime.sessions.items():
            for con in view.open_conflicts:
                items.append(conflict_json(sid, view.name, con))
            pause = view.open_pause
            if pause is not None:
                items.append(pause_json(sid, view.name, pause))
        return items

    async def answer_conflict(
        self, conflict_id: str, answer: str, by: str, projects: tuple[str, ...]
    ) -> dict[str, Any]:
        """Answer the pending conflict ``conflict_id`` once, through the store. ApiError 400 for an
        answer no conflict takes, 404 when no such conflict (an ask's id is not a conflict's), 403 for
        another project's (naming both), 422 for an answer this conflict does not offer (a stale read
        cannot wait), 409 when it was answered or ended first (naming the first answer)."""
        if answer not in CONFLICT_ANSWERS:
            raise ApiError(400, f"answer must be one of {', '.join(CONFLICT_ANSWERS)}")
        row = await self.runtime.approvals.get_approval(conflict_id)
        if row is None or row.kind != "conflict":
            raise ApiError(404, f"no conflict with id {conflict_id}")
        project = await self.runtime.approvals.project_of(conflict_id)
        where = norm_dir(project) if project is not None else None
        if where not in projects:
            raise ApiError(
                403,
                f"conflict {conflict_id} is of the project {where}; this credential answers for "
                f"{', '.join(projects) or 'no project'} only",
            )
        result = await self.runtime.approvals.answer_approval(conflict_id, answer, answered_by=by)
        if result.accepted:
            return {"id": conflict_id, "session_id": row.session_id, "answer": answer, "by": by}
        status = {"unknown": 404, "invalid": 422}.get(result.status, 409)
        raise ApiError(status, result.message)

    async def answer_pause(
        self, pause_id: str, answer: str, value: str | None, by: str, projects: tuple[str, ...]
    ) -> dict[str, Any]:
        """Answer this process's pause ``pause_id`` once. ApiError 400 for an answer no pause takes or
        a cap that does not parse, 403 when this server's project is not the credential's, 404 when no
        such pause waits here (answered in its own process's terminal if it is another's), 409 when it
        was answered first (naming that answer), 422 for an answer this pause does not offer."""
        if answer not in PAUSE_ANSWERS:
            raise ApiError(400, f"answer must be one of {', '.join(PAUSE_ANSWERS)}")
        project = norm_dir(Path(self.runtime.project_dir))
        if project not in projects:
            raise ApiError(
                403,
                f"this server's pauses are of the project {project}; this credential answers for "
                f"{', '.join(projects) or 'no project'} only",
            )
        try:
            result = self.runtime.budgets.answer_pause(pause_id, answer, value or "", by)
        except SessionError as exc:
            raise ApiError(400, str(exc)) from None
        if result.accepted:
            return {"id": pause_id, "session_id": result.session_id, "answer": answer, "by": by}
        if result.status == "unknown":
            raise ApiError(404, f"{result.message} ({OTHER_PROCESS_PAUSES})")
        raise ApiError({"invalid": 422}.get(result.status, 409), result.message)
