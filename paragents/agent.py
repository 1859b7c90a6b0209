"""The agent: one per session, kept across turns, holding the conversation.

One turn (``Agent.run_turn``): store the user message, then loop: stream the reply (forwarding
text/reasoning deltas as events), store it, run each tool call through the permission policy
(asking the user through a ``PermissionRequested`` event whose Future the client resolves), send the
results back, until the model stops calling tools or ``max_tool_rounds`` requests were made.

Tool errors, denials and bad arguments go back to the model as ``tool`` messages; the loop never
crashes on them. A stream that fails keeps its partial text (stored, marked incomplete, never sent
back as finished); half-built tool calls never run. Cancellation stores what was complete, answers
every started tool call with a "cancelled" result so the history stays valid, then re-raises.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paragents import events as ev
from paragents.compaction import (
    CompactionError,
    CompactionOutcome,
    CompactionState,
    NothingToCompact,
    build_request,
    compact_agent,
    tool_output_limit,
)
from paragents.models import (
    AssembledReply,
    Message,
    SessionState,
    ToolCall,
    TurnStatus,
    Usage,
    parse_arguments,
    tool_message,
    user_message,
)
from paragents.tokens import estimate_messages_tokens

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.llm import ChatClient
    from paragents.permissions import Policy
    from paragents.store import Store
    from paragents.tools.registry import ToolRegistry

OVERSIZE_FACTOR = 1.5
"""A request whose local token estimate exceeds this many context windows is refused before sending,
when the model's window is configured (``models.NAME.context_window``); the estimate can run high on
some tokenizers, so only clear overflows are stopped locally, and unknown windows are left to the server."""
CANCELLED_RESULT = "cancelled: the user cancelled the turn before this call finished"


def _capped(text: str, limit: int = 1000) -> str:
    """Return an error detail cut to about ``limit`` characters (head and tail kept), so a huge
    argument quoted in an error (a 1 MB path or name from the model) never floods the history."""
    from paragents.tools.output import cap_middle

    return cap_middle(text, limit)


class SessionLike(Protocol):
    """What the agent reads and updates of its session (``paragents.runtime.SessionView``)."""

    id: str
    name: str
    model: str
    mode: str
    workdir: Path
    state: SessionState
    usage: Usage
    context_tokens: int
    context_window: int
    session_rules: list[str]


@dataclass
class TurnResult:
    """How a turn ended: ``status``, readable ``error`` and its ``error_kind`` (None when completed),
    ``messages`` the OpenAI messages the turn added (user first), ``usage`` summed over its requests."""

    status: TurnStatus
    error: str | None = None
    error_kind: str | None = None
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


Preflight = Callable[[str, ToolCall, dict[str, Any]], Awaitable[str | None]]
"""Optional hook run before a tool call that passed permissions: returns None to go on, or a
readable reason to skip the call (the conflict checker plugs in here)."""


class Agent:
    """Runs turns for one session. Holds ``history``: the provider-valid messages of the current
    conversation (no system prompt; incomplete replies excluded).

    Takes the session (mutable view shared with the runtime), the chat client, the tool registry, the
    policy, the store, the runtime config, an event sink and a callable that builds the system prompt."""

    def __init__(
        self,
        *,
        session: SessionLike,
        client: ChatClient,
        tools: ToolRegistry,
        policy: Policy,
        store: Store,
        config: RuntimeConfig,
        emit: ev.EventSink,
        system_prompt: Callable[[], str],
        history: list[Message] | None = None,
        preflight: Preflight | None = None,
        on_read: Callable[[Path, str], None] | None = None,
        on_write: Callable[[Path, str], None] | None = None,
    ) -> None:
        self.session = session
        self.client = client
        self.tools = tools
        self.policy = policy
        self.store = store
        self.config = config
        self.emit = emit
        self.system_prompt = system_prompt
        self.history: list[Message] = list(history or [])
        self.preflight = preflight
        self.on_read = on_read
        """Called with (resolved path, sha256 hex) after each successful read_file (stale-read checks)."""
        self.on_write = on_write
        """Called with (resolved path, sha256 hex) after each successful write_file/edit_file."""
        self._turn_id: int | None = None
        self.compaction: CompactionState | None = None
        """The compaction in force (a summary standing for the oldest history messages), or None."""
        self._compact_lock = asyncio.Lock()
        self._compact_waiters: list[tuple[str | None, asyncio.Future[CompactionOutcome]]] = []

    @property
    def turn_id(self) -> int | None:
        """Store id of the running turn, or None between turns."""
        return self._turn_id

    # ------------------------------------------------------------------------------------------------
    def request_messages(self) -> list[Message]:
        """Return the full message list of the next request: system prompt, then the compaction
        summary (when one is in force) in place of the messages it covers, then the rest of the
        history; tool outputs longer than the window allows are trimmed (see paragents.compaction)."""
        limit = tool_output_limit(self.session.context_window)
        return build_request(self.system_prompt(), self.history, self.compaction, limit)

    async def compact(self, focus: str | None = None, *, auto: bool = False) -> CompactionOutcome:
        """Compact the history now (see :func:`paragents.compaction.compact_agent`); call it only when
        no tool call is running. Never raises for a failed compaction: it emits a Notice saying why,
        leaves the history and the compaction in force unchanged, and returns ``ok=False`` (``auto``:
        when there is nothing worth compacting, returns quietly without a Notice)."""
        async with self._compact_lock:
            try:
                return await compact_agent(self, focus, auto=auto)
            except NothingToCompact as exc:
                if auto:
                    return CompactionOutcome(False, str(exc))
                self.emit(ev.Notice(self.session.id, f"not compacted: {exc}", "info"))
                return CompactionOutcome(False, str(exc))
            except CompactionError as exc:
                text = f"compaction failed: {exc}; the history is unchanged"
                self.emit(ev.Notice(self.session.id, text, "error"))
                return CompactionOutcome(False, text)

    def request_compaction(self, focus: str | None = None) -> asyncio.Future[CompactionOutcome]:
        """Ask for a compaction at the next safe point of the running turn (before its next request,
        or when it ends), never while a tool call is in flight; return a Future of the outcome."""
        future: asyncio.Future[CompactionOutcome] = asyncio.get_running_loop().create_future()
        self._compact_waiters.append((focus, future))
        return future

    async def run_pending_compactions(self) -> None:
        """Run the compactions asked with :meth:`request_compaction` (no tool call may be running)."""
        while self._compact_waiters:
            focus, future = self._compact_waiters.pop(0)
            outcome = await self.compact(focus)
            if not future.done():
                future.set_result(outcome)

    async def _before_request(self) -> None:
        """Between requests of a turn (every tool call answered): run asked-for compactions, then
        compact automatically when the request would reach ``compact_threshold`` of the window."""
        await self.run_pending_compactions()
        window = self.session.context_window
        size = estimate_messages_tokens(self.request_messages(), self.tool_specs())
        if window > 0 and size >= self.config.compact_threshold * window:
            await self.compact(None, auto=True)

    def tool_specs(self) -> list[dict[str, Any]]:
        """Return the tool specs sent with each request ([] when the model is set to chat without tools)."""
        if not self.config.model_settings(self.session.model).tools:
            return []
        return self.tools.specs()

    def _set_state(self, state: SessionState, detail: str = "") -> None:
        self.session.state = state
        self.emit(ev.SessionStateChanged(self.session.id, state, detail))

    async def _append(self, message: Message, added: list[Message]) -> None:
        await self.store.append_message(self.session.id, message, turn_id=self._turn_id)
        self.history.append(message)
        added.append(message)
        self.emit(ev.MessageAdded(self.session.id, message))

    async def run_turn(self, prompt: str) -> TurnResult:
        """Run one turn for the user text ``prompt``; return how it ended.

        Never raises for endpoint or tool failures (they end the turn as failed, with the error);
        re-raises asyncio.CancelledError after recording the turn as cancelled."""
        sid = self.session.id
        added: list[Message] = []
        total = Usage()
        self._turn_id = await self.store.start_turn(sid, prompt)
        self._set_state(SessionState.RUNNING)
        self.emit(ev.TurnStarted(sid, prompt))
        pending_calls: list[ToolCall] = []
        partial = _Partial()
        try:
            await self._append(user_message(prompt), added)
            for _round in range(self.config.max_tool_rounds):
                partial = _Partial()
                await self._before_request()
                reply = await self._stream(partial)
                if reply is None:
                    return await self._finish(TurnStatus.FAILED, added, total, partial.error, partial.kind)
                await self._append(reply.to_message(), added)
                total = total + await self._account(reply)
                partial = _Partial()  # accounted: a cancel from here on has no stream to keep
                if not reply.tool_calls and not reply.content:
                    self.emit(ev.Notice(sid, "the model returned an empty reply", "warning"))
                if not reply.tool_calls:
                    return await self._finish(TurnStatus.COMPLETED, added, total)
                pending_calls = list(reply.tool_calls)
                while pending_calls:
                    call = pending_calls[0]
                    content = await self._run_call(call, reply.finish_reason)
                    await self._append(tool_message(call.id, content), added)
                    pending_calls.pop(0)
            self.emit(
                ev.Notice(
                    sid,
                    f"stopped after {self.config.max_tool_rounds} model requests (max_tool_rounds); "
                    "send another prompt to continue",
                    "warning",
                )
            )
            return await self._finish(TurnStatus.COMPLETED, added, total)
        except asyncio.CancelledError:
            await asyncio.shield(self._on_cancel(partial, pending_calls, added, total))
            raise

    async def _on_cancel(
        self, partial: _Partial, pending: list[ToolCall], added: list[Message], total: Usage
    ) -> None:
        sid = self.session.id
        if partial.text or partial.reasoning:
            msg: Message = {"role": "assistant", "content": partial.text}
            if partial.reasoning:
                msg["reasoning_content"] = partial.reasoning
            await self.store.append_message(sid, msg, turn_id=self._turn_id, complete=False)
            self.emit(ev.MessageAdded(sid, {**msg, "incomplete": True}))
            self.emit(ev.Notice(sid, "cancelled: the partial reply was kept (marked incomplete)", "warning"))
        if partial.sent:  # the request was sent: count its tokens (estimated; no usage came back)
            reply: Message = {"role": "assistant", "content": partial.text}
            prompt_est = estimate_messages_tokens(self.request_messages(), self.tool_specs())
            completion_est = estimate_messages_tokens([reply]) if partial.text or partial.reasoning else 0
            usage = Usage(prompt_est, completion_est, prompt_est + completion_est)
            total = total + await self._record_usage(usage, prompt_est + completion_est, estimated=True)
        for call in pending:
            await self._append(tool_message(call.id, CANCELLED_RESULT), added)
            self.emit(ev.ToolCallFinished(sid, call, "cancelled", CANCELLED_RESULT))
        await self._finish(TurnStatus.CANCELLED, added, total, "cancelled by the user", "cancelled")

    async def _finish(
        self,
        status: TurnStatus,
        added: list[Message],
        total: Usage,
        error: str | None = None,
        kind: str | None = None,
    ) -> TurnResult:
        sid = self.session.id
        if self._turn_id is not None:
            await self.store.finish_turn(self._turn_id, status.value, error)
        self._turn_id = None
        state = SessionState.FAILED if status is TurnStatus.FAILED else SessionState.IDLE
        self._set_state(state, error or "")
        self.emit(ev.TurnFinished(sid, status.value, error, kind))
        return TurnResult(status=status, error=error, error_kind=kind, messages=added, usage=total)

    # -- streaming ------------------------------------------------------------------------------------
    async def _stream(self, partial: _Partial) -> AssembledReply | None:
        from paragents.llm import LLMError

        sid = self.session.id

        def on_delta(delta: Any) -> None:
            kind = getattr(delta, "kind", None)
            text = getattr(delta, "text", None)
            if not text:
                return
            if kind == "reasoning":
                partial.reasoning += text
                self.emit(ev.ReasoningDelta(sid, text))
            elif kind == "text":
                partial.text += text
                self.emit(ev.TextDelta(sid, text))

        def on_retry(reason: str, delay: float, attempt: int) -> None:
            self.emit(ev.StreamRetry(sid, reason, delay, attempt))
            self.emit(ev.Notice(sid, f"{reason}, retrying in {delay:.0f} s (attempt {attempt})", "warning"))

        specs = self.tool_specs()
        messages = self.request_messages()
        estimate = estimate_messages_tokens(messages, specs)
        window = self.session.context_window
        explicit = self.session.model in self.config.models
        if explicit and estimate > OVERSIZE_FACTOR * window:
            partial.kind = "context_length"
            partial.error = (
                f"this request is about {estimate:,} tokens, far more than {self.session.model}'s context "
                f"window ({window:,} tokens), so it was not sent: shorten the prompt, /compact or /clear "
                f"(if the window is larger, set models.{self.session.model}.context_window "
                "in runtime_config.json)"
            )
            return None
        partial.sent = True
        try:
            return await self.client.stream_chat(
                model=self.session.model,
                messages=messages,
                tools=specs or None,
                on_delta=on_delta,
                on_retry=on_retry,
                session_label=self.session.name,
            )
        except LLMError as exc:
            got = exc.partial
            text = partial.text or (got.content if got and got.content else "")
            reasoning = partial.reasoning or (got.reasoning if got and got.reasoning else "")
            if text or reasoning:
                msg: Message = {"role": "assistant", "content": text}
                if reasoning:
                    msg["reasoning_content"] = reasoning
                await self.store.append_message(sid, msg, turn_id=self._turn_id, complete=False)
                self.emit(ev.MessageAdded(sid, {**msg, "incomplete": True}))
                self.emit(
                    ev.Notice(sid, "the reply broke off: partial text kept and marked incomplete", "warning")
                )
            partial.error = exc.message
            if exc.kind == "protocol" and specs and not (text or reasoning):
                partial.error += (
                    f" (the server sent no reply to a request with tools; if {self.session.model} cannot "
                    'call tools, set "tools": false for it under "models" in runtime_config.json)'
                )
            partial.kind = exc.kind
            return None

    async def _account(self, reply: AssembledReply) -> Usage:
        """Record usage (the server's, else a local estimate) and the context size of the next request;
        return the usage counted for this request (tokens)."""
        estimated = reply.usage is None
        if reply.usage is not None:
            usage = reply.usage
            context = usage.total_tokens or (usage.prompt_tokens + usage.completion_tokens)
        else:
            prompt_est = estimate_messages_tokens(self.request_messages()[:-1], self.tool_specs())
            completion_est = estimate_messages_tokens([self.history[-1]]) if self.history else 0
            usage = Usage(prompt_est, completion_est, prompt_est + completion_est)
            context = estimate_messages_tokens(self.request_messages(), self.tool_specs())
        return await self._record_usage(usage, context, estimated=estimated)

    async def _record_usage(self, usage: Usage, context: int, *, estimated: bool) -> Usage:
        """Add ``usage`` to the session (store and view), set the next request's context size, emit."""
        sid = self.session.id
        self.session.usage = self.session.usage + usage
        self.session.context_tokens = context
        await self.store.add_usage(sid, self._turn_id, self.session.model, usage, estimated=estimated)
        self.emit(ev.UsageUpdated(sid, self.session.usage, context, self.session.context_window))
        return usage

    # -- tools -----------------------------------------------------------------------------------------
    async def _run_call(self, call: ToolCall, finish_reason: str | None) -> str:
        """Check, ask, run one tool call; return the text of its tool message (never raises but Cancelled)."""
        sid = self.session.id
        tool = self.tools.get(call.name)
        if tool is None:
            from paragents.tools.registry import unknown_tool_message

            msg = unknown_tool_message(call.name)
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg
        try:
            args = parse_arguments(call.arguments)
        except ValueError as exc:
            msg = f"error: {_capped(str(exc))}; the call was not run"
            if finish_reason == "length":
                msg += " (the reply was truncated: finish_reason=length); send the call again, complete"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg
        try:
            args = tool.validate(args)
        except ValueError as exc:
            msg = f"error: bad arguments for {call.name}: {_capped(str(exc))}"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg
        summary = tool.summarize(args)
        allowed, why = await self._permit(call, tool.name, args, summary)
        if not allowed:
            self.emit(ev.ToolCallFinished(sid, call, "denied", why))
            return why
        if self.preflight is not None:
            skip = await self.preflight(sid, call, args)
            if skip is not None:
                self.emit(ev.ToolCallFinished(sid, call, "skipped", skip))
                return skip
        self.emit(ev.ToolCallStarted(sid, call, summary))
        from paragents.tools.base import ToolContext

        ctx = ToolContext(
            workdir=self.session.workdir,
            session_id=sid,
            command_timeout=self.config.command_timeout,
            max_output_chars=self.config.max_output_chars,
            on_read=self.on_read,
            on_write=self.on_write,
        )
        try:
            result = await tool.run(args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not kill the loop
            msg = f"error: {call.name} failed unexpectedly: {_capped(f'{type(exc).__name__}: {exc}')}"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg
        self.emit(
            ev.ToolCallFinished(sid, call, "error" if result.is_error else "ok", result.content, result.diff)
        )
        return result.content

    async def _permit(
        self, call: ToolCall, tool_name: str, args: dict[str, Any], summary: str
    ) -> tuple[bool, str]:
        """Ask the policy (and the user when it says ask); return (allowed, denial text for the model)."""
        sid = self.session.id
        decision = self.policy.decide(
            tool_name,
            args,
            cwd=self.session.workdir,
            mode=self.session.mode,
            session_rules=tuple(self.session.session_rules),
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
            await self.store.record_decision(sid, **audit, answered_by="policy", answer="allow")
            return True, ""
        if decision.decision == "deny":
            await self.store.record_decision(sid, **audit, answered_by="policy", answer="deny")
            return False, f"denied by policy: {decision.reason}"
        loop = asyncio.get_running_loop()
        reply: asyncio.Future[tuple[ev.ApprovalAnswer, Any]] = loop.create_future()
        request_id = uuid.uuid4().hex[:12]
        previous = self.session.state
        self._set_state(SessionState.WAITING, summary)
        self.emit(
            ev.PermissionRequested(
                sid, request_id, call, summary, decision.reason, tuple(decision.suggested_rules), reply
            )
        )
        try:
            answer, payload = await reply
        except asyncio.CancelledError:
            self.emit(ev.PermissionResolved(sid, request_id, "cancelled"))
            raise
        self._set_state(previous if previous is not SessionState.WAITING else SessionState.RUNNING)
        by = "headless" if isinstance(payload, dict) and payload.get("headless") else "user"
        self.emit(ev.PermissionResolved(sid, request_id, answer, by))
        await self.store.record_decision(sid, **audit, answered_by=by, answer=answer)
        if answer == "allow_once":
            return True, ""
        if answer == "allow_session":
            rules = [r for r in decision.suggested_rules if r not in self.session.session_rules]
            self.session.session_rules.extend(rules)
            await self.store.update_session(sid, session_rules=list(self.session.session_rules))
            return True, ""
        if answer == "allow_always":
            rules = (
                list(payload)
                if isinstance(payload, list | tuple) and payload
                else list(decision.suggested_rules)
            )
            try:
                self.policy.remember_always(rules)
            except Exception as exc:
                self.emit(ev.Notice(sid, f"could not save the rule(s) {rules}: {exc}; allowed once", "error"))
            return True, ""
        if answer == "reject_with_note":
            note = payload.get("note") if isinstance(payload, dict) else payload
            return False, f"denied by the user with a note: {note}"
        reason = payload.get("reason") if isinstance(payload, dict) else None
        return False, f"denied by the user{': ' + reason if reason else ''}"


@dataclass
class _Partial:
    """Text streamed so far in the current request (kept when the stream fails or is cancelled)."""

    text: str = ""
    reasoning: str = ""
    error: str | None = None
    kind: str | None = None
    sent: bool = False
    """True once the request was handed to the client (its tokens count even when it is cancelled)."""
