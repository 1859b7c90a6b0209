"""The approvals facet of the session layer (:class:`Approvals`): answering an ask in-process (what the
TUI, ``/serve``'s API and the eval's answerer call), listing the pending ones, the permission rules
(/permissions, a session's own rules, what they decide for a call), and what a restart does with the
rows a crash left pending (:func:`resume_orphans`, :func:`close_orphan_conflicts`). Nothing here
imports Textual.

After a crash, a pending approval row whose process is gone is, when its session is opened again:

- continued when its turn can go on (it was the session's last turn, interrupted by the crash, in the
  session's current conversation, and the tool still exists): a turn is queued that re-issues the
  call and asks again under the same id (``Agent.run_turn(resume=row)``); an answer given while
  paragents was down (``paragents approve``) is used without asking;
- closed with a note saying why otherwise.

A pending conflict row of a gone process is closed at start: the reservations it waited on were
released with that process, and a continued call is checked again anyway.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from paragents import events as ev
from paragents.permissions.decision import Decision, RuleRow
from paragents.permissions.settings import PolicyError, parse_rules
from paragents.sessions.answerer import Answerer, http_check
from paragents.sessions.core import SessionsCore
from paragents.sessions.view import SessionError, SessionView
from paragents.store import AnswerResult, ApprovalRecord

RESUME_PROMPT = "(continued after a restart) {summary}"
"""The turn's prompt text of a turn continued for a pending approval (what the turns table shows)."""


@dataclass(frozen=True)
class RulesReport:
    """The effective permission rules for ``/permissions``: in the order they are checked (deny, ask,
    allow) with where each came from, and the default permission mode."""

    rows: list[RuleRow]
    default_mode: str


class Approvals(Protocol):
    """Asks and permission rules as clients use them (``runtime.approvals``)."""

    async def answer_approval(
        self,
        approval_id: str,
        answer: str,
        answered_by: str = "user",
        note: str | None = None,
        rules: Sequence[str] | None = None,
    ) -> AnswerResult:
        """Answer a pending approval or conflict once (a later answer is refused, naming the first);
        the turn waiting on it continues at once."""
        ...

    async def pending_approvals(
        self, *, all_projects: bool = False, project_dir: Path | None = None
    ) -> list[ApprovalRecord]: ...
    async def get_approval(self, approval_id: str) -> ApprovalRecord | None: ...
    async def project_of(self, approval_id: str) -> Path | None: ...
    async def http_answerer(self, server: tuple[str, int], client: tuple[str, int], by: str) -> Answerer: ...
    async def add_session_rules(self, sid: str, rules: list[str]) -> list[str]: ...
    def rules_report(self) -> RulesReport: ...
    def check_always_rules(self, rules: Sequence[str]) -> None: ...
    def decide(self, sid: str, tool: str, arguments: dict[str, Any]) -> Decision: ...


class ApprovalCommands:
    """The :class:`Approvals` facet of the sessions of one project."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core

    async def answer_approval(
        self,
        approval_id: str,
        answer: str,
        answered_by: str = "user",
        note: str | None = None,
        rules: Sequence[str] | None = None,
    ) -> AnswerResult:
        """Answer a pending approval or conflict through the runtime's own store: the waiting turn of
        this process wakes at once (one of another process within the store's poll interval). See
        ``store.approvals.answer`` for the answers and the refusals."""
        return await self.core.store.approvals.answer(approval_id, answer, answered_by, note, rules=rules)

    async def pending_approvals(
        self, *, all_projects: bool = False, project_dir: Path | None = None
    ) -> list[ApprovalRecord]:
        """The pending rows of this project (of ``project_dir``; of every project with
        ``all_projects``), oldest first."""
        where = None if all_projects else (project_dir or self.core.project_dir)
        return await self.core.store.approvals.find(project_dir=where)

    async def get_approval(self, approval_id: str) -> ApprovalRecord | None:
        """The approval or conflict row ``approval_id`` (any state; None: no such row)."""
        return await self.core.store.approvals.get(approval_id)

    async def project_of(self, approval_id: str) -> Path | None:
        """The project directory of the ask ``approval_id`` (None: no such ask or session)."""
        row = await self.core.store.approvals.get(approval_id)
        record = await self.core.store.sessions.get(row.session_id) if row is not None else None
        return Path(record.project_dir) if record is not None else None

    async def http_answerer(self, server: tuple[str, int], client: tuple[str, int], by: str) -> Answerer:
        """Who answers through the HTTP API from ``client`` to ``server`` and whether it may
        (:func:`paragents.sessions.answerer.http_check`)."""
        return await http_check(self.core.store.approvals, server, client, by)

    async def add_session_rules(self, sid: str, rules: list[str]) -> list[str]:
        """Add allow rules for this session (as "allow for this session" does; a fan-out answers for
        every sibling with it); return the session's rules now. SessionError for a malformed rule."""
        core = self.core
        view = core.view(sid)
        try:
            parse_rules(list(rules), "allow", "session", None, "session rule")
        except PolicyError as exc:
            raise SessionError(str(exc)) from None
        now = [*view.session_rules, *(r for r in rules if r not in view.session_rules)]
        core.emit(ev.SessionRulesChanged(sid, tuple(now)))
        await core.store.sessions.update(sid, session_rules=now)
        return now

    def check_always_rules(self, rules: Sequence[str]) -> None:
        """Raise SessionError saying why ``rules`` could not be stored as "always allow" now (a
        malformed rule, permission files not trusted); nothing is written. The TUI's rule editor asks
        this before it answers, so the ask stays open instead of running the call once."""
        try:
            self.core.policy.check_always(rules)
        except PolicyError as exc:
            raise SessionError(str(exc)) from None

    def rules_report(self) -> RulesReport:
        """The effective rules and the default mode (``/permissions``)."""
        policy = self.core.policy
        return RulesReport(policy.rules_table(), policy.default_mode.value)

    def decide(self, sid: str, tool: str, arguments: dict[str, Any]) -> Decision:
        """What the rules decide now for session ``sid``'s call of ``tool`` with ``arguments`` (its
        working directory, mode and session rules): a waiting ask the user's new rules allow, the write
        targets of a call. The policy is pure: nothing is asked or recorded."""
        view = self.core.view(sid)
        return self.core.policy.decide(
            tool, arguments, cwd=view.workdir, mode=view.mode, session_rules=tuple(view.session_rules)
        )


async def close_orphan_conflicts(core: SessionsCore) -> list[str]:
    """At start: close the pending conflict rows whose process is gone; return notes."""
    notes = []
    for row in await core.store.approvals.orphaned(os.getpid()):
        if row.kind == "conflict" and await core.store.approvals.close(
            row.id, f"closed after a restart: the process waiting on it (pid {row.pid}) stopped"
        ):
            notes.append(f"conflict {row.id} ({row.summary}) closed: its process (pid {row.pid}) stopped")
    return notes


async def resume_orphans(core: SessionsCore, view: SessionView) -> list[ApprovalRecord]:
    """For a session this process just opened (and holds): continue the turn of the newest approval a
    crash left pending when it can go on, close the others with a note. Returns the rows continued."""
    if view.read_only:
        return []
    orphans = await core.store.approvals.orphaned(os.getpid())
    rows = [r for r in orphans if r.session_id == view.id and r.kind == "approval"]
    if not rows:
        return []
    newest, older = rows[-1], rows[:-1]
    for row in older:
        await _close(core, view, row, "a newer ask of the same session was left pending too")
    why = await _cannot_continue(core, newest)
    if why is not None:
        await _close(core, view, newest, why)
        return []
    await core.store.approvals.adopt(newest.id, newest.turn_id)  # waited on here again (inbox says so)
    core.turn_done[view.id].clear()
    core.scheduler.submit(view.id, RESUME_PROMPT.format(summary=newest.summary), resume=newest)
    core.notes.append(
        f"session {view.name!r}: the pending approval {newest.id} ({newest.summary}) is asked again"
    )
    return [newest]


async def _cannot_continue(core: SessionsCore, row: ApprovalRecord) -> str | None:
    """Why the row's turn cannot go on after the restart, or None when it can."""
    agent = core.agents.get(row.session_id)
    if agent is not None and not agent.RESUMES_ASKS:
        return "the session is run by an external ACP agent, whose turn ended with the process"
    if core.tools.get(str(row.call.get("name") or row.tool)) is None:
        return f"the tool {row.tool} is no longer available"
    turns = await core.store.turns.all(row.session_id)
    if row.turn_id is None or not turns:
        return "its turn is unknown"
    last = turns[-1]
    if last.id != row.turn_id:
        return "the session went on with another turn since"
    if last.status != "interrupted":
        return f"its turn is {last.status}"
    rec = await core.store.sessions.get(row.session_id)
    if rec is None or rec.conversation_id != last.conversation_id:
        return "the session's conversation was cleared since"
    call_id = row.call.get("id")
    for stored in await core.store.messages.load(row.session_id):
        message = stored.message
        answered = message.get("role") == "tool" and message.get("tool_call_id") == call_id
        if answered and stored.outcome not in (None, "interrupted"):
            return f"the call already has a result ({stored.outcome})"
    return None


async def _close(core: SessionsCore, view: SessionView, row: ApprovalRecord, why: str) -> None:
    note = f"closed after a restart: its turn cannot continue ({why})"
    if row.state != "pending":  # answered for a turn that cannot go on: leave it to the pid below
        await core.store.approvals.adopt(row.id, None)  # not an orphan any more
        return
    if await core.store.approvals.close(row.id, note):
        core.emit(ev.Notice(view.id, f"the pending approval {row.id} ({row.summary}) was {note}", "warning"))
