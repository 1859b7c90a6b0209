"""Approval of one tool call: the policy decides; when it says ask, the user is asked through a
``PermissionRequested`` event whose Future the client resolves; every decision is audited in the
store; the answer comes back typed (:class:`Approval`). Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.agent.session import SessionReader
from paragents.models import CallPreview, SessionState, ToolCall

if TYPE_CHECKING:
    from paragents.permissions import Decision, Policy
    from paragents.store import Store
    from paragents.tools.sandbox import SandboxConfig


@dataclass(frozen=True, slots=True)
class Approval:
    """Whether the call may run (``allowed``) and, when not, the text the model is told (``why``)."""

    allowed: bool
    why: str = ""


async def approve(
    *,
    session: SessionReader,
    policy: Policy,
    store: Store,
    emit: ev.EventSink,
    call: ToolCall,
    tool_name: str,
    args: dict[str, Any],
    summary: str,
    sandbox: SandboxConfig | None = None,
    sandboxed: bool | None = None,
    preview: Callable[[], Awaitable[CallPreview | None]] | None = None,
    read_only: bool = False,
) -> Approval:
    """Ask the policy (and the user when it says ask) about ``call``; return the typed answer.
    ``sandboxed``: a command that will run in ``sandbox`` (its auto-allow applies). ``preview``
    computes what the call will do, shown with the ask (only called when the user is asked).
    ``read_only``: an MCP tool its server declares read-only (see ``Policy.decide``)."""
    sid = session.id
    decision = policy.decide(
        tool_name,
        args,
        cwd=session.workdir,
        mode=session.mode,
        session_rules=tuple(session.session_rules),
        sandboxed=bool(sandboxed and sandbox is not None and sandbox.auto_allow),
        read_only=read_only,
    )
    audit: dict[str, Any] = {
        "tool": tool_name,
        "input": args,
        "decision": decision.decision,
        "reason": decision.reason,
        "rule": decision.rule,
        "scope": decision.scope,
    }
    if decision.decision == "allow":
        await store.record_decision(sid, **audit, answered_by="policy", answer="allow")
        return Approval(True)
    if decision.decision == "deny":
        await store.record_decision(sid, **audit, answered_by="policy", answer="deny")
        return Approval(False, f"denied by policy: {decision.reason}")
    shown = await preview() if preview is not None else None
    answer, payload = await _ask(session, emit, call, summary, decision, sandboxed, shown)
    by = "headless" if isinstance(payload, dict) and payload.get("headless") else "user"
    await store.record_decision(sid, **audit, answered_by=by, answer=answer)
    return await _apply_answer(session, policy, store, emit, decision, answer, payload)


async def _ask(
    session: SessionReader,
    emit: ev.EventSink,
    call: ToolCall,
    summary: str,
    decision: Decision,
    sandboxed: bool | None,
    preview: CallPreview | None,
) -> tuple[ev.ApprovalAnswer, Any]:
    """Put the session in WAITING, emit the ask and wait for its Future; return ``(answer, payload)``."""
    sid = session.id
    reply: asyncio.Future[tuple[ev.ApprovalAnswer, Any]] = asyncio.get_running_loop().create_future()
    request_id = uuid.uuid4().hex[:12]
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
            sandboxed,
        )
    )
    try:
        answer, payload = await reply
    except asyncio.CancelledError:
        emit(ev.PermissionResolved(sid, request_id, "cancelled"))
        raise
    state = previous if previous is not SessionState.WAITING else SessionState.RUNNING
    emit(ev.SessionStateChanged(sid, state, ""))
    by = "headless" if isinstance(payload, dict) and payload.get("headless") else "user"
    emit(ev.PermissionResolved(sid, request_id, answer, by))
    return answer, payload


async def _apply_answer(
    session: SessionReader,
    policy: Policy,
    store: Store,
    emit: ev.EventSink,
    decision: Decision,
    answer: ev.ApprovalAnswer,
    payload: Any,
) -> Approval:
    """Turn the user's answer into an Approval (storing session or always rules it asks for)."""
    sid = session.id
    if answer == "allow_once":
        return Approval(True)
    if answer == "allow_session":
        rules = (
            *session.session_rules,
            *(r for r in decision.suggested_rules if r not in session.session_rules),
        )
        emit(ev.SessionRulesChanged(sid, rules))
        await store.update_session(sid, session_rules=list(rules))
        return Approval(True)
    if answer == "allow_always":
        always = (
            list(payload) if isinstance(payload, list | tuple) and payload else list(decision.suggested_rules)
        )
        try:
            policy.remember_always(always)
        except Exception as exc:
            emit(ev.Notice(sid, f"could not save the rule(s) {always}: {exc}; allowed once", "error"))
        return Approval(True)
    if answer == "reject_with_note":
        note = payload.get("note") if isinstance(payload, dict) else payload
        return Approval(False, f"denied by the user with a note: {note}")
    reason = payload.get("reason") if isinstance(payload, dict) else None
    return Approval(False, f"denied by the user{': ' + reason if reason else ''}")


async def ask_server_start(
    session: SessionReader, emit: ev.EventSink, name: str, command_line: str, cwd: str
) -> ev.ApprovalAnswer:
    """Ask whether the project's MCP server ``name`` (from ``.mcp.json``, not trusted yet) may start,
    with its command line shown; return the answer (the pool keeps it, "always" in the local file)."""
    from paragents.permissions import Decision

    call = ToolCall(f"mcp-start-{uuid.uuid4().hex[:8]}", f"mcp__{name}", "{}")
    decision = Decision(
        "ask",
        f"the project's .mcp.json names the MCP server '{name}', which is not trusted yet "
        "(enableAllProjectMcpServers / enabledMcpjsonServers). Allow once or for the session: it starts "
        "for this run; always: remembered in .paragents/permissions.local.json",
        suggested_rules=(f"mcp__{name}",),
    )
    shown = CallPreview("command", command_line, f"start the project MCP server '{name}'", cwd)
    answer, _payload = await _ask(
        session, emit, call, f"start MCP server {name}: {command_line}"[:200], decision, None, shown
    )
    allowed = answer in ("allow_once", "allow_session", "allow_always")
    text = f"MCP server '{name}' may start" if allowed else f"MCP server '{name}' was not started"
    emit(ev.ToolCallFinished(session.id, call, "ok" if allowed else "denied", text))
    return answer
