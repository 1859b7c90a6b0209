"""Approval of one tool call: the policy decides; when it says ask, the ask becomes a pending row of the
store's ``approvals`` table and a ``PermissionRequested`` event. The engine awaits the row: the event's
Future is this process's client answering (its answer is written to the row, first answer wins), and
any other process answers the row itself (``paragents approve``, the HTTP API). Every decision is
audited in the store; the answer comes back typed (:class:`Approval`). Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from paragents import events as ev
from paragents.agent.session import SessionReader
from paragents.models import CallPreview, SessionState, ToolCall
from paragents.permissions import Decision
from paragents.permissions.host_paths import OWN_FILES
from paragents.store.records import StoreError
from paragents.store.records.approvals import APPROVAL_ANSWERS

if TYPE_CHECKING:
    from paragents.permissions import Policy
    from paragents.store.approvals import ApprovalsRepo
    from paragents.store.audit import AuditRepo
    from paragents.store.records import ApprovalRecord
    from paragents.store.sessions import SessionsRepo
    from paragents.tools.sandbox import SandboxConfig


class ApprovalStore(Protocol):
    """The store's tables an ask uses: its row, the audit, the session's rules
    (``paragents.store.Store`` is one)."""

    @property
    def approvals(self) -> ApprovalsRepo: ...
    @property
    def audit(self) -> AuditRepo: ...
    @property
    def sessions(self) -> SessionsRepo: ...


@dataclass(frozen=True, slots=True)
class Approval:
    """Whether the call may run (``allowed``) and, when not, the text the model is told (``why``);
    ``answer``: the user's answer when one was asked (None: a rule or the mode decided)."""

    allowed: bool
    why: str = ""
    answer: ev.PermissionAnswer | None = None


@dataclass(frozen=True, slots=True)
class ApprovalContext:
    """One tool call to approve and where it is approved (what :func:`approve` reads).

    - ``session`` (read only), ``policy``, ``store`` (the approvals row, the audit) and ``emit`` (the
      ask and its answer as events): the session's.
    - ``call``: the tool call; ``tool_name`` and ``args`` what the policy decides on (an external
      agent's call is mapped onto a rule family); ``summary`` its one-line description.
    - ``sandbox`` / ``sandboxed``: a command that will run in ``sandbox`` (its auto-allow applies).
    - ``preview``: computes what the call will do, shown with the ask (called only when asking).
    - ``turn_id``: the turn the ask belongs to; ``resume``: the row a crashed process left pending
      for this call (asked again under the same id, or its answer given meanwhile is used).
    - ``read_only``: an MCP tool its server declares read-only, ``schema`` its inputSchema (the paths
      it names are checked; see ``Policy.decide``).
    - ``agent_options``: an external agent's own options, shown with the ask (``PermissionRequested``).
    """

    session: SessionReader
    policy: Policy
    store: ApprovalStore
    emit: ev.EventSink
    call: ToolCall
    tool_name: str
    args: dict[str, Any]
    summary: str
    sandbox: SandboxConfig | None = None
    sandboxed: bool | None = None
    preview: Callable[[], Awaitable[CallPreview | None]] | None = None
    turn_id: int | None = None
    resume: ApprovalRecord | None = None
    read_only: bool = False
    agent_options: tuple[tuple[str, str], ...] = ()
    schema: dict[str, Any] | None = None


async def approve(ctx: ApprovalContext) -> Approval:
    """Ask the policy (and the user when it says ask) about ``ctx.call``; return the typed answer.
    The ask is a row of the store's ``approvals`` table, answered once by this process's client or
    any other process (see :class:`ApprovalContext` for the fields)."""
    session, store, resume = ctx.session, ctx.store, ctx.resume
    sid = session.id
    decision = ctx.policy.decide(
        ctx.tool_name,
        ctx.args,
        cwd=session.workdir,
        mode=session.mode,
        session_rules=tuple(session.session_rules),
        sandboxed=bool(ctx.sandboxed and ctx.sandbox is not None and ctx.sandbox.auto_allow),
        read_only=ctx.read_only,
        schema=ctx.schema,
    )
    audit: dict[str, Any] = {
        "tool": ctx.tool_name,
        "input": ctx.args,
        "decision": decision.decision,
        "reason": decision.reason,
        "rule": decision.rule,
        "scope": decision.scope,
    }
    if resume is not None and decision.decision != "ask":
        await _close_quietly(
            store, resume.id, f"decided by the policy after the restart: {decision.decision}"
        )
    if decision.decision == "allow":
        await store.audit.record(sid, **audit, answered_by="policy", answer="allow")
        return Approval(True)
    if decision.decision == "deny":
        await store.audit.record(sid, **audit, answered_by="policy", answer="deny")
        return Approval(False, f"denied by policy: {decision.reason}")
    if resume is not None and resume.state != "pending":  # answered while this process was down
        answer = answer_of(resume)
        said = f"{ctx.summary}: {resume.describe_answer()} (while paragents was stopped)"
        ctx.emit(ev.Notice(sid, said, "info"))
        by = resume.answered_by or resume.state
    else:
        shown = await ctx.preview() if ctx.preview is not None else None
        answer, by = await _ask(ctx, decision, shown)
    audit_by = "headless" if by == "headless" else "user"
    await store.audit.record(sid, **audit, answered_by=audit_by, answer=answer.kind, answerer=by)
    return await _apply_answer(ctx, decision, answer)


WITHHELD_DENY = "by Read deny rules"
WITHHELD_ASK = (
    "because reading them asks (an ask rule, a credential place, or outside the working directories)"
)
WITHHELD_OWN = "because they are paragents' own files (its configuration and state)"


def read_filter(
    policy: Policy, session: SessionReader, extra_dirs: Sequence[Path] = ()
) -> Callable[[Path, Path], str | None]:
    """The ``ToolContext.read_check`` of ``grep``/``glob``/``list_dir``: each path they found below the
    searched root goes through the same Read decision as ``read_file`` (in the session's mode, with its
    session rules; deny rules hold in every mode, bypassPermissions too). Withheld: what a deny rule
    hides; what an ask rule covers; and, below a root that needed no ask, what resolves outside the
    working directories (a symlink out). Returns the reason a path is withheld, or None."""
    roots: dict[Path, bool] = {}

    def decide(path: Path) -> Decision:
        return policy.decide(
            "read_file",
            {"path": str(path)},
            cwd=session.workdir,
            mode=session.mode,
            session_rules=tuple(session.session_rules),
            extra_dirs=extra_dirs,
        )

    def check(root: Path, path: Path) -> str | None:
        decision = decide(path)
        if decision.decision == "deny":
            return WITHHELD_OWN if OWN_FILES in decision.reason else WITHHELD_DENY
        if decision.decision == "ask":
            if decision.rule is not None:
                return WITHHELD_ASK
            if root not in roots:
                roots[root] = decide(root).decision == "allow"
            if roots[root]:
                return WITHHELD_ASK
        return None

    return check


PREVIEW_CHARS = 20000
"""The preview kept in an approval's row is cut to this many characters."""


def preview_text(preview: CallPreview | None) -> str:
    """The plain text of a preview kept in the approval's row (the command, the diff, its facts)."""
    if preview is None:
        return ""
    text = "\n".join(p for p in (preview.text, preview.detail, preview.problem) if p)
    return text[:PREVIEW_CHARS]


def answer_of(row: ApprovalRecord) -> ev.PermissionAnswer:
    """The answer an answered (or expired, closed) row stands for, as a client's Future would carry
    it: allow_always carries the chosen rules, reject_with_note the note; a row that ended without an
    answer is a rejection saying why."""
    if row.state != "answered" or row.answer not in APPROVAL_ANSWERS:
        why = "the ask expired with no answer" if row.state == "expired" else (row.note or "no answer")
        return ev.PermissionAnswer("reject_once", note=why)
    kind = cast("ev.ApprovalAnswer", row.answer)
    if kind == "allow_always":
        return ev.PermissionAnswer(kind, rules=tuple(row.rules))
    if kind == "reject_with_note":
        return ev.PermissionAnswer(kind, note=row.note or "")
    if kind == "reject_once" and row.note:
        return ev.PermissionAnswer(kind, note=row.note, headless=row.answered_by == "headless")
    return ev.PermissionAnswer(kind)


async def _await_row(
    store: ApprovalStore,
    request_id: str,
    reply: asyncio.Future[ev.PermissionAnswer],
    emit: ev.EventSink,
    sid: str,
) -> ApprovalRecord:
    """Wait for the row to be answered: by this process's client (the Future: its answer is written to
    the row, which takes only the first answer) or by any other process (the row). Returns the row."""
    waiter = asyncio.ensure_future(store.approvals.wait(request_id))
    try:
        either: set[asyncio.Future[Any]] = {reply, waiter}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if waiter.done():
            row = waiter.result()
            if not reply.done():
                reply.set_result(answer_of(row))  # the client's bar is answered: it goes away
            elif not reply.cancelled() and reply.result().kind != row.answer:  # both at once: the row won
                emit(
                    ev.Notice(sid, f"your answer was not taken: answered {row.describe_answer()}", "warning")
                )
            return row
        answer = reply.result()
        note = (answer.note or "") if answer.kind == "reject_with_note" else (answer.note or None)
        rules = list(answer.rules) or None
        result = await store.approvals.answer(request_id, answer.kind, answer.answered_by, note, rules=rules)
        if not result.accepted:
            emit(ev.Notice(sid, f"your answer was not taken: {result.message}", "warning"))
        assert result.approval is not None
        return result.approval
    finally:
        if not waiter.done():
            waiter.cancel()


async def _ask(
    ctx: ApprovalContext, decision: Decision, preview: CallPreview | None
) -> tuple[ev.PermissionAnswer, str]:
    """Put the session in WAITING, record the ask as a pending row (or take over ``ctx.resume``'s row
    after a restart), emit it with ``preview`` and wait for the row's answer; return ``(answer,
    answered_by)``."""
    session, store, emit, call, summary = ctx.session, ctx.store, ctx.emit, ctx.call, ctx.summary
    resume, turn_id = ctx.resume, ctx.turn_id
    sid = session.id
    reply: asyncio.Future[ev.PermissionAnswer] = asyncio.get_running_loop().create_future()
    if resume is not None:
        request_id = resume.id
        await store.approvals.adopt(request_id, turn_id)
    else:
        request_id = uuid.uuid4().hex[:12]
        await store.approvals.add(
            request_id,
            sid,
            kind="approval",
            tool=call.name,
            summary=summary,
            call={"id": call.id, "name": call.name, "arguments": call.arguments},
            turn_id=turn_id,
            reason=decision.reason,
            preview=preview_text(preview),
            rules=tuple(decision.suggested_rules),
        )
    previous = session.state
    emit(ev.SessionStateChanged(sid, SessionState.WAITING, summary))
    emit(
        ev.PermissionRequested(
            sid,
            request_id,
            call,
            summary,
            decision.reason,
            tuple(decision.suggested_rules),
            reply,
            preview,
            decision.rule,
            decision.scope,
            ctx.sandboxed,
            ctx.agent_options,
        )
    )
    try:
        row = await _await_row(store, request_id, reply, emit, sid)
    except asyncio.CancelledError:
        await asyncio.shield(_close_quietly(store, request_id, "the turn was cancelled"))
        emit(ev.PermissionResolved(sid, request_id, "cancelled"))
        raise
    answer = answer_of(row)
    state = previous if previous is not SessionState.WAITING else SessionState.RUNNING
    emit(ev.SessionStateChanged(sid, state, ""))
    by = row.answered_by or row.state
    emit(ev.PermissionResolved(sid, request_id, answer.kind, by))
    return answer, by


async def _close_quietly(store: ApprovalStore, request_id: str, note: str) -> None:
    with contextlib.suppress(StoreError):
        await store.approvals.close(request_id, note)


async def _apply_answer(ctx: ApprovalContext, decision: Decision, answer: ev.PermissionAnswer) -> Approval:
    """Turn the user's answer into an Approval (storing session or always rules it asks for)."""
    session, emit = ctx.session, ctx.emit
    sid = session.id
    kind = answer.kind
    if kind == "allow_once":
        return Approval(True, answer=answer)
    if kind == "allow_session":
        rules = (
            *session.session_rules,
            *(r for r in decision.suggested_rules if r not in session.session_rules),
        )
        emit(ev.SessionRulesChanged(sid, rules))
        await ctx.store.sessions.update(sid, session_rules=list(rules))
        return Approval(True, answer=answer)
    if kind == "allow_always":
        always = list(answer.rules) or list(decision.suggested_rules)
        try:
            ctx.policy.remember_always(always)
        except Exception as exc:
            emit(ev.Notice(sid, f"could not save the rule(s) {always}: {exc}; allowed once", "error"))
        return Approval(True, answer=answer)
    if kind == "reject_with_note":
        return Approval(False, f"denied by the user with a note: {answer.note or ''}", answer)
    reason = answer.note
    if answer.headless:  # refused by a headless run: nobody answered
        return Approval(False, f"denied: {reason or 'no terminal to ask'} (nobody answered)", answer)
    return Approval(False, f"denied by the user{': ' + reason if reason else ''}", answer)


async def ask_server_start(
    session: SessionReader,
    policy: Policy,
    store: ApprovalStore,
    emit: ev.EventSink,
    name: str,
    command_line: str,
    cwd: str,
    turn_id: int | None = None,
) -> ev.ApprovalAnswer:
    """Ask whether the project's MCP server ``name`` (from ``.mcp.json``, not trusted yet) may start,
    with its command line shown; return the answer (the pool keeps it, "always" in the local file)."""
    call = ToolCall(f"mcp-start-{uuid.uuid4().hex[:8]}", f"mcp__{name}", "{}")
    decision = Decision(
        "ask",
        f"the project's .mcp.json names the MCP server '{name}', which is not trusted yet (new, or "
        "changed since you trusted it). Allow once or for the session: it starts for this run; always: "
        "remembered in your trust records (outside the project) until its entry changes",
        suggested_rules=(f"mcp__{name}",),
    )
    shown = CallPreview("command", command_line, f"start the project MCP server '{name}'", cwd)
    summary = f"start MCP server {name}: {command_line}"[:200]
    ctx = ApprovalContext(session, policy, store, emit, call, call.name, {}, summary, turn_id=turn_id)
    answer, _by = await _ask(ctx, decision, shown)
    allowed = answer.kind in ("allow_once", "allow_session", "allow_always")
    text = f"MCP server '{name}' may start" if allowed else f"MCP server '{name}' was not started"
    emit(ev.ToolCallFinished(session.id, call, "ok" if allowed else "denied", text))
    return answer.kind
