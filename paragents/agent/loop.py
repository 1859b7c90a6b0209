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
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from paragents import events as ev
from paragents.agent.approval import approve, read_filter
from paragents.agent.budget import Breach, BudgetMeter
from paragents.agent.compaction import (
    CompactionError,
    CompactionOutcome,
    CompactionState,
    NothingToCompact,
    build_request,
    first_task,
    load_compaction,
    summarize,
    tool_output_limit,
    upto_message_id,
)
from paragents.agent.loop_guard import LoopGuard
from paragents.agent.question import question_of
from paragents.agent.session import SessionReader
from paragents.agent.spend import Spend, request_cost
from paragents.agent.tokens import counted_usage, estimate_messages_tokens
from paragents.models import (
    AssembledReply,
    CallPreview,
    Message,
    SessionState,
    ToolCall,
    TurnResult,
    TurnStatus,
    Usage,
    parse_arguments,
    tool_message,
    user_message,
)

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.llm import ChatClient
    from paragents.mcp import SessionMcp
    from paragents.permissions import Policy
    from paragents.store import ApprovalRecord, Store
    from paragents.tools.execution import Execution
    from paragents.tools.registry import ToolRegistry
    from paragents.tools.sandbox import SandboxConfig, SandboxStatus

OVERSIZE_FACTOR = 1.5
"""A request whose local token estimate exceeds this many context windows is refused before sending,
when the model's window is configured (``models.NAME.context_window``); the estimate can run high on
some tokenizers, so only clear overflows are stopped locally, and unknown windows are left to the server."""
CANCELLED_RESULT = "cancelled: the user cancelled the turn before this call finished"
BUDGET_KIND = "budget"
"""``error_kind`` of a turn stopped at a budget pause ("stop"); ``paragents run`` exits with 7."""
LOOP_KIND = "loop"
"""``error_kind`` of a turn stopped at a loop-guard pause ("stop"); ``paragents run`` exits with 7."""
WRITE_TOOLS = frozenset({"write_file", "edit_file"})
"""Tools whose successful call changed a file (the loop guard's "no change" test)."""
COMMAND_TOOLS = frozenset({"run_command"})
"""Tools after which the loop guard compares the working tree's fingerprint (a command may write)."""
STORE_KIND = "store"
"""``error_kind`` of a turn stopped because the store could not be written (or refused a stale write)."""


def _capped(text: str, limit: int = 1000) -> str:
    """Return an error detail cut to about ``limit`` characters (head and tail kept), so a huge
    argument quoted in an error (a 1 MB path or name from the model) never floods the history."""
    from paragents.tools.output import cap_middle

    return cap_middle(text, limit)


def _partial_message(text: str, reasoning: str) -> Message | None:
    """Return the assistant message holding a reply's ``text``/``reasoning`` so far, or None when empty."""
    if not (text or reasoning):
        return None
    msg: Message = {"role": "assistant", "content": text}
    if reasoning:
        msg["reasoning_content"] = reasoning
    return msg


Preflight = Callable[[str, ToolCall, dict[str, Any]], Awaitable[str | None]]
"""Optional hook run before a tool call that passed permissions: returns None to go on, or a
readable reason to skip the call (the conflict checker plugs in here)."""


class Agent:
    """Runs turns for one session. Holds ``history``: the provider-valid messages of the current
    conversation (no system prompt; incomplete replies excluded).

    Takes the session (read only: its state changes only through the events the agent emits), the
    chat client, the tool registry, the policy, the store, the runtime config, an event sink and a
    callable that builds the system prompt."""

    RESUMES_ASKS = True
    """Whether an ask a crash left pending can be asked again in a new turn (``run_turn(resume=...)``)."""

    def __init__(
        self,
        *,
        session: SessionReader,
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
        budget: BudgetMeter | None = None,
        mcp: SessionMcp | None = None,
        execution: Callable[[], Execution | None] | None = None,
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
        self.budget = budget
        """Checks the budgets before each request (None: no budgets, e.g. in unit tests)."""
        self.mcp = mcp
        """This session's MCP tools from the shared pool (None: no MCP), prepared before each request."""
        self.execution = execution
        """Where this session's tool calls run when not on this machine (its lane's container or Pod:
        paragents.tools.execution), looked up per call; None (or returning None): here."""
        guard = config.loop_guard
        self.loop_guard = LoopGuard(guard.identical_calls, guard.idle_requests)
        self._turn_id: int | None = None
        self.compaction: CompactionState | None = None
        """The compaction in force (a summary standing for the oldest history messages), or None."""
        self._compact_lock = asyncio.Lock()
        self._compact_waiters: list[tuple[str | None, asyncio.Future[CompactionOutcome]]] = []
        self._sandbox_warned = False
        """True once the "sandbox unavailable, running unconfined" warning was shown in this session."""
        self.revision: int | None = None
        """The store revision of the session's history that ``history`` is up to date with; None
        (never checked) until :meth:`mark_current`. Writes are refused by the store when it moved."""
        self.last_message_id = 0
        """The newest stored message id ``history`` includes (messages after it are new to this copy)."""

    async def mark_current(self) -> None:
        """Record that ``history`` is up to date with the store now (after loading it)."""
        self.revision, self.last_message_id = await self.store.messages.history_mark(self.session.id)

    async def sync(self) -> int:
        """Reload the history when another process wrote to this session since it was loaded
        (its revision moved): the history, the compaction in force and the messages shown (new
        ones are emitted as MessageAdded, in store order). Returns how many new messages it found."""
        if self.revision is None:
            return 0
        sid = self.session.id
        found = 0
        for _attempt in range(3):
            revision, _newest = await self.store.messages.history_mark(sid)
            if revision == self.revision:
                break
            stored, history = await self.store.messages.load_for_display_and_history(sid)
            self.history = history
            self.compaction = await load_compaction(self.store, sid, history)
            new = [m for m in stored if m.id > self.last_message_id]
            for item in new:
                self.emit(ev.MessageAdded(sid, item.for_display()))
            found += len(new)
            self.last_message_id = max([self.last_message_id, *(m.id for m in stored)])
            self.revision = revision
        if found:
            plural = "" if found == 1 else "s"
            self.emit(
                ev.Notice(
                    sid,
                    f"this session changed in another process: {found} new message{plural} "
                    "loaded before going on",
                    "warning",
                )
            )
        return found

    @property
    def turn_id(self) -> int | None:
        """Store id of the running turn, or None between turns."""
        return self._turn_id

    # ------------------------------------------------------------------------------------------------
    def request_messages(self) -> list[Message]:
        """Return the full message list of the next request: system prompt, then the compaction
        summary (when one is in force) in place of the messages it covers, then the rest of the
        history; tool outputs longer than the window allows are trimmed (see paragents.agent.compaction)."""
        limit = tool_output_limit(self.session.context_window)
        return build_request(self.system_prompt(), self.history, self.compaction, limit)

    async def compact(self, focus: str | None = None, *, auto: bool = False) -> CompactionOutcome:
        """Compact the history now (see :meth:`_compact_now`); call it only when
        no tool call is running. Never raises for a failed compaction: it emits a Notice saying why,
        leaves the history and the compaction in force unchanged, and returns ``ok=False`` (``auto``:
        when there is nothing worth compacting, returns quietly without a Notice)."""
        from paragents.store.records import StoreError

        async with self._compact_lock:
            try:
                await self.sync()  # never summarise (or record) a stale copy
                return await self._compact_now(focus, auto=auto)
            except StoreError as exc:
                text = f"compaction failed: {exc}; the history is unchanged"
                self.emit(ev.Notice(self.session.id, text, "error"))
                return CompactionOutcome(False, text)
            except NothingToCompact as exc:
                if auto:
                    return CompactionOutcome(False, str(exc))
                self.emit(ev.Notice(self.session.id, f"not compacted: {exc}", "info"))
                return CompactionOutcome(False, str(exc))
            except CompactionError as exc:
                text = f"compaction failed: {exc}; the history is unchanged"
                self.emit(ev.Notice(self.session.id, text, "error"))
                return CompactionOutcome(False, text)

    async def _compact_now(self, focus: str | None, *, auto: bool) -> CompactionOutcome:
        """Summarise the older part of the history with the session's own model (see
        :func:`paragents.agent.compaction.summarize`), record it in the store and put it in force for
        the next requests (the history list and the store's messages are not changed). Raises
        CompactionError (nothing changed) when there is nothing to compact, the summary fails or the
        store refuses the record."""
        from paragents.store.records import StoreError

        session = self.session
        window = session.context_window
        specs = self.tool_specs()
        before = estimate_messages_tokens(self.request_messages(), specs)
        history = list(self.history)
        summary = await summarize(
            self.client,
            model=session.model,
            label=f"{session.name}/compact",
            history=history,
            state=self.compaction,
            system_prompt=self.system_prompt(),
            specs=specs,
            window=window,
            threshold=self.config.compact_threshold,
            focus=focus,
            auto=auto,
        )
        start, cut = summary.start, summary.cut
        try:
            cost = request_cost(self.config, session.model, summary.usage)
            await self.store.turns.add_usage(
                session.id, None, session.model, summary.usage, estimated=summary.estimated, cost_usd=cost
            )
            upto = upto_message_id(await self.store.messages.load(session.id), history, cut)
            revision = self.revision
            record_id = await self.store.compactions.add(
                session.id, upto, summary.text, expect_revision=revision
            )
            if revision is not None:
                self.revision = revision + 1  # refused above when another process wrote meanwhile
        except StoreError as exc:
            raise CompactionError(f"the compaction could not be recorded: {exc}") from None
        self.compaction = CompactionState(summary.text, cut, first_task(history), record_id)
        after = estimate_messages_tokens(self.request_messages(), specs)
        await self.store.sessions.update(session.id, last_prompt_tokens=after)
        self.emit(ev.Compacted(session.id, cut - start, cut, before, after))
        u = summary.usage
        spend = (getattr(session, "spend", None) or Spend()) + Spend(
            u.prompt_tokens, u.cached_tokens, u.completion_tokens, cost, summary.estimated
        )
        self.emit(ev.UsageUpdated(session.id, session.usage + u, after, window, spend))
        return CompactionOutcome(
            True, f"compacted: {cut - start} messages summarised", cut - start, before, after
        )

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
        await self.prepare_mcp()
        await self.run_pending_compactions()
        window = self.session.context_window
        size = estimate_messages_tokens(self.request_messages(), self.tool_specs())
        if window > 0 and size >= self.config.compact_threshold * window:
            await self.compact(None, auto=True)

    def tool_specs(self) -> list[dict[str, Any]]:
        """Return the tool specs sent with each request ([] when the model is set to chat without tools):
        the built-in tools, then the session's MCP tools."""
        if not self.config.model_settings(self.session.model).tools:
            return []
        return self.tools.specs() + (self.mcp.specs() if self.mcp is not None else [])

    async def prepare_mcp(self) -> None:
        """Start (or find) the MCP servers this session uses and refresh its MCP tools; a project
        server not trusted yet asks first; each new problem is shown once as a Notice."""
        mcp = self.mcp
        if mcp is None or not self.config.model_settings(self.session.model).tools:
            return
        from paragents.agent.approval import ask_server_start

        async def ask(entry: Any) -> Any:
            answer = await ask_server_start(
                self.session,
                self.store,
                self.emit,
                entry.name,
                entry.command_line(),
                str(mcp.pool.project_dir),
                self._turn_id,
            )
            return {"allow_always": "always", "allow_once": "once", "allow_session": "once"}.get(
                answer, "refuse"
            )

        for problem in await mcp.prepare(ask):
            self.emit(ev.Notice(self.session.id, problem, "warning"))

    async def _attach_resources(self, prompt: str) -> str:
        """The prompt with the MCP resources it names as ``@server:uri`` appended (docs/mcp.md)."""
        if self.mcp is None or "@" not in prompt:
            return prompt
        text, problems = await self.mcp.attach(prompt, self.config.max_output_chars)
        for problem in problems:
            self.emit(ev.Notice(self.session.id, problem, "warning"))
        return text

    def _tool(self, name: str) -> Any:
        """The built-in or MCP tool called ``name``, or None."""
        tool = self.tools.get(name)
        if tool is None and self.mcp is not None:
            return self.mcp.get(name)
        return tool

    def _empty_reply_note(self) -> str:
        """The notice for an empty reply: with tools sent, what to try (models that cannot call tools
        often answer a request with tool specs with nothing)."""
        note = "the model returned an empty reply"
        if not self.tool_specs():
            return note + "; try rephrasing the prompt, or another model (/model NAME)"
        model = self.session.model
        return (
            f'{note} to a request with tools. If {model} cannot call tools, untick "The model can call '
            f'tools" in /setup (or set "tools": false for it under "models" in runtime_config.json '
            "and /reload), then send the prompt again"
        )

    def _set_state(self, state: SessionState, detail: str = "") -> None:
        self.emit(ev.SessionStateChanged(self.session.id, state, detail))

    async def _append(self, message: Message, added: list[Message], outcome: str | None = None) -> None:
        """Store ``message`` (refused with HistoryChanged when another process wrote meanwhile), then
        add it to the history and the turn's messages and emit it (a tool result with its outcome)."""
        msg_id = await self.store.messages.append(
            self.session.id, message, turn_id=self._turn_id, outcome=outcome, expect_revision=self.revision
        )
        self._written(msg_id)
        self.history.append(message)
        shown = {**message, "outcome": outcome or "ok"} if message.get("role") == "tool" else message
        added.append(shown)
        self.emit(ev.MessageAdded(self.session.id, shown))

    def _written(self, msg_id: int) -> None:
        """Note one history write of this copy (the store's revision grew by one)."""
        self.last_message_id = max(self.last_message_id, msg_id)
        if self.revision is not None:
            self.revision += 1

    async def _append_partial(self, msg: Message, added: list[Message]) -> None:
        """Store a partial reply (kept, marked incomplete, never sent back) and report it."""
        msg_id = await self.store.messages.append(
            self.session.id, msg, turn_id=self._turn_id, complete=False, expect_revision=self.revision
        )
        self._written(msg_id)
        shown = {**msg, "incomplete": True}
        added.append(shown)
        self.emit(ev.MessageAdded(self.session.id, shown))

    async def before_turn(self, prompt: str) -> None:
        """Called before a queued ``prompt`` starts; may raise ``paragents.scheduler.PromptHeld`` to put
        it back in its queue (an external agent waiting for a new agent session). Nothing here."""

    async def run_turn(self, prompt: str, resume: ApprovalRecord | None = None) -> TurnResult:
        """Run one turn for the user text ``prompt``; return how it ended.

        ``resume``: an approval a crashed process left pending (``paragents.sessions.resume``). The turn
        then continues that interrupted turn instead of sending a prompt: the call (whose stored result
        says "interrupted") is re-issued as a new assistant tool call, asked again under the same
        approval id (or run on the answer given meanwhile), and the loop goes on from its result.

        Never raises for endpoint or tool failures (they end the turn as failed, with the error);
        re-raises asyncio.CancelledError after recording the turn as cancelled."""
        from paragents.store.records import HistoryChanged, StoreError

        sid = self.session.id
        added: list[Message] = []
        total = Usage()
        try:
            await self.sync()  # another process may have written since this copy was loaded
            self._turn_id = await self.store.turns.start(sid, prompt)
        except StoreError as exc:
            self.emit(ev.TurnStarted(sid, prompt))
            return await self._store_failed(exc, added, total)
        self._set_state(SessionState.RUNNING)
        self.emit(ev.TurnStarted(sid, prompt))
        pending_calls: list[ToolCall] = []
        partial = _Partial()
        try:
            if resume is not None:
                pending_calls = [await self._reissue(resume, added)]
                content, outcome = await self._run_call(pending_calls[0], None, resume)
                await self._append(tool_message(pending_calls[0].id, content), added, outcome)
                pending_calls = []
            else:
                prompt = await self._attach_resources(prompt)
                try:
                    await self._append(user_message(prompt), added)
                except HistoryChanged:  # written between the sync and now: reload once more
                    await self.sync()
                    await self._append(user_message(prompt), added)
            self.loop_guard.reset(new_turn=True)
            if self.budget is not None:
                self.budget.start_clock()
            for _round in range(self.config.max_tool_rounds):
                partial = _Partial()
                await self._before_request()
                await self._hold_while_unreachable()
                stopped = await self._hold_at_caps()
                if stopped is not None:
                    kind = LOOP_KIND if stopped.level == "loop" else BUDGET_KIND
                    text = f"stopped at a pause: {stopped.reason}"
                    return await self._finish(TurnStatus.FAILED, added, total, text, kind)
                reply = await self._stream(partial, added)
                if reply is None:
                    return await self._finish(TurnStatus.FAILED, added, total, partial.error, partial.kind)
                nameless = [c for c in reply.tool_calls if not c.name.strip()]
                if nameless:
                    error = await self._refuse_nameless(reply, nameless)
                    return await self._finish(TurnStatus.FAILED, added, total, error, "protocol")
                await self._append(reply.to_message(), added)
                total = total + await self._account(reply)
                partial = _Partial()  # accounted: a cancel from here on has no stream to keep
                if not reply.tool_calls and not reply.content:
                    self.emit(ev.Notice(sid, self._empty_reply_note(), "warning"))
                if not reply.tool_calls:
                    return await self._finish(TurnStatus.COMPLETED, added, total, question=question_of(reply))
                pending_calls = list(reply.tool_calls)
                ran: list[tuple[ToolCall, str]] = []
                wrote = False
                while pending_calls:
                    call = pending_calls[0]
                    tree = await self._tree_state(call)
                    content, outcome = await self._run_call(call, reply.finish_reason)
                    ran.append((call, content))
                    wrote = wrote or (call.name in WRITE_TOOLS and outcome == "ok")
                    if tree is not None and not wrote:  # a command that changed files is not idle
                        wrote = tree[0] is None or tree[0] != await self._tree_state(call, after=True)
                    result = tool_message(call.id, content)
                    try:
                        await self._append(result, added, outcome)
                    except HistoryChanged:  # taken over meanwhile: keep this result, right after its call
                        await self.store.messages.append_late_tool_result(
                            sid, result, outcome=outcome, turn_id=self._turn_id
                        )
                        raise
                    pending_calls.pop(0)
                self.loop_guard.record(ran, wrote)
            self.emit(
                ev.Notice(
                    sid,
                    f"stopped after {self.config.max_tool_rounds} model requests (max_tool_rounds); "
                    "send another prompt to continue",
                    "warning",
                )
            )
            return await self._finish(TurnStatus.COMPLETED, added, total)
        except StoreError as exc:
            return await self._store_failed(exc, added, total)
        except asyncio.CancelledError:
            await asyncio.shield(self._on_cancel(partial, pending_calls, added, total))
            raise

    async def fail_internal(self, text: str) -> TurnResult:
        """End the running turn as failed with ``error_kind`` "internal" (a bug escaped the loop):
        its turn row is finished and the session shows the failure instead of running forever."""
        return await self._finish(TurnStatus.FAILED, [], Usage(), text, "internal")

    async def fail_on_store(self, exc: Exception) -> TurnResult:
        """End a turn that failed on the store before :meth:`run_turn` began it (see ``_store_failed``)."""
        return await self._store_failed(exc, [], Usage())

    async def _store_failed(self, exc: Exception, added: list[Message], total: Usage) -> TurnResult:
        """End the turn as failed with ``error_kind`` "store": the store could not be written (a lock
        held too long, a full disk...) or refused a write because another process changed the
        session meanwhile (then the history is reloaded so the next turn starts from the truth)."""
        from paragents.store.records import HistoryChanged, StoreError

        if isinstance(exc, HistoryChanged):
            text = (
                "another process wrote to this session while this turn ran (it was taken over), so "
                "this turn stopped without writing more; what both wrote is kept in order. Send the "
                "prompt again if it is still needed"
            )
            with contextlib.suppress(StoreError):
                await self.sync()
        else:
            text = str(exc)
            if "nothing more could be saved" not in text:
                text += "; the turn stopped (what was saved before is kept): check the disk and that "
                text += "no other program holds the database, then send the prompt again"
        return await self._finish(TurnStatus.FAILED, added, total, text, STORE_KIND)

    async def _on_cancel(
        self, partial: _Partial, pending: list[ToolCall], added: list[Message], total: Usage
    ) -> None:
        from paragents.store.records import StoreError

        sid = self.session.id
        try:
            msg = _partial_message(partial.text, partial.reasoning)
            if msg is not None:
                await self._append_partial(msg, added)
                self.emit(
                    ev.Notice(sid, "cancelled: the partial reply was kept (marked incomplete)", "warning")
                )
            if partial.sent:  # the request was sent: count its tokens (estimated; no usage came back)
                reply: Message = {"role": "assistant", "content": partial.text}
                prompt_est = estimate_messages_tokens(self.request_messages(), self.tool_specs())
                completion_est = estimate_messages_tokens([reply]) if partial.text or partial.reasoning else 0
                usage = Usage(prompt_est, completion_est, prompt_est + completion_est)
                total = total + await self._record_usage(usage, prompt_est + completion_est, estimated=True)
            for call in pending:
                await self._append(tool_message(call.id, CANCELLED_RESULT), added, "cancelled")
                self.emit(ev.ToolCallFinished(sid, call, "cancelled", CANCELLED_RESULT))
        except StoreError as exc:
            self.emit(ev.Notice(sid, f"cancelled, but not everything could be saved: {exc}", "error"))
        await self._finish(TurnStatus.CANCELLED, added, total, "cancelled by the user", "cancelled")

    async def _finish(
        self,
        status: TurnStatus,
        added: list[Message],
        total: Usage,
        error: str | None = None,
        kind: str | None = None,
        *,
        question: str | None = None,
    ) -> TurnResult:
        from paragents.store.records import StoreError

        sid = self.session.id
        seconds = self.budget.take_turn_seconds() if self.budget is not None else None
        if self._turn_id is not None:
            try:
                await self.store.turns.finish(self._turn_id, status.value, error, run_seconds=seconds)
            except StoreError as exc:  # the store keeps it and writes it with its next turn or close
                if kind != STORE_KIND:
                    self.emit(ev.Notice(sid, f"the end of this turn could not be saved yet: {exc}", "error"))
        self._turn_id = None
        state = SessionState.FAILED if status is TurnStatus.FAILED else SessionState.IDLE
        self._set_state(state, error or "")
        if question is not None:
            self.emit(ev.QuestionAsked(sid, question))
        result = TurnResult(status=status, error=error, error_kind=kind, messages=added, usage=total)
        self.emit(ev.TurnFinished(sid, status.value, error, kind, result))
        return result

    # -- budgets and the loop guard ------------------------------------------------------------------
    async def _tree_state(self, call: ToolCall, *, after: bool = False) -> Any:
        """For a ``run_command`` call while the idle guard is on: the working tree's fingerprint
        (agent/tree_state.py) before the call as ``(fingerprint,)``, or after it as the bare
        fingerprint; None when not needed (another tool, the guard off)."""
        if call.name not in COMMAND_TOOLS or not self.loop_guard.idle_requests:
            return None
        if self._execution() is not None:  # its files are elsewhere: a command counts as a change
            return None if after else (None,)
        from paragents.agent.tree_state import fingerprint

        state = await asyncio.to_thread(fingerprint, Path(self.session.workdir))
        return state if after else (state,)

    async def _hold_at_caps(self) -> Breach | None:
        """Before a request: while the loop guard has tripped or a budget would be crossed, pause the
        turn (state BUDGET, a ``BudgetPaused`` whose Future the user answers) and wait. Return None
        to send the request, or the breach when the user chose to stop."""
        while True:
            breach = self.loop_guard.tripped
            if breach is None and self.budget is not None and self.budget.active():
                estimate = estimate_messages_tokens(self.request_messages(), self.tool_specs())
                breach = await self.budget.check(self.session.model, estimate)
            if breach is None:
                return None
            answer = await self._pause(breach)
            if answer == "stop":
                return breach
            if breach.level == "loop":
                self.loop_guard.reset()
                return None
            if answer == "one_more":
                return None

    def _execution(self) -> Execution | None:
        return self.execution() if self.execution is not None else None

    async def _hold_while_unreachable(self) -> None:
        """Before a request: while the session's lane (a container or Pod) does not answer, pause the
        turn (state PAUSED, the reason as detail) until it answers again; its clock stops meanwhile."""
        remote = self._execution()
        if remote is None or remote.answering:
            return
        if self.budget is not None:
            self.budget.stop_clock()
        self._set_state(SessionState.PAUSED, remote.why or f"{remote.where} does not answer")
        await remote.wait_answering()
        if self.budget is not None:
            self.budget.start_clock()
        self._set_state(SessionState.RUNNING)

    async def _pause(self, breach: Breach) -> ev.BudgetAnswer:
        """Hold the turn at ``breach`` until the user answers (raise the cap, one more, stop)."""
        sid = self.session.id
        reply: asyncio.Future[ev.BudgetAnswer] = asyncio.get_running_loop().create_future()
        if self.budget is not None:
            self.budget.stop_clock()
        self._set_state(SessionState.BUDGET, breach.reason)
        self.emit(
            ev.BudgetPaused(sid, breach.level, breach.kind, breach.spent, breach.cap, breach.reason, reply)
        )
        answer: str = "cancelled"
        try:
            answer = await reply
            return answer
        finally:
            self.emit(ev.BudgetResolved(sid, answer))
            if answer != "stop" and answer != "cancelled":
                if self.budget is not None:
                    self.budget.start_clock()
                self._set_state(SessionState.RUNNING)

    # -- streaming ------------------------------------------------------------------------------------
    async def _stream(self, partial: _Partial, added: list[Message]) -> AssembledReply | None:
        from paragents.llm import LLMError

        sid = self.session.id
        awaiting = False

        def on_delta(delta: Any) -> None:
            nonlocal awaiting
            partial.sent = True  # a reply is coming: the server took the request
            if awaiting:  # the first token of the reply (text, reasoning or a tool call)
                awaiting = False
                self.emit(ev.AwaitingReply(sid, False))
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
            # the attempt failed (no connection, 429, 5xx): nothing of it is counted; a cancel before
            # the next attempt's first token counts nothing either (a server refusing it bills nothing)
            partial.sent = False
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
        awaiting = True
        partial.sent = True
        self.emit(ev.AwaitingReply(sid, True))
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
            msg = _partial_message(text, reasoning)
            if msg is not None:
                await self._append_partial(msg, added)
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
        finally:
            if awaiting:  # ended (empty reply, error, cancel) before any token
                awaiting = False
                self.emit(ev.AwaitingReply(sid, False))

    async def _refuse_nameless(self, reply: AssembledReply, nameless: list[ToolCall]) -> str:
        """Keep a reply holding a tool call whose function name never arrived out of the history.

        Such a call cannot be answered in a way every provider accepts (an empty name, or one made
        up here, is rejected by strict servers in the next request), so none of the reply's calls
        run: its text is stored marked incomplete (never sent back), like a reply that broke off,
        and the turn fails with the returned error."""
        sid = self.session.id
        msg = _partial_message(reply.content or "", reply.reasoning or "")
        if msg is not None:
            await self.store.messages.append(sid, msg, turn_id=self._turn_id, complete=False)
            self.emit(ev.MessageAdded(sid, {**msg, "incomplete": True}))
        first = nameless[0]
        return (
            f"the model sent a tool call without a function name (id {first.id}, arguments "
            f"{_capped(first.arguments, 200)!r}); no call of that reply was run and it was not sent "
            "back to the model; send the prompt again"
        )

    async def _account(self, reply: AssembledReply) -> Usage:
        """Record usage (the server's, else a local estimate) and the context size of the next request;
        return the usage counted for this request (tokens)."""
        usage, estimated = counted_usage(
            reply.usage,
            lambda: estimate_messages_tokens(self.request_messages()[:-1], self.tool_specs()),
            lambda: estimate_messages_tokens([self.history[-1]]) if self.history else 0,
        )
        if estimated:
            context = estimate_messages_tokens(self.request_messages(), self.tool_specs())
        else:
            context = usage.total_tokens or (usage.prompt_tokens + usage.completion_tokens)
        return await self._record_usage(usage, context, estimated=estimated)

    async def _record_usage(self, usage: Usage, context: int, *, estimated: bool) -> Usage:
        """Store ``usage`` for the turn and emit the session's new totals and next context size."""
        sid = self.session.id
        model = self.session.model
        cost = request_cost(self.config, model, usage)
        await self.store.turns.add_usage(sid, self._turn_id, model, usage, estimated=estimated, cost_usd=cost)
        spend = getattr(self.session, "spend", None) or Spend()
        spend = spend + Spend(
            usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, cost, estimated
        )
        total = self.session.usage + usage
        self.emit(ev.UsageUpdated(sid, total, context, self.session.context_window, spend))
        return usage

    # -- tools -----------------------------------------------------------------------------------------
    async def _reissue(self, resume: ApprovalRecord, added: list[Message]) -> ToolCall:
        """Store an assistant message re-issuing the call of a resumed approval (a new call id: the old
        one has its "interrupted" result) and return that call."""
        old = resume.call
        call = ToolCall(
            f"{old.get('id') or 'call'}-resumed",
            str(old.get("name") or resume.tool),
            str(old.get("arguments") or "{}"),
        )
        await self._append({"role": "assistant", "content": "", "tool_calls": [call.to_openai()]}, added)
        return call

    async def _run_call(
        self, call: ToolCall, finish_reason: str | None, resume: ApprovalRecord | None = None
    ) -> tuple[str, str]:
        """Check, ask, run one tool call; return the text of its tool message and its outcome (ok,
        error, denied or skipped). Never raises but CancelledError (and StoreError)."""
        sid = self.session.id
        tool = self._tool(call.name)
        if tool is None:
            from paragents.tools.registry import unknown_tool_message

            msg = unknown_tool_message(call.name)
            if self.mcp is not None and self.mcp.tools:
                msg += ", " + ", ".join(self.mcp.tools)
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg, "error"
        try:
            args = parse_arguments(call.arguments)
        except ValueError as exc:
            msg = f"error: {_capped(str(exc))}; the call was not run"
            if finish_reason == "length":
                msg += " (the reply was truncated: finish_reason=length); send the call again, complete"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg, "error"
        try:
            args = tool.validate(args)
        except ValueError as exc:
            msg = f"error: bad arguments for {call.name}: {_capped(str(exc))}"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg, "error"
        summary = tool.summarize(args)
        sandbox, status = self._sandbox_for(tool.family)
        if status is not None and status.state == "refused":
            self.emit(ev.ToolCallFinished(sid, call, "error", status.message, sandboxed=False))
            return status.message, "error"
        sandboxed = None if status is None else status.active
        approval = await approve(
            session=self.session,
            policy=self.policy,
            store=self.store,
            emit=self.emit,
            call=call,
            tool_name=tool.name,
            args=args,
            summary=summary,
            sandbox=sandbox,
            sandboxed=sandboxed,
            preview=lambda: self._preview(tool.name, args),
            turn_id=self._turn_id,
            resume=resume,
            read_only=bool(getattr(tool, "read_only", False)),
            schema=tool.parameters if tool.name.startswith("mcp__") else None,
        )
        if not approval.allowed:
            self.emit(ev.ToolCallFinished(sid, call, "denied", approval.why))
            return approval.why, "denied"
        if self.preflight is not None and not getattr(tool, "read_only", False):
            skip = await self.preflight(sid, call, args)
            if skip is not None:
                self.emit(ev.ToolCallFinished(sid, call, "skipped", skip))
                return skip, "skipped"
        self.emit(ev.ToolCallStarted(sid, call, summary, sandboxed))
        from paragents.tools.base import ToolContext

        ctx = ToolContext(
            workdir=self.session.workdir,
            session_id=sid,
            command_timeout=self.config.command_timeout,
            max_output_chars=self.config.max_output_chars,
            on_read=self.on_read,
            on_write=self.on_write,
            sandbox=sandbox,
            env=dict(getattr(self.session, "lane_env", None) or {}),
            read_check=read_filter(self.policy, self.session),  # grep/glob/list_dir: Read rules per path
            execution=self._execution(),
        )
        try:
            result = await tool.run(args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not kill the loop
            msg = f"error: {call.name} failed unexpectedly: {_capped(f'{type(exc).__name__}: {exc}')}"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg, "error"
        outcome: Literal["ok", "error"] = "error" if result.is_error else "ok"
        ran_sandboxed = result.meta.get("sandboxed") if sandbox is not None else None
        self.emit(ev.ToolCallFinished(sid, call, outcome, result.content, result.diff, ran_sandboxed))
        return result.content, outcome

    def sandbox_config(self) -> SandboxConfig:
        """Return how this session's commands are confined: the config's ``sandbox`` settings with the
        session's ``/sandbox`` mode (``session.sandbox_mode``), its writable root
        (``session.sandbox_root``, e.g. a lane's worktree; else the working directory) and the paths
        of the Read deny rules to hide."""
        from paragents.tools.sandbox import SandboxConfig

        settings = self.config.sandbox
        return SandboxConfig(
            mode=getattr(self.session, "sandbox_mode", None) or settings.mode,
            network=settings.network,
            writable=settings.writable,
            hidden_rules=self.policy.read_deny_patterns(self.session.workdir),
            root=getattr(self.session, "sandbox_root", None),
            auto_allow=settings.auto_allow,
            bwrap=settings.bwrap,
            hidden=settings.hidden,
            env_allow=settings.env_allow,
            session=self.session.id,
            home_visible=settings.home_visible,
            visible=tuple(str(d) for d in self.policy.additional_dirs),
        )

    def _sandbox_for(self, family: str) -> tuple[SandboxConfig | None, SandboxStatus | None]:
        """For a command (``bash`` family): the sandbox and its status, warning once per session when
        it runs unconfined in mode "auto"; (None, None) for other tools."""
        if family != "bash":
            return None, None
        from paragents.tools.sandbox import SandboxStatus, check

        sandbox = self.sandbox_config()
        remote = self._execution()
        if remote is not None:  # the lane's container/Pod is the sandbox: bubblewrap is not used there
            return sandbox, SandboxStatus(
                "on" if remote.confined else "off", f"commands run in {remote.where}"
            )
        status = check(sandbox)
        if status.state == "unconfined" and not self._sandbox_warned:
            self._sandbox_warned = True
            self.emit(ev.Notice(self.session.id, status.message, "warning"))
        return sandbox, status

    async def _preview(self, tool_name: str, args: dict[str, Any]) -> CallPreview | None:
        """Return the tool's preview of the call (what it will do), computed in a thread; a preview
        that fails becomes a note (the ask is still shown)."""
        tool = self._tool(tool_name)
        if tool is None:
            return None
        remote = self._execution()
        try:
            if remote is not None:  # from the lane's own files, never from the worktree here
                from paragents.tools.base import ToolContext

                ctx = ToolContext(workdir=self.session.workdir, execution=remote)
                shown: CallPreview | None = await remote.preview_tool(tool, args, ctx)
                return shown
            return await asyncio.to_thread(tool.preview, args, self.session.workdir)
        except Exception as exc:
            return CallPreview("note", problem=f"no preview: {_capped(f'{type(exc).__name__}: {exc}', 200)}")


@dataclass
class _Partial:
    """Text streamed so far in the current request (kept when the stream fails or is cancelled)."""

    text: str = ""
    reasoning: str = ""
    error: str | None = None
    kind: str | None = None
    sent: bool = False
    """True once the request was handed to the client (its tokens count even when it is cancelled),
    False again after a failed attempt until the retry's first token arrives."""
